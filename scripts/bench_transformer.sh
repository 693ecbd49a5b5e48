#!/usr/bin/env bash
# Transformer training throughput, burn (flex, ndarray, wgpu) and PyTorch eager on CPU, side by
# side in one run: the same model (experiments/configs/train.toml's shape, dropout 0), the same
# [32, 64] batch shape, forward + backward of mean(h_N^2) and a full masked-LM AdamW step.
# flex is measured twice by the same binary: as built (vendor/: element-wise kernels split across
# cores and compiled for AVX2, vectorized exp/erf, fused log-softmax, single autodiff nodes for
# softmax, log-softmax and LayerNorm) and with every one of those switched off by its environment
# variable (backend `flex-upstream`: burn 0.22.1's behaviour), so the patches' effect is a ratio
# taken in one run.
# Writes results/bench/<isa>/transformer.csv (isa: avx512 or avx2, from /proc/cpuinfo; each row
# has the CPU, its AVX-512 and the load average) and results/bench/<isa>/transformer-rounds.csv
# (every timed training step, the objectives alternating within a round), and prints the
# burn/PyTorch ratios and each objective's cost paired by round.
# Needs PyTorch (`pip install torch`). The CSV names the wgpu adapter wgpu reports
# (EMBEDLAB_DEVICE_NAME overrides it). Extra arguments go to `--exp bench-transformer`
# (`--quick`, `--backend flex`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
isa=$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)
quick=$([[ " $* " == *" --quick "* ]] && echo --quick || true)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --exp bench-transformer --out "$tmp/patched" "$@"
FLEX_PAR_MIN_ELEMS=18446744073709551615 FLEX_NO_AVX2=1 FLEX_LIBM=1 BURN_AUTODIFF_DECOMPOSE=1 FLEX_BYTE_EMPTY=1 \
  "$bin" --exp bench-transformer --backend flex --out "$tmp/upstream" $quick
python3 scripts/bench_transformer_torch.py --out "$tmp/torch.csv" $quick
dest="results/bench/$isa"
mkdir -p "$dest"
python3 - "$tmp" "$dest" <<'PY'
import csv, sys
tmp, dest = sys.argv[1], sys.argv[2]
def rows(path, rename=None):
    with open(path) as f:
        out = list(csv.DictReader(f))
    for r in out:
        if rename and r["backend"] == "flex":
            r["backend"] = rename
    return out
measured = rows(f"{tmp}/patched/bench/transformer.csv")
measured += rows(f"{tmp}/upstream/bench/transformer.csv", "flex-upstream")
measured += rows(f"{tmp}/torch.csv")
for name, data in (("transformer.csv", measured),
                   ("transformer-rounds.csv",
                    rows(f"{tmp}/patched/bench/transformer-rounds.csv")
                    + rows(f"{tmp}/upstream/bench/transformer-rounds.csv", "flex-upstream"))):
    with open(f"{dest}/{name}.tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(data[0].keys()))
        w.writeheader()
        w.writerows(data)
for bench in ("forward-backward", "mlm-step"):
    r = {x["backend"]: float(x["median_tokens_per_s"]) for x in measured if x["benchmark"] == bench}
    for ref in ("cpu-eager-manual", "cpu-eager-sdpa", "flex-upstream"):
        if "flex" in r and ref in r:
            print(f"{bench}: flex {r['flex']:.0f} tokens/s, {ref} {r[ref]:.0f}: ratio {r['flex']/r[ref]:.2f}")
PY
for f in transformer.csv transformer-rounds.csv; do mv "$dest/$f.tmp" "$dest/$f"; done
echo "wrote $dest/transformer.csv and $dest/transformer-rounds.csv"
