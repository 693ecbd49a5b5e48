#!/usr/bin/env bash
# One training alone vs N side by side (what `--jobs N` does): models per hour of the paper's
# transformer (train.toml's shape, 32 x 64 batches) on this machine, measured in one run,
# alternating, `reps` times. Writes results/bench/<isa>/jobs.csv (isa: avx512 or avx2) with the
# CPU and whether it has AVX-512, and prints the ratio; the faster setting is what the study
# should use.
# Usage: scripts/bench_jobs.sh [steps] [jobs] [reps]   (defaults 150, 2, 2; about 10 min)
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-150}"
jobs="${2:-2}"
reps="${3:-2}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The paper's shape; a held-out pass of 2 batches at the end only, so the time is training.
sed -e "s/^steps = .*/steps = $steps/" -e "s/^eval_every = .*/eval_every = $steps\neval_batches = 2/" \
    -e "s/^checkpoint_every = .*/checkpoint_every = $steps/" -e "s/^warmup_steps = .*/warmup_steps = $((steps / 10))/" experiments/configs/train.toml > "$tmp/bench.toml"
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
avx512=$(grep -qw avx512f /proc/cpuinfo && echo true || echo false)
cores=$(nproc)
isa=$([ "$avx512" = true ] && echo avx512 || echo avx2)
mkdir -p "results/bench/$isa"
out="results/bench/$isa/jobs.csv.tmp"
echo "cpu,avx512,cores,steps,jobs,rep,wall_s,models_per_hour,tokens_per_s" > "$out"
tokens=$((steps * 32 * 64))
run() { # $1 = jobs, $2 = rep
  local t0 t1 pids=()
  rm -rf "$tmp/runs-$1-$2"
  t0=$(date +%s.%N)
  for j in $(seq 1 "$1"); do
    "$bin" --exp train --config "$tmp/bench.toml" --seed "$j" --out "$tmp/runs-$1-$2/$j" > "$tmp/log-$1-$2-$j" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(date +%s.%N)
  python3 - "$1" "$2" "$t0" "$t1" <<PY >> "$out"
import sys
jobs, rep, t0, t1 = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
wall = t1 - t0
print(f'"$cpu",$avx512,$cores,$steps,{jobs},{rep},{wall:.1f},{jobs * 3600 / wall:.2f},{jobs * $tokens / wall:.0f}')
PY
  tail -1 "$out"
}
for rep in $(seq 1 "$reps"); do
  run 1 "$rep"
  run "$jobs" "$rep"
done
mv "$out" "results/bench/$isa/jobs.csv"
python3 - "results/bench/$isa/jobs.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(int(r["jobs"]), []).append(float(r["models_per_hour"]))
one = statistics.median(by[1])
for j, v in sorted(by.items()):
    print(f"{j} side by side: {statistics.median(v):.2f} models/hour (min {min(v):.2f}, max {max(v):.2f}); ratio to one alone {statistics.median(v) / one:.2f}")
PY
