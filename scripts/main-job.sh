#!/usr/bin/env bash
# The main job: installs the Debian packages, builds the failslow tool (release preset) and runs
# it on the built-in default job. Extra arguments go to the tool's demo command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release --target failslow_cli -j "$(nproc)" >/dev/null
exec build/release/examples/cli/failslow demo "$@"
