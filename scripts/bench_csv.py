"""One benchmark CSV from the runs' files: `bench_csv.py OUT FILE...`. The files' columns are
checked alike, the CPU and its widest vector ISA appended to each row (in python: no CPU name
can break the assembly, a missing one is "unknown"), OUT written whole or not at all."""
import csv, os, sys

out, paths = sys.argv[1], sys.argv[2:]
flags, cpu = set(), "unknown"
try:
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        if key.strip() == "model name" and cpu == "unknown":
            cpu = value.strip()
        if key.strip() == "flags":
            flags = set(value.split())
except OSError:
    pass
isa = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "other"
rows, header = [], None
for path in paths:
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if header is None:
            header = r.fieldnames
        elif r.fieldnames != header:
            sys.exit(f"{path}: columns {r.fieldnames} differ from {header}")
        rows += [dict(row, cpu=cpu, isa=isa) for row in r]
if header is None:
    sys.exit("no benchmark files to assemble")
with open(out + ".tmp", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=header + ["cpu", "isa"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
os.replace(out + ".tmp", out)
