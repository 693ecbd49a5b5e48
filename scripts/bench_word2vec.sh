#!/usr/bin/env bash
# word2vec speed, memory and quality, ours and gensim's, side by side in one run on the same
# file and settings (experiments/configs/word2vec.toml): skip-gram and CBOW, 1 and 2 threads.
# Writes results/bench/word2vec.csv. Needs gensim 4.4 (`pip install gensim==4.4.0`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for model in sgns cbow; do
  for threads in 1 2; do
    "$bin" --exp bench-word2vec --model "$model" --threads "$threads" --out "$tmp"
    python3 scripts/gensim_word2vec.py --model "$model" --threads "$threads" --out "$tmp/bench/word2vec-gensim-$model-t$threads.csv"
  done
done
mkdir -p results/bench
files=("$tmp"/bench/word2vec-*.csv)
{ head -n 1 "${files[0]}"; for f in "${files[@]}"; do tail -n +2 "$f"; done; } > results/bench/word2vec.csv.tmp
mv results/bench/word2vec.csv.tmp results/bench/word2vec.csv
column -s, -t < results/bench/word2vec.csv | cut -c1-220
