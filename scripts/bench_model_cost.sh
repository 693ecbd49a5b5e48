#!/usr/bin/env bash
# What one fair-budget model costs under this code, from start to kept measurements (issue 43):
# the ten-seed round's tied masked LM and matched-targets causal LM, one seed each, trained and
# measured side by side (two processes, one per core, as the study runs them) into scratch
# directories, never into results/. Appends to results/bench/<isa>/model-cost.csv (isa: avx512
# or avx2): per model and piece of its ledger (`train`, `snapshots`, `scores`; a resumed run has
# an unfinished piece before the finished ones) the wall and CPU seconds, whether the piece
# finished, the CPU, the ISA and the commit (`-dirty` when the tree had changes), and whether
# every file the run wrote equals the committed file of the same run and name (under
# results/measurements/<run>/ or results/*/measurements/<run>/, decompressed; the manifest and
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
cpu=$( (grep -m1 "model name" /proc/cpuinfo || echo ": unknown") | cut -d: -f2 | sed 's/^ *//')
isa=$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)
commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain)" ]; then commit="$commit-dirty"; fi
mkdir -p "results/bench/$isa"
out="results/bench/$isa/model-cost.csv"
models="transformer-mlm transformer-clm-matched"
pids=()
for m in $models; do
  "$bin" --exp measure-snapshots --config "$config" --model "$m" --seed "$seed" \
    --out "$tmp/$m" > "$tmp/$m.log" 2>&1 &
  pids+=("$!")
done
i=0
for m in $models; do
  wait "${pids[$i]}" || { echo "$m failed: see $tmp/$m.log" >&2; exit 1; }
  i=$((i + 1))
done
python3 - "$tmp" "$seed" "$cpu" "$isa" "$commit" "$out" "two models side by side" $models <<'PY'
import csv, glob, gzip, os, sys
tmp, seed, cpu, isa, commit, out, beside, *models = sys.argv[1:]
def contents(d):
    files = {}
    for p in sorted(glob.glob(os.path.join(d, "*"))):
        name = os.path.basename(p)
        if name in ("manifest.json", "time.csv"):
            continue
        if not os.path.isfile(p):
            sys.exit(f"{p}: not a file; a measurement directory holds files only")
        data = open(p, "rb").read()
        data = gzip.decompress(data) if name.endswith(".gz") else data
        if name == "curve.csv":
            # Its losses must agree; its speed column cannot.
            rows = list(csv.reader(data.decode().splitlines()))
            if not rows or "tokens_per_second" not in rows[0]:
                sys.exit(f"{p}: no tokens_per_second column in its header")
            speed = rows[0].index("tokens_per_second")
            data = [r[:speed] + r[speed + 1:] for r in rows]
        files[name] = data
    return files
rows = []
for m in models:
    found = glob.glob(os.path.join(tmp, m, "measurements", "*"))
    if len(found) != 1:
        sys.exit(f"{tmp}/{m}/measurements: expected one run's directory, found {len(found)}")
    d = found[0]
    run = os.path.basename(d)
    ours = contents(d)
    if not ours:
        sys.exit(f"{d}: no measurement files")
    kept = [k for k in (os.path.join("results", "measurements", run),
                        *glob.glob(os.path.join("results", "*", "measurements", run)))
            if os.path.isdir(k)]
    same = "not committed"
    if kept:
        theirs = contents(kept[0])
        # A file that differs says false even when others are missing; a run that equals
        # what is committed but wrote more names what the committed run lacks.
        missing = [n for n in ours if n not in theirs]
        differ = any(n in theirs and theirs[n] != v for n, v in ours.items())
        same = ("false" if differ
                else "true, but not committed: " + " ".join(missing) if missing else "true")
    ledger = list(csv.DictReader(open(os.path.join(d, "time.csv"))))
    if not ledger:
        sys.exit(f"{d}/time.csv: no rows")
    for r in ledger:
        rows.append({"model": m, "seed": seed, "run": run, "piece": r["work"],
                     "finished": r["finished"], "wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
                     "beside": beside, "same_as_committed": same, "cpu": cpu, "isa": isa,
                     "commit": commit})
    if not any(r["work"] == "scores" and r["finished"] == "true" for r in ledger):
        sys.exit(f"{d}/time.csv: the final measurement did not finish")
fields = list(rows[0])
if os.path.exists(out):
    with open(out, newline="") as f:
        header = next(csv.reader(f), None)
    if header != fields:
        sys.exit(f"{out}: its header {header} is not this script's {fields}; move it aside")
new = not os.path.exists(out)
with open(out, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    if new:
        w.writeheader()
    w.writerows(rows)
for r in rows:
    print(",".join(r.values()))
PY
