#!/usr/bin/env bash
# What measuring one model costs, old code against new, alternating in one run: each binary
# measures the untrained masked LM of the study's config (`--exp measure-snapshots`: the
# snapshot measures, then the full measurement with pooled vectors), nothing trained, so the
# time is measuring alone. Writes results/bench/<isa>/measure.csv (isa: avx512 or avx2): per
# run the ledger's wall and CPU seconds of the snapshot measures (`dynamics`) and of the full
# one (`scores`), each stage's wall seconds from the log, the CPU, the load average when the
# run started, and whether the run's measurement files equal the first binary's byte for byte
# (decompressed; the manifest and the ledger, which record times, left out; `reference` for that
# first run itself): a speed change must not change a number. Which binary goes first
# alternates from rep to rep (old new, new old, ...), so that a drifting load favours neither.
# The untrained model answers almost no analogy, so its files say little about the analogy
# search: compare a trained table with `--exp eval` too.
# Usage: scripts/bench_measure.sh <old binary> <old label> <new binary> <new label> [reps] [config]
#   (reps default 2; config default experiments/configs/ten-seeds.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
old="$1"; old_label="$2"; new="$3"; new_label="$4"
reps="${5:-2}"
config="${6:-experiments/configs/ten-seeds.toml}"
tmp=$(mktemp -d)
# Kept when a run fails, for its log.
trap 'if [ $? -eq 0 ]; then rm -rf "$tmp"; else echo "logs kept in $tmp" >&2; fi' EXIT
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
avx512=$(grep -qw avx512f /proc/cpuinfo && echo true || echo false)
isa=$([ "$avx512" = true ] && echo avx512 || echo avx2)
mkdir -p "results/bench/$isa"
out="results/bench/$isa/measure.csv"
rows="$tmp/rows.csv"
: > "$rows"
first=""
for rep in $(seq 1 "$reps"); do
  order=$([ $((rep % 2)) -eq 1 ] && echo "old new" || echo "new old")
  for side in $order; do
    bin=$([ "$side" = old ] && echo "$old" || echo "$new")
    label=$([ "$side" = old ] && echo "$old_label" || echo "$new_label")
    dir="$tmp/$side-$rep"
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$bin" --exp measure-snapshots --model transformer-untrained --seed 1 --config "$config" \
      --out "$dir" > "$tmp/$side-$rep.log" 2>&1
    python3 - "$label" "$rep" "$load" "$cpu" "$avx512" "$dir" "$tmp/$side-$rep.log" "$first" <<'PY' >> "$rows"
import csv, glob, gzip, hashlib, os, re, sys
label, rep, load, cpu, avx512, d, log, first = sys.argv[1:]
def digest(root):
    out = {}
    for p in sorted(glob.glob(os.path.join(root, "measurements", "*", "*"))):
        name = os.path.basename(p)
        if name in ("manifest.json", "time.csv") or not os.path.isfile(p):
            continue
        data = open(p, "rb").read()
        if p.endswith(".gz"):
            data = gzip.decompress(data)
        out[name] = hashlib.sha256(data).hexdigest()
    if not out:
        sys.exit(f"{root}: no measurement files to compare")
    return out
(ledger,) = glob.glob(os.path.join(d, "measurements", "*", "time.csv"))
work = {r["work"]: r for r in csv.DictReader(open(ledger))}
laps = [l for l in open(log, errors="replace") if l.startswith("measured ")]
def stages(line):
    m = re.search(r": ([0-9.]+) s \((.*)\)", line)
    return float(m.group(1)), {k.strip(): float(v) for k, v in (re.match(r"(.*) ([0-9.]+)$", p.strip()).groups() for p in m.group(2).split(","))}
snap_total, snap = stages(laps[0])
full_total, full = stages(laps[1])
stages_read = {"snapshot": (snap, ["activation geometry", "contextuality (raw and norm)",
               "contextuality-sentences (raw and norm)", "decontextualized scored", "embedding scored"]),
               "full": (full, ["pooled computed", "projected embeddings scored"])}
for part, (laps_of, names) in stages_read.items():
    missing = [n for n in names if n not in laps_of]
    if missing:
        sys.exit(f"{log}: the {part} measurement names no {missing}")
same = "reference" if not first else str(digest(d) == digest(first)).lower()
w = csv.writer(sys.stdout)
w.writerow([cpu, avx512, label, rep, load,
            work["dynamics"]["wall_s"], work["dynamics"]["cpu_s"],
            work["scores"]["wall_s"], work["scores"]["cpu_s"],
            snap_total, snap.get("activation geometry"), snap.get("contextuality (raw and norm)"),
            snap.get("contextuality-sentences (raw and norm)"), snap.get("decontextualized scored"),
            snap.get("embedding scored"), full_total, full.get("pooled computed"),
            full.get("projected embeddings scored"), same])
PY
    echo "$label rep $rep: $(tail -1 "$rows")"
    [ -n "$first" ] || first="$dir"
  done
done
{
  echo "cpu,avx512,code,rep,load_avg_at_start,snapshot_wall_s,snapshot_cpu_s,full_wall_s,full_cpu_s,snapshot_laps_s,activation_geometry_s,contextuality_s,contextuality_sentences_s,decontextualized_scored_s,embedding_scored_s,full_laps_s,pooled_computed_s,projected_scored_s,files_equal_first"
  cat "$rows"
} > "$out.tmp" && mv "$out.tmp" "$out"
echo "wrote $out"
