#!/usr/bin/env bash
# The patched burn crates' own test suites (vendor/README.md): burn-flex's unit tests, those of
# the changed modules (par, zip, tensor, simd, ops::{activation, binary, matmul, unary}) among
# them (vmath.rs, new in the patch, has none of its own: the activation tests reach it), built from vendor/burn-flex on its own (its own Cargo.lock; the workspace
# excludes vendor/). burn-autodiff 0.22.1 ships no tests in its package (upstream keeps them in
# an unpublished crate); its changed ops (the fused softmax, log-softmax and layer norm) are
# checked against central finite differences by crates/transformer/tests/fused_autodiff.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}/vendor"
cargo test --manifest-path vendor/burn-flex/Cargo.toml --target-dir "$target" --lib "$@"
