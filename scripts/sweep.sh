#!/usr/bin/env bash
# The learning-rate sweep of experiments/configs/sweep.toml, two (variant, seed) processes side
# by side (what `--exp sweep` does one after another), each in its own output directory under
# $WORK, their per-(variant, seed) CSVs then gathered into results/sweep/ and the choice made
# there (results/sweep/chosen.csv). Resumable: a finished (variant, seed) is kept, a run cut
# off resumes from its checkpoint. Usage: scripts/sweep.sh [parallel processes, default 2];
# MODELS="m1 m2" runs only those variants of the config's list.
set -euo pipefail
cd "$(dirname "$0")/.."
par="${1:-2}"
work="${WORK:-results/runs/sweep-jobs}"
mkdir -p "$work" results/sweep
# One binary for the whole sweep: a rebuild meanwhile must not change the runs half-way.
cargo build -q -p experiments
bin="$work/experiments"
[ -x "$bin" ] || cp "$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/experiments" "$bin"
jobs=$(python3 - <<'PY'
import os, sys, tomllib, pathlib
def load(p):
    t = tomllib.loads(p.read_text())
    base = t.pop("extends", None)
    if base is None:
        return t
    b = load(p.parent / base)
    def merge(a, o):
        for k, v in o.items():
            if isinstance(v, dict) and isinstance(a.get(k), dict): merge(a[k], v)
            else: a[k] = v
    merge(b, t)
    return b
c = load(pathlib.Path("experiments/configs/sweep.toml"))
s = c.get("sweep", {})
models = s.get("models") or [m for m in c["dynamics"]["models"] if m.startswith("transformer-") and m != "transformer-untrained"]
only = os.environ.get("MODELS", "").split()
unknown = [m for m in only if m not in models]
if unknown:
    sys.exit(f"MODELS names {unknown}, not in the sweep's models {models}")
models = [m for m in models if not only or m in only]
for seed in s["seeds"]:
    for m in models:
        print(m, seed)
PY
)
echo "$jobs" | xargs -P "$par" -L 1 bash -c '
  m=$0; s=$1; out='"$work"'/$m-$s
  if [ -f results/sweep/$m-seed$s.csv ]; then exit 0; fi
  '"$bin"' --exp sweep --model $m --seed $s --out $out > '"$work"'/log-$m-$s.txt 2>&1 || { echo "$m seed $s failed: '"$work"'/log-$m-$s.txt"; exit 1; }
  cp $out/sweep/$m-seed$s.csv results/sweep/
  echo "$m seed $s done"'
"$bin" --exp sweep --out results
