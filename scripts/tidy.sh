#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bugs and needless copies, findings are errors) on every header
# the header check of a configured build compiles, with that build's flags and components.
# Usage: scripts/tidy.sh [BUILD_DIR]   (default build/clang-cxx20; it needs compile_commands.json,
# which the presets write). The headers go into two translation units run in parallel: parsing
# the dependencies (Eigen, Boost, simdjson, ...) once per unit, not once per header, is what
# keeps this to about a minute and a half on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/clang-cxx20}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
out="$build/tidy"
mkdir -p "$out"
python3 - "$build" "$out" <<'PY'
import json, shlex, sys
build, out = sys.argv[1], sys.argv[2]
entries = [e for e in json.load(open(f"{build}/compile_commands.json")) if "/header_check/" in e["file"]]
if not entries:
    sys.exit(f"tidy: no header-check units in {build}/compile_commands.json (FAILSLOW_HEADER_CHECK=ON)")
headers = sorted({open(e["file"]).readline().strip() for e in entries})
args = shlex.split(entries[0]["command"]) if "command" in entries[0] else entries[0]["arguments"]
flags, skip = [], False
for a in args[1:]:  # the compiler's flags, without the output and the source
    if skip:
        skip = False
    elif a in ("-o", "-c", "-MF", "-MT", "-MQ"):
        skip = a != "-c"
    elif a != entries[0]["file"] and not a.startswith(("-Werror", "-W")):
        flags.append(a)
if not any(a.startswith("-std=") for a in flags):
    flags.append("-std=c++17")  # GCC 12 needs no flag for C++17; clang-tidy parses as Clang 14 would
half = (len(headers) + 1) // 2
for i, part in enumerate((headers[:half], headers[half:])):
    with open(f"{out}/headers_{i}.cpp", "w") as f:
        f.write("\n".join(part) + "\n")
with open(f"{out}/flags", "w") as f:
    f.write("\n".join(flags) + "\n")
print(f"tidy: {len(headers)} headers in 2 units")
PY
mapfile -t flags < "$out/flags"
status=0
for i in 0 1; do
  "$tidy" --quiet "$out/headers_$i.cpp" -- "${flags[@]}" > "$out/headers_$i.log" 2>&1 &
done
for job in $(jobs -p); do wait "$job" || status=1; done
cat "$out"/headers_*.log | grep -v "warnings generated\|^Suppressed\|^Use -header-filter\|NOLINT" || true
exit $status
