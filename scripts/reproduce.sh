#!/usr/bin/env bash
# Reproduces the study (experiments/configs/paper.toml) from scratch: every model trained and
# followed through training (`--exp dynamics`), the seven comparisons, results/REPORT.md and the
# curves, then prints the time it took. From scratch means without the run cache (results/runs/)
# and without the kept measurements (results/measurements/, committed: git restores them).
# `--keep-runs` keeps both, so an interrupted reproduction continues where it stopped and only
# what is missing is trained or measured. Any other arguments go to the experiments binary (e.g.
# `--backend wgpu`, `--jobs 1`).
#
# Before it starts it says what the study cost when the committed models were made: the sums of
# their ledgers (results/cost.csv, wall and CPU time of each model's own processes, on the CPU
# named there). A from-scratch run on a machine like that one costs about the wall total divided
# by the number of models trained side by side (`--jobs`, 2 by default).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

keep=0
args=()
for a in "$@"; do
  case "$a" in
    --keep-runs) keep=1 ;;
    *) args+=("$a") ;;
  esac
done

if [ -f results/cost.csv ]; then
  awk -F, 'NR > 1 { n++; wall += $3; cpu += $4; cpuname = $7 }
    END { printf "reproduce: the committed study cost %.1f h of model time (wall) and %.1f h CPU over %d models (results/cost.csv, on %s)\n", wall / 3600, cpu / 3600, n, cpuname }' results/cost.csv
fi
if [ "$keep" = 0 ]; then
  echo "reproduce: from scratch: results/runs/ and results/measurements/ are deleted (git checkout -- results/measurements restores the committed ones)"
fi
cargo build -p experiments
start=$(date +%s)
if [ "$keep" = 0 ]; then
  rm -rf results/runs results/measurements
fi
cargo run -q -p experiments -- --exp dynamics "${args[@]}"
secs=$(( $(date +%s) - start ))
# `times`' second line: user and system time of every child process, e.g. "12m3.5s 0m20.1s".
# (`times` itself runs in this shell: in a $(...) subshell it would count the subshell's.)
times_file=$(mktemp)
times > "$times_file"
cpu_secs=$(sed -n 2p "$times_file" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] } printf "%.0f", t }')
rm -f "$times_file"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || echo unknown)
echo "reproduce: ${secs} s ($(( secs / 60 )) min) wall, ${cpu_secs} s CPU, on ${cpu}, $(nproc) cores"
