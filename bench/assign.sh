#!/usr/bin/env bash
# Times the main `assign` flow on the model of the UltraSPARC T2, side by side:
#   sample --n 5000 (ipfwd-mem, model backend), estimate on that sample,
#   report (all figures), and the model alone (5000 assignments of 24 tasks);
#   the same sample on dask workers (local:1, local:2, and local:2 without the
#   identical-machines check's reference measurements: their cost);
#   then how cost grows with n: sample and estimate wall times from the shell
#   (interpreter start included) for n = 10^3 .. 10^6 (SCALE_MAX, default 10^6), and where
#   the estimate's time goes at the largest n (its stages timed in-process).
# Usage: bench/assign.sh [N]   (env ASSIGN=path/to/assign, PYTHON=path/to/python,
#                            SCALE_MAX=1000000)
#        bench/assign.sh ab REV DB [RUNS]: `assign estimate` on the store DB, commit REV against the
#          working tree, alternately (this machine's load drifts: only figures measured side by side
#          compare), from the shell; min and median wall of each and their ratio
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ASSIGN=${ASSIGN:-$REPO/.venv/bin/assign}
PYTHON=${PYTHON:-$REPO/.venv/bin/python}
if [ "${1:-}" = ab ]; then
  [ $# -ge 3 ] || { echo "usage: bench/assign.sh ab REV DB [RUNS]" >&2; exit 2; }
  shift
  rev=$1 db=$2 runs=${3:-8}
  [ -f "$db" ] || { echo "bench/assign.sh ab: $db: no such store" >&2; exit 2; }
  old=$(mktemp -d)
  trap 'git -C "$REPO" worktree remove --force "$old" >/dev/null 2>&1 || rm -rf "$old"' EXIT
  git -C "$REPO" worktree add -q --detach "$old" "$rev" || { echo "bench/assign.sh ab: $rev: not a commit" >&2; exit 2; }
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
  exit 0
fi
N=${1:-5000}
SCALE_MAX=${SCALE_MAX:-1000000}
[ -x "$ASSIGN" ] || { echo "bench/assign.sh: $ASSIGN not found: pip install -e assign into .venv" >&2; exit 1; }
# the package's bytecode compiled first, as setup.sh leaves it: where PYTHONDONTWRITEBYTECODE is set an
# edited module is compiled again by every command, and that is not what a command costs
"$PYTHON" -m compileall -q "$REPO/assign/src" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
secs3() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

t0=$(now)
"$ASSIGN" sample --n "$N" --workload ipfwd-mem --machine ultrasparc-t2 --backend model --db "$work/t2.db" --quiet >/dev/null
t1=$(now)
"$ASSIGN" estimate --db "$work/t2.db" > "$work/estimate.txt"
t2=$(now)
"$ASSIGN" report --db "$work/t2.db" --out "$work/report" >/dev/null
t3=$(now)
model=$("$PYTHON" - "$N" <<'PY'
import sys, time
from assign.backends.model import ModelBackend
from assign.sampling import draws
from assign.topology import get_machine
from assign.workloads import Workload
n = int(sys.argv[1])
t2 = get_machine("ultrasparc-t2")
ctx = draws(1, 0, n, 24, 64)
t = time.perf_counter(); draws(2, 0, n, 24, 64); d = time.perf_counter() - t
m = ModelBackend(t2, Workload("ipfwd-mem"))
ts = []
for _ in range(5):
    s = time.perf_counter(); m.predict(ctx); ts.append(time.perf_counter() - s)
print(f"{min(ts):.3f} {d:.3f}")
PY
)
read -r model_s draw_s <<<"$model"

echo "assign benchmark (model backend, UltraSPARC T2 model, ipfwd-mem x8 = 24 tasks, n=$N; $(nproc) cores)"
echo "  sample --n $N (draws, model, a commit per 4096):  $(secs "$t0" "$t1") s wall"
echo "  estimate on that sample:                       $(secs3 "$t1" "$t2") s wall (from the shell; target < 0.3 s)"
echo "  report (8 figures PNG+SVG, HTML):              $(secs "$t2" "$t3") s wall"
echo "  sample + estimate + report:                    $(secs "$t0" "$t3") s wall (README target: < 60 s on 2 cores)"
echo "  model alone, $N assignments of 24 tasks:      $model_s s (best of 5, in-process)"
echo "  iid draws alone, $N assignments:              $draw_s s (in-process)"
echo "  estimate says: $(grep -E 'UPB, optimum|status:' "$work/estimate.txt" | tr -s ' ' | paste -sd ';' -)"

# The same model run on dask workers (--cluster local:1, local:2), beside the single process.
echo "dask.distributed (measured wall, n=$N, model backend; the cluster's start included):"
echo "  single process:       $(secs "$t0" "$t1") s"
for w in 1 2; do
  a=$(now)
  "$ASSIGN" sample --n "$N" --workload ipfwd-mem --machine ultrasparc-t2 --backend model --db "$work/c$w.db" \
    --quiet --cluster "local:$w" >/dev/null
  b=$(now)
  [ "$w" = 2 ] && c2_s=$(secs "$a" "$b")
  per=$(awk -v a="$a" -v b="$b" -v s0="$t0" -v s1="$t1" -v n="$N" 'BEGIN { printf "%.0f", ((b - a) - (s1 - s0)) / n * 1e6 }')
  echo "  --cluster local:$w:     $(secs "$a" "$b") s (engine overhead: $per us a draw, start included)"
done
# The identical-machines check's cost: the same local:2 run without references, beside the default
# (10 references a worker at start, then one every 50 draws).
a=$(now)
"$ASSIGN" sample --n "$N" --workload ipfwd-mem --machine ultrasparc-t2 --backend model --db "$work/c0.db" \
  --quiet --cluster local:2 --reference-every 0 >/dev/null 2>&1
b=$(now)
refs=$("$PYTHON" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
    "SELECT COUNT(*) FROM reference_measurements").fetchone()[0])' "$work/c2.db")
