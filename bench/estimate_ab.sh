#!/usr/bin/env bash
# `assign estimate` on one store, an earlier commit against the working tree, run alternately (this
# machine's load drifts: only figures measured side by side compare), each from the shell with the
# interpreter's start; prints min and median wall of each and their ratio.
# Usage: bench/estimate_ab.sh REV DB [RUNS]   e.g. bench/estimate_ab.sh 876beba big.db 8
#   (DB: a store `assign sample` wrote, e.g. --n 1000000 on the model backend as bench/assign.sh does)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$REPO/.venv/bin/python}
[ $# -ge 2 ] || { echo "usage: bench/estimate_ab.sh REV DB [RUNS]" >&2; exit 2; }
rev=$1 db=$2 runs=${3:-8}
[ -f "$db" ] || { echo "bench/estimate_ab.sh: $db: no such store" >&2; exit 2; }
old=$(mktemp -d)
trap 'git -C "$REPO" worktree remove --force "$old" >/dev/null 2>&1 || rm -rf "$old"' EXIT
git -C "$REPO" worktree add -q --detach "$old" "$rev" || { echo "bench/estimate_ab.sh: $rev: not a commit" >&2; exit 2; }
# both compiled, as tools/setup.sh leaves the working tree (PYTHONDONTWRITEBYTECODE would recompile them each run)
"$PYTHON" -m compileall -q "$old/assign/src" "$REPO/assign/src" >/dev/null
for _ in $(seq "$runs"); do
  for side in before after; do
    src=$REPO/assign/src; [ "$side" = before ] && src=$old/assign/src
    a=$(date +%s.%N); PYTHONPATH=$src "$PYTHON" -m assign.cli estimate --db "$db" >/dev/null; b=$(date +%s.%N)
    echo "$side $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }')"
  done
done | sort -k1,1 -k2,2n | awk -v rev="$rev" -v runs="$runs" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
  { t[$1] = t[$1] " " $2 }
  END {
    printf "assign estimate (measured wall from the shell, %d runs each, alternately; load average %s):\n", runs, load
    for (k in t) { n = split(t[k], v, " "); lo[k] = v[1]; med[k] = v[int((n + 1) / 2)] }
    printf "  before (%s): min %.3f s, median %.3f s\n", rev, lo["before"], med["before"]
    printf "  after (working tree): min %.3f s, median %.3f s\n", lo["after"], med["after"]
    printf "  after / before: %.2f (medians)\n", med["after"] / med["before"]
  }'
