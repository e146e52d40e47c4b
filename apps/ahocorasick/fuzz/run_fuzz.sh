#!/bin/sh
# Run a libFuzzer target for a bounded time: new inputs and any crash go to
# WORKDIR (in the build tree), never into the seed corpus in the sources.
# usage: run_fuzz.sh FUZZER SEED_DIR WORKDIR SECONDS
set -eu
fuzzer=$1 seeds=$2 work=$3 secs=$4
mkdir -p "$work/corpus"
exec "$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -error_exitcode=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"
