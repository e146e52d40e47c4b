#!/usr/bin/env bash
# The main job, after tools/setup.sh:
#   1. ipfwd forwards a generated capture on this machine for a few seconds
#      (measured): R -> P -> T pinned to this machine's contexts;
#   2. assign on the model of the UltraSPARC T2 (modelled values, estimated
#      optimum): 5000 random assignments of 8 ipfwd-mem instances (24 tasks)
#      measured with 2% noise, as a real machine's measurements are, with the
#      planned repetitions; the optimum of placement means and its interval,
#      the placement `assign best` chooses by measuring the leading ones again
#      and its gap, the baselines, the report (the paper's UPB beside them).
# Everything it writes goes under results/ (or $PIPEPLACE_RESULTS).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=${PIPEPLACE_RESULTS:-$repo/results}
mkdir -p "$out"
py=.venv/bin/python
assign=.venv/bin/assign

echo "== 1. ipfwd on this machine (measured) =="
pcap="$out/ipfwd-l1.pcap"
[ -f "$pcap" ] || $py apps/ipfwd/ipfwd_traffic.py l1 "$pcap" >/dev/null
# One instance. With 4+ contexts each task gets its own (context 0 stays
# with DPDK's main lcore); with fewer, R and T share context 0 and P has
# context 1 to itself.
if [ "$(nproc)" -ge 4 ]; then
  tasks='{"R": 1, "P": 2, "T": 3}' colocate=false
else
  tasks='{"R": 0, "P": 1, "T": 0}' colocate=true
fi
cat >"$out/ipfwd-placement.json" <<EOF
{"app": "ipfwd", "variant": "l1", "allow_colocate": $colocate,
 "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0},
                "tasks": $tasks}]}
EOF
build/apps/ipfwd/ipfwd --no-pci --file-prefix pp-main --no-telemetry --log-level 'lib.*:warning' \
  --vdev "net_pcap0,rx_pcap=$pcap,infinite_rx=1" --vdev net_null0 \
  -- --placement "$out/ipfwd-placement.json" --warmup 1 --duration 3 \
  --stats "$out/ipfwd-stats.json" </dev/null
$py - "$out/ipfwd-stats.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["total"]
print(f"ipfwd l1, 1 instance: {t['pps'] / 1e6:.2f} Mpps ({s['kind']}), "
      f"rx {t['rx_packets']:,} = tx {t['tx_packets']:,} + dropped {t['dropped_packets']:,}"
      f" + queued {t['queued_packets']:,}: accounting {'ok' if s['accounting_ok'] else 'VIOLATED'}")
EOF
echo "statistics: $out/ipfwd-stats.json"

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
