#!/usr/bin/env bash
# Installs every Debian package failslow's build, tests, benchmarks and tools need.
# Idempotent: packages already present are left alone. Run as root or with sudo available.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libeigen3-dev
  libboost-dev  # Boost.Math: the tests' independent reference (not a dependency of the library)
  catch2 libbenchmark-dev
  libsimdjson-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libsqlite3-dev libopenmpi-dev openmpi-bin
  libzstd-dev  # the .fsum codec's entropy stage (optional: failslow::zstd)
  python3 python3-numpy python3-scipy
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-torch  # the Python module and its tests (a real torch.distributed job)
  prometheus  # promtool checks the metrics (tests/promtool_check.sh); its daemon is not needed
  clang-format clang-tidy
  doxygen  # the API reference (ctest docs.api, docs/api/)
  librsvg2-bin chromium  # rsvg-convert and headless Chromium check the figures (tests/figures/check_figures.py)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
