#!/bin/sh
# promtool_check.sh FILE: `promtool check metrics` (lint included) on a Prometheus text file.
# Exit 77 -- ctest's SKIP_RETURN_CODE -- when promtool is not installed (Debian package prometheus).
if ! command -v promtool >/dev/null 2>&1; then
  echo "promtool not found: install the Debian package prometheus (scripts/install-deps.sh) -- skipped"
  exit 77
fi
promtool check metrics < "$1" || exit 1
echo "promtool check metrics: $1 passes"