echo "  --cluster local:2 --reference-every 0 (no machine check): $(secs "$a" "$b") s; with the default check" \
     "($refs reference measurements, modelled): wall with / without = $(awk -v a="$a" -v b="$b" -v c="$c2_s" \
     'BEGIN { printf "%.2f", c / (b - a) }') (measured)"

# How cost grows with n: each n a fresh run; estimate best of 3 (wall, from the shell). The sample's wall
# includes building the store's value index when it ends (store.py); the estimate reads the top of the run
# through it.
echo "scaling (measured wall times, from the shell, interpreter start included; load average $(cut -d' ' -f1 /proc/loadavg)):"
printf '  %9s  %12s  %14s\n' "n" "sample (s)" "estimate (s)"
n=1000
est_small="" est_large=""
while [ "$n" -le "$SCALE_MAX" ]; do
  db="$work/scale-$n.db"
  a=$(now)
  "$ASSIGN" sample --n "$n" --workload ipfwd-mem --machine ultrasparc-t2 --backend model --db "$db" --quiet >/dev/null
  b=$(now)
  best=""
  for _ in 1 2 3; do
    c=$(now); "$ASSIGN" estimate --db "$db" >/dev/null; d=$(now)
    e=$(secs3 "$c" "$d")
    best=$(awk -v x="$e" -v y="${best:-$e}" 'BEGIN { print (x < y) ? x : y }')
  done
  printf '  %9d  %12s  %14s\n' "$n" "$(secs "$a" "$b")" "$best"
  [ -z "$est_small" ] && est_small=$best
  est_large=$best large_n=$n
  [ -n "${large_db:-}" ] && rm -f "$large_db" "$large_db-wal" "$large_db-shm"
  large_db=$db
  n=$((n * 10))
done
echo "  estimate at n=$large_n: $est_large s beside $est_small s at n=1000 (ratio $(awk -v a="$est_large" -v b="$est_small" \
  'BEGIN { printf "%.2f", a / b }'); load average now $(cut -d' ' -f1 /proc/loadavg))"
# The same estimate on one core: ASSIGN_SERIAL=1 keeps the paper's estimate and the store's page check in the
# process instead of a forked one (assign/src/assign/beside.py); alternately with the default, best of 3 each.
best_fork="" best_serial=""
for _ in 1 2 3; do
  c=$(now); "$ASSIGN" estimate --db "$large_db" >/dev/null; d=$(now)
  e=$(secs3 "$c" "$d"); best_fork=$(awk -v x="$e" -v y="${best_fork:-$e}" 'BEGIN { print (x < y) ? x : y }')
  c=$(now); ASSIGN_SERIAL=1 "$ASSIGN" estimate --db "$large_db" >/dev/null; d=$(now)
  e=$(secs3 "$c" "$d"); best_serial=$(awk -v x="$e" -v y="${best_serial:-$e}" 'BEGIN { print (x < y) ? x : y }')
done
echo "  estimate at n=$large_n, alternately: $best_fork s with the paper's estimate beside it on a second core," \
     "$best_serial s in one process (ASSIGN_SERIAL=1)"
echo "  targets: sample of 10^6 under 20 s, estimate on 5000 under 0.3 s (issue 14); estimate at 10^6 at most 0.3 s (issue 56)"
# Where the estimate's time goes at the largest n: one run in-process, each stage timed where it is called.
"$PYTHON" - "$large_db" "$large_n" <<'PY'
import contextlib, io, sys, time
path, n = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
import numpy  # noqa: F401
t1 = time.perf_counter()
import assign.cli
import assign.evt as evt
import assign.evt.certificate as cert
import assign.evt.deconvolution as dc
import assign.run_sample as rs
import assign.store as st
t2 = time.perf_counter()
spent: dict[str, float] = {}
import assign.packs as packs
stages = [(evt, "estimate", "the paper's estimate from single values (beside)"), (dc, "fit", "the deconvolution fit"),
          (st.Store, "top_values", "reading the top values"), (st.Store, "repeat_arrays", "reading the repetitions"),
          (rs, "found_placements", "the found placements"), (cert, "certify", "the certificate"),
          (rs, "measurement_cost", "the cost's counts"), (packs, "walk", "the check of every page (beside)")]
for owner, name, label in stages:
    def timed(*a, _f=getattr(owner, name), _label=label, **k):
        s = time.perf_counter()
        try:
            return _f(*a, **k)
        finally:
            spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - s
    setattr(owner, name, timed)
sys.argv = ["assign", "estimate", "--db", path]
import os
os.environ["ASSIGN_SERIAL"] = "1"  # every stage in this process, where it is timed
s = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    assign.cli.main()
run = time.perf_counter() - s
print(f"where the estimate's time goes at n={n} (measured, in-process, one run on one core, ASSIGN_SERIAL=1; Python's "
      f"own start not included; by default the stages marked beside run in a forked process beside the rest):")
print(f"  import numpy {t1 - t0:.3f} s, assign's modules {t2 - t1:.3f} s, the command {run:.3f} s, of which:")
for label, secs in sorted(spent.items(), key=lambda kv: -kv[1]):
    print(f"    {label:42s} {secs:.3f} s")
print(f"    {'the rest':42s} {run - sum(spent.values()):.3f} s")
PY
rm -f "$large_db" "$large_db-wal" "$large_db-shm"

