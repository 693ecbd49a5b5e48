#!/usr/bin/env bash
# Regenerates every CSV and figure of the paper from scratch (experiments/configs/paper.toml:
# 5 transformer variants x 3 seeds, the untrained control, word2vec SGNS and CBOW x 3 seeds),
# the backend comparison, results/REPORT.md and the README's findings, and prints the time it
# took. From scratch means without the run cache (results/runs/) and without the kept
# measurements (results/measurements/, committed: git restores them). `--keep-runs` keeps both,
# so an interrupted reproduction continues where it stopped and only what is missing is trained
# or measured; any other arguments go to the experiments binary (e.g. `--backend wgpu`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"

keep=0
args=()
for a in "$@"; do
  if [ "$a" = "--keep-runs" ]; then keep=1; else args+=("$a"); fi
done

cargo build -p experiments
start=$(date +%s)
if [ "$keep" = 0 ]; then
  rm -rf results/runs results/measurements
fi
cargo run -q -p experiments -- --exp all "${args[@]}"
secs=$(( $(date +%s) - start ))
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || echo unknown)
echo "reproduce: ${secs} s ($(( secs / 60 )) min) on ${cpu}, $(nproc) cores"
