#!/usr/bin/env bash
# Regenerates every CSV and figure of the paper from scratch (experiments/configs/paper.toml:
# 5 transformer variants x 3 seeds, the untrained control, word2vec SGNS and CBOW x 3 seeds),
# the backend comparison, results/REPORT.md and the README's findings, and prints the time it
# took. From scratch means without the run cache (results/runs/) and without the kept
# measurements (results/measurements/, committed: git restores them). `--keep-runs` keeps both,
# so an interrupted reproduction continues where it stopped and only what is missing is trained
# or measured; `--dynamics` also runs the fair-budget study followed through training
# (`--exp dynamics`, hours: README; its run cache and measurements are under results/fair-budget/);
# any other arguments go to the experiments binary (e.g.
# `--backend wgpu`, `--jobs 2`). Prints the wall time and the CPU time (user + system, all
# processes) it took.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"

keep=0
dynamics=0
args=()
for a in "$@"; do
  case "$a" in
    --keep-runs) keep=1 ;;
    --dynamics) dynamics=1 ;;
    *) args+=("$a") ;;
  esac
done

cargo build -p experiments
start=$(date +%s)
if [ "$keep" = 0 ]; then
  rm -rf results/runs results/measurements
  if [ "$dynamics" = 1 ]; then
    rm -rf results/fair-budget/runs results/fair-budget/measurements
  fi
fi
cargo run -q -p experiments -- --exp all "${args[@]}"
if [ "$dynamics" = 1 ]; then
  cargo run -q -p experiments -- --exp dynamics "${args[@]}"
fi
secs=$(( $(date +%s) - start ))
# `times`' second line: user and system time of every child process, e.g. "12m3.5s 0m20.1s".
# (`times` itself runs in this shell: in a $(...) subshell it would count the subshell's.)
times_file=$(mktemp)
times > "$times_file"
cpu_secs=$(sed -n 2p "$times_file" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] } printf "%.0f", t }')
rm -f "$times_file"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || echo unknown)
echo "reproduce: ${secs} s ($(( secs / 60 )) min) wall, ${cpu_secs} s CPU, on ${cpu}, $(nproc) cores"
