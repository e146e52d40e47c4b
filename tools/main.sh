#!/usr/bin/env bash
# The main job, after tools/setup.sh:
#   1. ipfwd forwards a generated capture on this machine (measured), input
#      tier simlarge (`pipeplace run`): R -> P -> T pinned to its contexts;
#   2. assign on the model of the UltraSPARC T2 (modelled values, estimated
#      optimum): 5000 random assignments of 8 ipfwd-mem instances (24 tasks)
#      measured with 2% noise, as a real machine's measurements are, with the
#      planned repetitions; the optimum of placement means and its interval,
#      the placement `assign best` chooses by measuring the leading ones again
#      and its gap, the baselines, the report (the paper's UPB beside them).
# Everything it writes goes under results/ (or $PIPEPLACE_RESULTS).
set -euo pipefail
case "${1:-}" in
  '') ;;
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "main.sh: takes no arguments, got '$1' (see --help)" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=${PIPEPLACE_RESULTS:-$repo/results}
mkdir -p "$out"
py=.venv/bin/python
assign=.venv/bin/assign

echo "== 1. ipfwd on this machine (measured), input tier simlarge =="
# pipeplace sets up the ports (the tier's generated capture replayed by net_pcap
# into R, net_null behind T), places one instance (with 4+ contexts each task
# on its own, context 0 left to DPDK's main lcore; with fewer, R and T share
# one), runs the tier's window (simlarge: the paper's 3,000,000 packets) and
# tears everything down; the result, measured, goes to results/.
.venv/bin/pipeplace run -a ipfwd-l1 -i simlarge --json >"$out/ipfwd-run.json"
$py - "$out/ipfwd-run.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["result"]
print(f"ipfwd-l1, tier {d['tier']}, {d['instances']} instance: {r['value'] / 1e6:.2f} Mpps ({r['kind']}), "
      f"{r['forwarded_packets']:,} packets forwarded in a {r['window_s']:.3f} s window; accounting "
      f"(rx = tx + dropped + queued) {'ok' if r['accounting_ok'] else 'VIOLATED'}")
EOF
echo "result: $out/ipfwd-run.json"

echo
echo "== 2. assign on the model of the UltraSPARC T2 (modelled values with 2% noise, estimated optimum) =="
db="$out/assign-t2.db"
$assign count --machine ultrasparc-t2 --tasks 24 | head -1 |
  sed 's/^/distinct assignments of 24 tasks on the T2 (exact): /'
$assign sample --n 5000 --workload ipfwd-mem --machine ultrasparc-t2 --backend model \
  --noise 0.02 --seed 1 --db "$db" --quiet
echo
$assign best --db "$db" --out "$out/t2-best-placement.json"
echo
$assign estimate --db "$db"
echo
$assign baselines --db "$db"
$assign report --db "$db" --out "$out/assign-t2-report" | grep -E "^(report|figures)"
