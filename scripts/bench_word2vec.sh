#!/usr/bin/env bash
# word2vec speed, memory and quality, ours and gensim's, side by side in one run on the same
# file and settings (experiments/configs/word2vec.toml): skip-gram in word2vec.c's pair order
# (sgns) and in HogBatch's window update (sgns-window), CBOW, gensim's skip-gram and CBOW; 1 and 2
# threads; seeds 1-3 (SEEDS="..." to change), each (implementation, model, threads) run once per
# seed in turn, so that speed and quality come with a spread. Writes results/bench/word2vec.csv
# with the CPU named in each row. Needs gensim 4.4 (`pip install gensim==4.4.0`) in $PYTHON
# (default python3; .ci/run's venv has it: PYTHON=~/.cache/embedlab/gensim-venv/bin/python).
# Run it on a quiet machine: every other process shares the cores and the caches.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for seed in ${SEEDS:-1 2 3}; do
  for threads in 1 2; do
    for model in sgns sgns-window cbow; do
      "$bin" --exp bench-word2vec --model "$model" --threads "$threads" --seed "$seed" --out "$tmp" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    done
    for model in sgns cbow; do
      "${PYTHON:-python3}" scripts/gensim_word2vec.py --model "$model" --threads "$threads" --seed "$seed" --out "$tmp/bench/word2vec-gensim-$model-t$threads-s$seed.csv"
    done
  done
done
mkdir -p results/bench
# One CSV from the runs' files, the CPU named in each row.
python3 scripts/bench_csv.py results/bench/word2vec.csv "$tmp"/bench/word2vec-*.csv
python3 - <<'PY'
import csv, statistics as st
rows = list(csv.DictReader(open("results/bench/word2vec.csv")))
g = {}
for r in rows:
    g.setdefault((r["implementation"], r["model"], r["threads"]), []).append(r)
gensim = {(m, t): st.median(float(r["raw_words_per_cpu_s"]) for r in rs) for (i, m, t), rs in g.items() if i == "gensim"}
print(f"{'implementation':14} {'model':12} {'thr':>3} {'words/CPU-s (median, min-max)':>34} {'x gensim':>8} {'analogy':>15} {'WS-353':>15} {'SimLex':>15}")
for (i, m, t), rs in sorted(g.items()):
    v = [float(r["raw_words_per_cpu_s"]) for r in rs]
    ref = gensim.get(("sgns" if m.startswith("sgns") else m, t))
    span = lambda k: f"{min(float(r[k]) for r in rs):.3f}-{max(float(r[k]) for r in rs):.3f}"
    print(f"{i:14} {m:12} {t:>3} {st.median(v):>12.0f} ({min(v):.0f}-{max(v):.0f}) {st.median(v) / ref:>8.2f} {span('analogy_3cosadd'):>15} {span('ws353_all_spearman'):>15} {span('simlex999_spearman'):>15}")
PY
