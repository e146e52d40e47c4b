#!/usr/bin/env bash
# Benchmark of the three apps of issue 6, one after the other in one run:
# each script prints its own P-task packets per second at 64, 512 and 1500
# bytes (and ahocorasick each engine's Gb/s with the DoS subset and the whole
# rule set; stateful the hash-flood comparison). Every figure is measured.
#
#   bench/apps.sh [--build DIR]      (default: build/, the release build)
# Extra arguments go to every script (e.g. --repeat 5).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
if [ "${1:-}" = "--build" ]; then build=$(cd "$2" && pwd); shift 2; fi
py=$repo/.venv/bin/python
[ -x "$py" ] || py=python3
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
for app in ahocorasick stateful analyzer; do
  echo
  echo "=== $app ==="
  "$py" "$repo/bench/apps-$app.py" --build "$build" "$@"
done
