#!/usr/bin/env bash
# word2vec on two threads with and without private output rows (`private_rows`): our three
# models (skip-gram's pair order and window update, CBOW) at private_rows 0 (every row shared,
# word2vec.c's and gensim's hogwild) and at the benchmark config's value, seeds 1-3 (SEEDS="..."
# to change), the two settings alternated run by run, each going first in every other pair, so
# that neither the machine's drift nor going first falls on one setting.
# Writes results/bench/word2vec-private-rows.csv with the CPU named in each row, and prints
# each setting's median speed, its ratio to private_rows = 0, quality and peak RSS.
# Run it on a quiet machine: every other process shares the cores and the caches.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The benchmark config with every `private_rows` line set to 0: the other arm. Both models'
# tables ([sgns], [cbow]) must set a value above 0, or the two arms would be one.
config=experiments/configs/word2vec.toml
[ "$(grep -cE '^private_rows *= *[1-9][0-9]* *$' "$config")" = 2 ] || {
  echo "$config: [sgns] and [cbow] must each set private_rows above 0 (one line each)" >&2; exit 1; }
shared="$tmp/shared.toml"
sed -E 's/^private_rows *=.*/private_rows = 0/' "$config" > "$shared"
[ "$(grep -c '^private_rows = 0$' "$shared")" = 2 ] || { echo "could not set private_rows = 0" >&2; exit 1; }
pair=0
for seed in ${SEEDS:-1 2 3}; do
  for model in sgns sgns-window cbow; do
    pair=$((pair + 1))
    order=("$shared" "$config")
    [ $((pair % 2)) = 0 ] && order=("$config" "$shared")
    for config_file in "${order[@]}"; do
      config_name=$(basename "$config_file" .toml)
      out="$tmp/$config_name"
      "$bin" --exp bench-word2vec --model "$model" --threads 2 --seed "$seed" --config "$config_file" --out "$out" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    done
  done
done
mkdir -p results/bench
python3 scripts/bench_csv.py results/bench/word2vec-private-rows.csv "$tmp"/*/bench/word2vec-*.csv
python3 - <<'PY'
import csv, statistics as st
rows = list(csv.DictReader(open("results/bench/word2vec-private-rows.csv")))
g = {}
for r in rows:
    g.setdefault((r["model"], int(r["private_rows"])), []).append(r)
base = {m: st.median(float(r["raw_words_per_cpu_s"]) for r in rs) for (m, p), rs in g.items() if p == 0}
span = lambda rs, k: f"{min(float(r[k]) for r in rs):.3f}-{max(float(r[k]) for r in rs):.3f}"
print(f"{'model':12} {'private':>7} {'words/CPU-s (median, min-max)':>32} {'x shared':>8} {'analogy':>13} {'WS-353':>13} {'SimLex':>13} {'peak RSS MiB':>13}")
for (m, p), rs in sorted(g.items()):
    v = [float(r["raw_words_per_cpu_s"]) for r in rs]
    print(f"{m:12} {p:>7} {st.median(v):>12.0f} ({min(v):.0f}-{max(v):.0f}) {st.median(v) / base[m]:>8.2f} {span(rs, 'analogy_3cosadd'):>13} {span(rs, 'ws353_all_spearman'):>13} {span(rs, 'simlex999_spearman'):>13} {span(rs, 'peak_rss_mib'):>13}")
PY
