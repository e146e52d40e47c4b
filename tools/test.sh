#!/usr/bin/env bash
# Runs the whole test suite, after making sure the builds it needs exist:
#   0. the C style check (clang-format, .clang-format),
#   1. C unit tests (meson test) on the ASan+UBSan build,
#   2. the libFuzzer targets for a bounded time (clang build),
#   3. pytest: the assign package and every end-to-end test, the C programs
#      taken from the ASan+UBSan build.
# 2, then the pure-Python part of 3, run beside the rest of 3, as a second lane.
# Exits non-zero when any test fails.
set -euo pipefail
case "${1:-}" in
  '') ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: takes no arguments, got '$1' (see --help)" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
"$repo/tools/setup.sh" --asan --fuzz

# DPDK maps its memory itself; LeakSanitizer cannot tell its hugepage
# bookkeeping from a leak, and the first error must stop the program.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export PIPEPLACE_BUILD="$repo/build-asan"
export PIPEPLACE_FUZZ_BUILD="$repo/build-fuzz"
# every fuzz target for 6 s in CI, its seed corpus and a few seconds more (their meson tests say
# 20; tools/fuzz-long.sh runs millions)
export PIPEPLACE_FUZZ_SECONDS="${PIPEPLACE_FUZZ_SECONDS:-6}"

status=0
# Seconds since the start of this script, on each phase line: where CI time goes.
phase() { echo "== $* (at ${SECONDS} s) =="; }
phase "C style (clang-format --dry-run --Werror, .clang-format: DPDK's style)"
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$repo" ls-files -z '*.c' '*.h' | xargs -0 clang-format --dry-run --Werror || status=1
else
  find runtime apps traffic-gen -name '*.[ch]' -print0 | xargs -0 clang-format --dry-run --Werror || status=1
fi
phase "C unit tests (ASan+UBSan)"
meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 2 || status=1
# Two lanes at once. This one: the tests marked `system` (C programs, DPDK,
# namespaces, the shared captures) one at a time as in a serial run, printed
# as they go. Beside it, one process at a time: the fuzzers for a bounded
# time, then the pure-Python tests (and those marked `offline`), printed
# when both lanes are done. --durations: where CI time goes (budget 20 min).
beside_dir=$(mktemp -d -t pipeplace-beside-XXXXXX)
(
  rc=0
  echo "== fuzzers (bounded time) =="
  meson test -C build-fuzz --no-rebuild --print-errorlogs --suite fuzz --num-processes 1 || rc=1
  echo "== pytest: the pure-Python tests =="
  .venv/bin/python -m pytest -m "not system" -p no:cacheprovider --basetemp "$beside_dir/tmp" \
    --durations=10 || rc=1
  exit $rc
) >"$beside_dir/log" 2>&1 &
beside_pid=$!
trap 'kill "$beside_pid" 2>/dev/null || true' INT TERM
phase "pytest: the system tests, one at a time (the fuzzers and the pure-Python tests run beside them)"
.venv/bin/python -m pytest -m system --durations=15 || status=1
beside_status=0
wait "$beside_pid" || beside_status=$?
phase "beside them: the fuzzers and the pure-Python tests (exit $beside_status)"
cat "$beside_dir/log"
[ "$beside_status" -eq 0 ] || status=1
rm -rf "$beside_dir"
phase "done, status $status"
exit $status
