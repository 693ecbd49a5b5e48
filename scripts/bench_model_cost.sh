#!/usr/bin/env bash
# What one fair-budget model costs under this code, from start to kept measurements (issue 43):
# the ten-seed round's tied masked LM and matched-targets causal LM, one seed each, trained and
# measured side by side (two processes, one per core, as the study runs them) into scratch
# directories, never into results/. Writes results/bench/<isa>/model-cost.csv (isa: avx512 or
# avx2), appending: per model and piece of its ledger (`train`, `snapshots`, `scores`) the wall
# and CPU seconds, the CPU and the commit, and whether the run's measurement files equal the
# committed ones of the same run (results/measurements/<run>/, decompressed; the manifest and
# the ledger, which record times, left out, and curve.csv's tokens-per-second column): a run
# that retrains differently is named, not hidden.
# Usage: scripts/bench_model_cost.sh <experiments binary> [seed] [config]
#   (seed default 1; config default experiments/configs/ten-seeds.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$1"
seed="${2:-1}"
config="${3:-experiments/configs/ten-seeds.toml}"
tmp=$(mktemp -d)
trap 'if [ $? -eq 0 ]; then rm -rf "$tmp"; else echo "logs kept in $tmp" >&2; fi' EXIT
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
isa=$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)
commit=$(git rev-parse --short HEAD)
mkdir -p "results/bench/$isa"
out="results/bench/$isa/model-cost.csv"
models="transformer-mlm transformer-clm-matched"
for m in $models; do
  "$bin" --exp measure-snapshots --config "$config" --model "$m" --seed "$seed" \
    --out "$tmp/$m" > "$tmp/$m.log" 2>&1 &
done
wait
python3 - "$tmp" "$seed" "$cpu" "$commit" "$out" $models <<'PY'
import csv, glob, gzip, os, sys
tmp, seed, cpu, commit, out, *models = sys.argv[1:]
def contents(d):
    files = {}
    for p in sorted(glob.glob(os.path.join(d, "*"))):
        name = os.path.basename(p)
        if name in ("manifest.json", "time.csv") or not os.path.isfile(p):
            continue
        data = open(p, "rb").read()
        data = gzip.decompress(data) if name.endswith(".gz") else data
        if name == "curve.csv":
            # Its losses must agree; its speed column cannot.
            rows = list(csv.reader(data.decode().splitlines()))
            speed = rows[0].index("tokens_per_second")
            data = [r[:speed] + r[speed + 1:] for r in rows]
        files[name] = data
    return files
rows = []
for m in models:
    (d,) = glob.glob(os.path.join(tmp, m, "measurements", "*"))
    run = os.path.basename(d)
    ours = contents(d)
    if not ours:
        sys.exit(f"{d}: no measurement files")
    kept = os.path.join("results", "measurements", run)
    same = "not committed"
    if os.path.isdir(kept):
        theirs = contents(kept)
        same = "true" if theirs == ours else "false"
    for r in csv.DictReader(open(os.path.join(d, "time.csv"))):
        if r["finished"] != "true":
            sys.exit(f"{d}/time.csv: piece {r['work']} did not finish")
        rows.append({"model": m, "seed": seed, "run": run, "piece": r["work"],
                     "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "beside": "1 other model",
                     "same_as_committed": same, "cpu": cpu, "commit": commit})
new = not os.path.exists(out)
with open(out, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    if new:
        w.writeheader()
    w.writerows(rows)
for r in rows:
    print(",".join(r.values()))
PY
