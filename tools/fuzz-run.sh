#!/bin/sh
# The one runner for every libFuzzer target (each part's fuzz/meson.build
# calls it). New inputs and any crash go to WORKDIR (in the build tree), never
# into the seed corpus in the sources.
#
# usage: fuzz-run.sh FUZZER SEED_DIR WORKDIR LIMIT [libFuzzer flags...]
#   LIMIT  SECONDS (bounded time, what the test suite uses) or runs=N
#          (a number of executions, what tools/fuzz-long.sh uses);
#          PIPEPLACE_FUZZ_SECONDS, where set, replaces SECONDS (tools/test.sh
#          sets it to keep CI's fuzzing phase short)
set -eu
if [ $# -lt 4 ]; then
  echo "usage: fuzz-run.sh FUZZER SEED_DIR WORKDIR SECONDS|runs=N [flags...]" >&2
  exit 2
fi
fuzzer=$1 seeds=$2 work=$3 limit=$4
shift 4
case "$limit" in
  runs=*) bound="-runs=${limit#runs=}" ;;
  *[!0-9]*|'') echo "fuzz-run.sh: LIMIT '$limit' is neither SECONDS nor runs=N" >&2; exit 2 ;;
  *) bound="-max_total_time=${PIPEPLACE_FUZZ_SECONDS:-$limit}" ;;
esac
[ -d "$seeds" ] || { echo "fuzz-run.sh: seed corpus '$seeds' is not a directory" >&2; exit 2; }
mkdir -p "$work/corpus"
exec "$fuzzer" "$bound" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -error_exitcode=1 -artifact_prefix="$work/" "$@" "$work/corpus" "$seeds"
