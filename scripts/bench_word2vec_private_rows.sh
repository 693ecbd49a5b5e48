#!/usr/bin/env bash
# word2vec on two threads with and without private rows: our three models (skip-gram's pair
# order and window update, CBOW) with every row shared (private_rows = private_input_rows = 0,
# word2vec.c's and gensim's hogwild), with the output matrix's frequent rows private
# (`private_rows` at the benchmark config's value, `private_input_rows` = 0), and with the
# input matrix's too (the benchmark config as it is); seeds 1-3 (SEEDS="..." to change), the
# three settings run in turn within each (seed, model), each going first, second and third once
# per model over the three seeds, so that neither the machine's drift nor a run's position falls
# on one setting.
# Writes results/bench/word2vec-private-rows.csv with the CPU named in each row (and the order
# the runs went in, results/bench/word2vec-private-rows-order.csv), and prints
# each setting's median speed, its ratio to every row shared, quality and peak RSS.
# Run it on a quiet machine: every other process shares the cores and the caches.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The benchmark config with every `private_rows` line set to 0 and with every
# `private_input_rows` line set to 0: the other arms. Both models' tables ([sgns], [cbow]) must
# set both above 0 (one line each), or two arms would be one.
config=experiments/configs/word2vec.toml
for key in private_rows private_input_rows; do
  [ "$(grep -cE "^$key *= *[1-9][0-9]* *\$" "$config")" = 2 ] || {
    echo "$config: [sgns] and [cbow] must each set $key above 0 (one line each)" >&2; exit 1; }
done
output="$tmp/output-rows.toml"
sed -E 's/^private_input_rows *=.*/private_input_rows = 0/' "$config" > "$output"
shared="$tmp/shared.toml"
sed -E 's/^private_rows *=.*/private_rows = 0/' "$output" > "$shared"
[ "$(grep -c '^private_input_rows = 0$' "$output")" = 2 ] && [ "$(grep -c '^private_rows = 0$' "$shared")" = 2 ] || {
  echo "could not set the rows to 0" >&2; exit 1; }
arms=("$shared" "$output" "$config")
# Seed i and model j start at arm (i + j) mod 3: over three seeds each arm goes first, second
# and third once for every model. The order each run went in is kept beside the CSV.
si=0
for seed in ${SEEDS:-1 2 3}; do
  mi=0
  for model in sgns sgns-window cbow; do
    for k in 0 1 2; do
      config_file="${arms[$(((si + mi + k) % 3))]}"
      config_name=$(basename "$config_file" .toml)
      out="$tmp/$config_name"
      "$bin" --exp bench-word2vec --model "$model" --threads 2 --seed "$seed" --config "$config_file" --out "$out" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
      echo "$seed,$model,$config_name,$((k + 1))" >> "$tmp/order.csv"
    done
    mi=$((mi + 1))
  done
  si=$((si + 1))
done
mkdir -p results/bench
python3 scripts/bench_csv.py results/bench/word2vec-private-rows.csv "$tmp"/*/bench/word2vec-*.csv
{ echo "seed,model,arm,position"; cat "$tmp/order.csv"; } > results/bench/word2vec-private-rows-order.csv
python3 - <<'PY'
import csv, statistics as st
rows = list(csv.DictReader(open("results/bench/word2vec-private-rows.csv")))
g = {}
for r in rows:
    g.setdefault((r["model"], int(r["private_rows"]), int(r["private_input_rows"])), []).append(r)
med = {k: st.median(float(r["raw_words_per_cpu_s"]) for r in rs) for k, rs in g.items()}
base = {m: v for (m, p, q), v in med.items() if p == q == 0}
out_only = {m: v for (m, p, q), v in med.items() if p > 0 and q == 0}
span = lambda rs, k: f"{min(float(r[k]) for r in rs):.3f}-{max(float(r[k]) for r in rs):.3f}"
print(f"{'model':12} {'out':>5} {'in':>5} {'words/CPU-s (median, min-max)':>31} {'x shared':>8} {'x out':>6} {'analogy':>13} {'WS-353':>13} {'SimLex':>13} {'peak RSS MiB':>13}")
for (m, p, q), rs in sorted(g.items()):
    v = [float(r["raw_words_per_cpu_s"]) for r in rs]
    print(f"{m:12} {p:>5} {q:>5} {st.median(v):>12.0f} ({min(v):.0f}-{max(v):.0f}) {st.median(v) / base[m]:>8.2f} {st.median(v) / out_only[m]:>6.2f} {span(rs, 'analogy_3cosadd'):>13} {span(rs, 'ws353_all_spearman'):>13} {span(rs, 'simlex999_spearman'):>13} {span(rs, 'peak_rss_mib'):>13}")
PY
