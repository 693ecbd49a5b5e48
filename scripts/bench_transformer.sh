#!/usr/bin/env bash
# Transformer training throughput, burn (flex, and ndarray/wgpu with `--also`) and PyTorch eager
# on CPU, side by side in one run: the same model (experiments/configs/train.toml's shape,
# dropout 0), the same [32, 64] batch shape, the forward pass alone and forward + backward of
# mean(h_N^2), a full masked-LM AdamW step, and on burn the causal-LM steps (every position, and
# 15% of them).
# Each backend is a process serving one step per request, and the steps are taken in turn,
# backend after backend, round after round (scripts/bench_transformer_interleaved.py says why:
# this VM's speed drifts within a minute). flex runs twice from the same binary: as built
# (vendor/ patches on) and with every patch switched off by its environment variable, and
# rayon's default pool (`flex-upstream`: burn 0.22.1's behaviour, as a burn program gets it).
# Writes results/bench/<isa>/ (isa: avx512 or avx2, from /proc/cpuinfo) transformer.csv (median,
# min, max tokens/s, the CPU, its AVX-512, the load), transformer-rounds.csv (every timed step)
# and transformer-paired.csv (step-time ratios paired by round with a bootstrap interval: flex
# against each other backend, each causal-LM step against the masked-LM one).
# Needs PyTorch (`pip install torch`). Arguments go to the driver: `--quick`, `--rounds N`
# (default 20), `--also ndarray,wgpu`, `--torch-compile` (PyTorch with sdpa under torch.compile
# beside eager; the committed results/bench/avx2/ CSVs were run with it), `--parts` (forward +
# backward of each part of the model alone, flex against PyTorch eager, into
# transformer-parts*.csv; committed with `--parts --rounds 30`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"
cargo build -p experiments
isa=$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)
python3 scripts/bench_transformer_interleaved.py --bin "$CARGO_TARGET_DIR/debug/experiments" \
  --dest "results/bench/$isa" "$@"
