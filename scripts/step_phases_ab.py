#!/usr/bin/env python3
"""Side-by-side rounds of `--example step_phases` variants and PyTorch (scripts/step_phases_torch.py),
each variant once per round in turn, so that a ratio is paired within a round on a machine whose
speed drifts. Writes one CSV row per variant and round (phases in ms, load, CPU) and prints each
variant's median step and its paired ratio to the first variant with a 95% bootstrap interval
(over rounds, 4,000 resamples).

    # The optional third variant: step_phases as of e14cb2e (burn's Linear on rank-3 inputs).
    # Built first, because both builds write the same target/debug/examples/step_phases:
    git worktree add /tmp/before e14cb2e && (cd /tmp/before && cargo build -p experiments \
        --example step_phases) && cp $CARGO_TARGET_DIR/debug/examples/step_phases /tmp/step_phases_before
    cargo build -p experiments --examples
    python3 scripts/step_phases_ab.py --rounds 16 --before /tmp/step_phases_before \
        --out results/bench/avx2/step-phases-ab.csv
"""
import argparse
import csv
import os
import random
import re
import statistics as st
import subprocess

here = os.path.dirname(os.path.abspath(__file__))
target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/embedlab/target"))
ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=16)
ap.add_argument("--before", help="step_phases built from an earlier commit (optional variant)")
ap.add_argument("--out", required=True)
a = ap.parse_args()
new = os.path.join(target, "debug", "examples", "step_phases")
variants = [("flex, one-product linear, typed alloc", [new], {}),
            ("flex, one-product linear, byte alloc (FLEX_BYTE_EMPTY=1)", [new],
             {"FLEX_BYTE_EMPTY": "1"})]
if a.before:
    variants.append(("flex, burn Linear on rank 3, typed alloc", [a.before], {}))
variants.append(("pytorch eager sdpa", ["python3", os.path.join(here, "step_phases_torch.py")], {}))
cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
rows = []
for r in range(a.rounds):
    for name, cmd, env in variants:
        out = subprocess.run(cmd, env=dict(os.environ, STEPS="10", **env), capture_output=True,
                             text=True, check=True).stdout
        phases = {m.group(1).strip().replace(" ", "_"): float(m.group(2))
                  for m in re.finditer(r"^\s*([A-Za-z +]+):\s+([0-9.]+) ms", out, re.M)}
        rows.append(dict(round=r, variant=name, **phases, load_1min=os.getloadavg()[0], cpu=cpu))
with open(a.out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
by = {}
for row in rows:
    by.setdefault(row["round"], {})[row["variant"]] = row["step"]
random.seed(1)
for name, _, _ in variants:
    ratios = [d[name] / d[variants[0][0]] for d in by.values()]
    boots = sorted(st.median(random.choices(ratios, k=len(ratios))) for _ in range(4000))
    print(f"{name}: median step {st.median(d[name] for d in by.values()):.1f} ms, "
          f"/ first {st.median(ratios):.3f} (95% CI {boots[100]:.3f}-{boots[3899]:.3f}, "
          f"n={len(ratios)})")
