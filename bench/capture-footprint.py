#!/usr/bin/env python3
"""bench/capture-footprint.py: how much of R's cost is the replay's own?
With `--traffic pcap`, each instance's R receives through net_pcap's
infinite replay, which copies every frame out of the capture it holds in
memory.  A capture larger than the caches puts memory misses on R that a
NIC writing frames by DMA would not, and R tasks sharing a context evict
each other's captures.  This benchmark measures, round after round, one
instance fused alone, two fused instances taking turns on one context, and
two fused instances on two contexts, with each capture size given
(--capture-packets, the sizes taking turns within a round), through the
dpdk backend as `assign sample` measures; then prints each placement's
median Mpps and the median of its R tasks' cycles per packet (measured:
the runtime's counters of the polls that moved packets), and R's cost
stacked over alone (measured ratio).  Before the rounds and after them it
reads how much last-level cache the host leaves this machine
(pp-steadiness memory MIB: dependent loads over buffers of 4 to 64 MiB,
ns per load, measured): on a shared host that moves with the other
tenants, and R's cost with a large capture moves with it.

Run with the project's venv, on a build with the app:
  .venv/bin/python bench/capture-footprint.py --workload stateful --sizes 1024,4096,32768 --rounds 3
      [--packets 2000000]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

try:
    import numpy as np

    from assign.backends.base import BackendError
    from assign.backends.dpdk.options import DpdkOptions, default_build_dir
    from assign.characterize.meter import PlacementMeter
    from assign.commands._args import packet_counts
    from assign.topology import get_machine
    from assign.workloads import Workload, WorkloadError, input_label
except ImportError as e:
    sys.exit(f"bench/capture-footprint.py: {e}; run it with the project's venv: "
             ".venv/bin/python bench/capture-footprint.py")


PROBE_MIB = (4, 8, 16, 32, 64)


def cache_probe(cpu: int) -> str:
    """ns per dependent load over each of PROBE_MIB MiB (median of 5 windows of 50 ms, measured)."""
    exe = default_build_dir() / "tools" / "pp-steadiness"
    out = []
    for mib in PROBE_MIB:
        r = subprocess.run([str(exe), str(cpu), "5", "50", "memory", str(mib)], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            return f"not measured ({exe}: {r.stderr.strip() or r.returncode})"
        out.append(f"{mib} MiB {1e3 / float(np.median(json.loads(r.stdout)['rates'])):.0f}")
    return ", ".join(out) + " ns per load"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="stateful")
    ap.add_argument("--sizes", type=packet_counts, default=[1024, 4096, 32768],
                    help="capture sizes, packets per instance's capture, comma-separated (default: 1024,4096,32768)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--packets", type=int, default=2_000_000, help="window: packets per instance (default: 2000000)")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: expected at least 1")
    if a.packets < 1:
        ap.error(f"--packets {a.packets}: expected at least 1")
    try:
        Workload(a.workload, 1)
    except WorkloadError as e:
        ap.error(f"--workload: {e}")
    topo = get_machine("local")
    c = [int(x) for x in topo.os_index]
    placements = [("1 fused", (1, (c[0],) * 3)), ("2 fused, one context", (2, (c[0],) * 6))]
    if len(c) > 1:
        placements.append(("2 fused, two contexts", (2, (c[0],) * 3 + (c[1],) * 3)))
    meters = {n: PlacementMeter(topo, a.workload, DpdkOptions(packets=a.packets, warmup=0.0, capture_packets=n))
              for n in a.sizes}
    got: dict[tuple[str, int], list[float]] = {(name, n): [] for name, _ in placements for n in a.sizes}
    probes = [f"before: {cache_probe(c[0])}"]
    try:
        for rnd in range(a.rounds):
            for name, (k, ctx) in placements:
                for n in a.sizes:
                    got[(name, n)].append(meters[n](k, ctx))
            print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    except BackendError as e:
        sys.exit(f"bench/capture-footprint.py: {e}")
    finally:
        for m in meters.values():
            m.close()
    probes.append(f"after: {cache_probe(c[0])}")

    def r_cycles(n: int, k: int, ctx: tuple) -> float | None:
        tasks = meters[n].task_cycles(k, ctx)
        rs = [t["cycles_per_packet"] for t in tasks or [] if t["task"].startswith("R")]
        return float(np.median(rs)) if rs else None

    print(input_label(a.workload, None, a.packets).replace("capture", "captures of the sizes below, default", 1))
    print(f"{a.workload}, {a.rounds} round(s) of {a.packets:,} packets per instance, net_pcap replay into net_null; "
          "Mpps and R's cycles per packet (measured, medians over the rounds)")
    print(f"{'capture packets':>15}" + "".join(f"{name:>32}" for name, _ in placements) + f"{'R stacked / alone':>20}")
    for n in a.sizes:
        row, alone, stacked = "", None, None
        for name, (k, ctx) in placements:
            mpps = float(np.median(got[(name, n)])) / 1e6
            r = r_cycles(n, k, ctx)
            if name == "1 fused":
                alone = r
            elif name == "2 fused, one context":
                stacked = r
            row += f"{f'{mpps:.2f} Mpps, R {r:.0f}' if r is not None else f'{mpps:.2f} Mpps, R -':>32}"
        ratio = f"{stacked / alone:.2f}" if alone and stacked else "-"
        print(f"{n:>15,}{row}{ratio:>20}")
    print(f"last-level cache left to context {c[0]} (pp-steadiness memory, dependent loads, measured): "
          + "; ".join(probes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
