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
# `--mask-avx512` (first argument), on a CPU with AVX-512: AVX2 code paths instead, for when no
# AVX2-only machine is at hand (the driver's MASK_AVX512_* say what is masked and what is not).
# It builds a second binary from a copy of the working tree whose Cargo.toml leaves out gemm's
# `x86-v4` (AVX-512 kernels are chosen at run time where compiled in: the one way to keep gemm
# off them), into results/bench/avx2-masked/. An AVX2-only machine's run is the evidence; this is
# the nearest thing on an AVX-512 one.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/embedlab/target}"
if [ "${1:-}" = "--mask-avx512" ]; then
  shift
  grep -qw avx512f /proc/cpuinfo || { echo "error: --mask-avx512: this CPU has no AVX-512 to mask; run without it" >&2; exit 2; }
  # At a fixed place, with the files' times kept (tar does), so that a second run rebuilds
  # only what changed: a new path would be a new cold build of the burn stack.
  copy="$CARGO_TARGET_DIR/gemm-avx2-src"
  rm -rf "$copy" && mkdir -p "$copy"
  git ls-files -z | tar --null -T - -c | tar -x -C "$copy"
  sed -i 's/^\(gemm = { version = "[^"]*", default-features = false\), features = \["x86-v4"\] }$/\1 }/' \
    "$copy/Cargo.toml"
  if ! grep -q '^gemm = { version = "[^"]*", default-features = false }$' "$copy/Cargo.toml"; then
    echo "error: --mask-avx512: Cargo.toml's gemm line is not the one this script edits" >&2
    exit 1
  fi
  touch -r Cargo.toml "$copy/Cargo.toml"
  (cd "$copy" && cargo build -p experiments)
  bin="$CARGO_TARGET_DIR/experiments-gemm-avx2"
  cp "$CARGO_TARGET_DIR/debug/experiments" "$bin"
  cargo build -p experiments  # puts this tree's binary back in place
  python3 scripts/bench_transformer_interleaved.py --bin "$bin" --mask-avx512 \
    --dest results/bench/avx2-masked "$@"
  exit
fi
cargo build -p experiments
isa=$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)
python3 scripts/bench_transformer_interleaved.py --bin "$CARGO_TARGET_DIR/debug/experiments" \
  --dest "results/bench/$isa" "$@"
