#!/usr/bin/env bash
# Runs every libFuzzer target of the fuzz build to at least RUNS executions
# each (default 10^6), through the one runner tools/fuzz-run.sh with
# runs=RUNS, one target after the other, and prints per target the number of
# executions libFuzzer reports (measured) and whether it ended clean or
# found a crash (its artifacts are in the target's work directory).
# Outside CI: it takes minutes to hours (the suite's 'fuzz' tests run each
# target for 20 s instead).
#
#   tools/fuzz-long.sh [--build DIR] [--runs N] [NAME-FILTER]
#     --build DIR   the libFuzzer build (default build-fuzz; made by
#                   tools/setup.sh --fuzz)
#     --runs N      executions per target (default 1000000)
#     NAME-FILTER   only targets whose test name contains this
# Exit status: 0 all clean, 1 a target crashed or fell short, 2 bad usage.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build-fuzz
runs=1000000
filter=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz-long.sh: unknown option '$1'" >&2; exit 2 ;;
    *) filter=$1; shift ;;
  esac
done
case "$runs" in ''|*[!0-9]*) echo "fuzz-long.sh: --runs '$runs' is not a number of executions" >&2; exit 2 ;; esac
[ -f "$build/build.ninja" ] || { echo "fuzz-long.sh: no Meson build at $build (tools/setup.sh --fuzz)" >&2; exit 2; }
py=$repo/.venv/bin/python
[ -x "$py" ] || py=python3
meson compile -C "$build" >/dev/null

# One line per fuzz test, from Meson's own test list (suite fuzz): name, the
# libFuzzer binary, its seed corpus folders (':'-joined; those in the
# source tree), its libFuzzer flags (;-joined), |-separated.  Taken from
# the test's command whatever wraps it (tools/fuzz-run.sh FUZZER SEEDS WORK
# SECONDS, or a part's own runner, or the fuzzer itself).
mapfile -t tests < <(meson introspect --tests "$build" | "$py" -c '
import json, os, sys
build, filt = os.path.realpath(sys.argv[1]), sys.argv[2]
def elf(p):
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False
for t in json.load(sys.stdin):
    if not any(s == "fuzz" or s.endswith(":fuzz") for s in t["suite"]) or filt not in t["name"]:
        continue
    args = [os.path.realpath(os.path.join(t.get("workdir") or build, a)) if not a.startswith("-") else a
            for a in t["cmd"]]
    fuzzers = [a for a in args if not a.startswith("-") and a.startswith(build + "/") and elf(a)
               and os.access(a, os.X_OK)]
    if not fuzzers:
        name, cmd = t["name"], t["cmd"]
        sys.exit(f"fuzz-long.sh: test {name}: no fuzzer binary in its command {cmd}")
    seeds = [a for a in args if os.path.isdir(a) and not a.startswith(build + "/")]
    flags = [a for a in args if a.startswith("-") and not a.startswith(("-max_total_time=", "-runs="))]
    print("|".join([t["name"], fuzzers[0], ":".join(seeds), ";".join(flags)]))
' "$build" "$filter")
[ ${#tests[@]} -gt 0 ] || { echo "fuzz-long.sh: no fuzz tests${filter:+ matching '$filter'} in $build" >&2; exit 2; }

logdir=$build/fuzz-long
mkdir -p "$logdir"
status=0
results=()
for line in "${tests[@]}"; do
  IFS="|" read -r name fuzzer seedlist flaglist <<<"$line"
  work=$logdir/$name
  rm -rf "$work"
  mkdir -p "$work/seeds"
  # fuzz-run.sh takes one seed folder; further ones go as corpus arguments.
  IFS=: read -r -a seeds <<<"$seedlist"
  IFS=';' read -r -a extra <<<"$flaglist"
  first=${seeds[0]:-$work/seeds}
  extra+=("${seeds[@]:1}")
  log=$logdir/$name.log
  echo "== $name: $runs executions ($(date -u +%T))"
  start=$(date +%s)
  if "$repo/tools/fuzz-run.sh" "$fuzzer" "$first" "$work" "runs=$runs" "${extra[@]}" >"$log" 2>&1; then
    verdict=clean
  else
    verdict="CRASH (exit $?; artifacts in $work, log $log)"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  execs=${execs:-0}
  if [ "$verdict" = clean ] && [ "$execs" -lt "$runs" ]; then
    verdict="SHORT (only $execs executions; log $log)"
  fi
  [ "$verdict" = clean ] || status=1
  results+=("$(printf '%-40s %12s  %6ss  %s' "$name" "$execs" "$(( $(date +%s) - start ))" "$verdict")")
  echo "${results[-1]}"
done
echo
echo "fuzz target                              executions    time  result   (executions: measured, libFuzzer's count)"
printf '%s\n' "${results[@]}"
exit $status
