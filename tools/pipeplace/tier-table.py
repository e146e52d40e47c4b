"""The input tiers' sizes and run times, measured here, as the Markdown table
of tools/pipeplace/README.md:

    .venv/bin/python tools/pipeplace/tier-table.py [--workloads a,b] [--tiers t1,t2] [--build DIR]

For every packaged workload and tier: the packets and bytes of one
instance's capture and the seconds its generator took (measured, in a
fresh cache directory), the window, and one instance's `pipeplace run`
(measured: the window's seconds, and the whole command's, Python and
DPDK start-up and tear-down included) with pipeplace's default placement."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from assign.backends.dpdk.options import default_build_dir
from assign.backends.dpdk.traffic import build_traffic
from assign.workloads import TIERS, Workload, known_workloads


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(n for n, s in known_workloads().items() if s.builtin))
    ap.add_argument("--tiers", default=",".join(TIERS))
    ap.add_argument("--build", type=Path, default=default_build_dir())
    a = ap.parse_args()
    pipeplace = Path(sys.executable).parent / "pipeplace"
    print("| workload | tier | capture (packets, MB per instance) | generated in | window (packets per instance) "
          "| window | run |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="tier-table-") as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        for name in a.workloads.split(","):
            spec = known_workloads()[name]
            for tier in a.tiers.split(","):
                t = spec.tier(tier)
                cached = list(Path(cache).rglob("*.pcap"))
                t0 = time.perf_counter()
                traffic = build_traffic(a.build, Workload(name, 1), Path(cache) / "pipeplace" / "assign-dpdk",
                                        t.capture_packets)
                gen = "cached" if traffic.captures[0] in cached else f"{time.perf_counter() - t0:.1f} s"
                mb = traffic.captures[0].stat().st_size / 1e6
                t0 = time.perf_counter()
                r = subprocess.run([str(pipeplace), "run", "-a", name, "-i", tier, "--json", "--build", str(a.build)],
                                   capture_output=True, text=True, env=env)
                if r.returncode != 0:
                    print(f"| {name} | {tier} | failed: {r.stderr.strip()[-200:]} |||||")
                    continue
                run_s = time.perf_counter() - t0
                res = json.loads(r.stdout)["result"]
                window = f"{t.packets:,}" if t.packets else f"{t.duration:g} s"
                print(f"| {name} | {tier} | {traffic.capture_packets:,}, {mb:,.1f} | {gen} "
                      f"| {window} | {res['window_s']:.2f} s ({res['value'] / 1e6:.2f} Mpps) "
                      f"| {run_s:.1f} s |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
