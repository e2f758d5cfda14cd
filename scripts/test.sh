#!/usr/bin/env bash
# Builds failslow and runs every test: installs the Debian packages, then for each preset given
# (default: release) configures, builds and runs ctest. Usage: scripts/test.sh [preset...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(release)
jobs=$(nproc)
for p in "${presets[@]}"; do
  echo "== preset $p =="
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p" -j "$jobs"
  ctest --preset "$p" -j "$jobs"
done
