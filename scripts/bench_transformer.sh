#!/usr/bin/env bash
# Transformer training throughput, burn (flex, ndarray, wgpu) and PyTorch eager on CPU, side by
# side in one run: the same model (experiments/configs/train.toml's shape, dropout 0), the same
# [32, 64] batch shape, forward + backward of mean(h_N^2) and a full masked-LM AdamW step.
# Writes results/bench/transformer.csv (with each row's AVX-512 and load average) and
# results/bench/transformer-rounds.csv (every timed training step, the objectives alternating
# within a round) and prints the burn/PyTorch ratios and each objective's cost paired by round.
# Needs PyTorch (`pip install torch`). The CSV names the wgpu adapter wgpu reports (EMBEDLAB_DEVICE_NAME overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"
cargo build -p experiments
bin="$CARGO_TARGET_DIR/debug/experiments"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --exp bench-transformer --out "$tmp" "$@"
python3 scripts/bench_transformer_torch.py --out "$tmp/torch.csv" $([[ " $* " == *" --quick "* ]] && echo --quick)
mkdir -p results/bench
{ cat "$tmp/bench/transformer.csv"; tail -n +2 "$tmp/torch.csv"; } > results/bench/transformer.csv.tmp
mv results/bench/transformer.csv.tmp results/bench/transformer.csv
cp "$tmp/bench/transformer-rounds.csv" results/bench/transformer-rounds.csv
python3 - <<'PY'
import csv
rows = list(csv.DictReader(open("results/bench/transformer.csv")))
for bench in ("forward-backward", "mlm-step"):
    r = {x["backend"]: float(x["median_tokens_per_s"]) for x in rows if x["benchmark"] == bench}
    for ref in ("cpu-eager-manual", "cpu-eager-sdpa"):
        if "flex" in r and ref in r:
            print(f"{bench}: flex {r['flex']:.0f} tokens/s, pytorch {ref} {r[ref]:.0f}: ratio {r['flex']/r[ref]:.2f}")
PY
