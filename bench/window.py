#!/usr/bin/env python3
"""bench/window.py: how long must a measured placement's window be?  The
runtime times a `--packets` window from the workers' launch, so a short one
holds their start (re-pinning, cold caches, stateful's new flow table).
Measures, round after round, the drift reference (instances fused, one per
context) and one instance fused on each context, at each window size in
turn (the sizes taking turns within a round), through the dpdk backend as
`assign calibrate` and `validate` do; then prints each placement's median,
range and coefficient of variation per size (measured), and the cycles per
packet of its busiest context (each task's polls that moved packets): a
short window's start shows there as more cycles per packet, not as idle
time.  A window long
enough gives one instance the same rate on every context and a reference
that holds still; `assign calibrate`'s default (characterize/fit.py,
window_packets) is printed beside the sizes asked for, when a
characterization is given.

Run with the project's venv, on a build with the app:
  .venv/bin/python bench/window.py --workload stateful --rounds 8 [--packets 100000,1000000]
      [--characterization char-stateful.json]
"""
from __future__ import annotations

import argparse
import json
import sys

try:
    import numpy as np

    from assign.backends.dpdk.options import DpdkOptions
    from assign.commands._args import packet_counts
    from assign.characterize.fit import window_packets
    from assign.characterize.meter import PlacementMeter, tasks_by_context
    from assign.characterize.rounds import reference_placement
    from assign.topology import get_machine
    from assign.workloads import Workload, WorkloadError, input_label
except ImportError as e:
    sys.exit(f"bench/window.py: {e}; run it with the project's venv: .venv/bin/python bench/window.py")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="stateful")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--packets", type=packet_counts, default=[100_000, 1_000_000],
                    help="window sizes, packets per instance, comma-separated (default: 100000,1000000)")
    ap.add_argument("--characterization", metavar="FILE",
                    help="assign characterize --json file of the workload: adds calibrate's default window")
    a = ap.parse_args()
    if a.rounds < 3:
        ap.error(f"--rounds {a.rounds}: a spread needs at least 3")
    try:
        Workload(a.workload, 1)
    except WorkloadError as e:
        ap.error(f"--workload: {e}")
    sizes = list(a.packets)
    hz = None
    if a.characterization:
        try:
            with open(a.characterization) as f:
                char = json.load(f)
            default = window_packets(char)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"bench/window.py: --characterization {a.characterization}: {e}")
        if char.get("workload") != a.workload:
            sys.exit(f"bench/window.py: --characterization {a.characterization} is for {char.get('workload')!r}")
        hz = float(char["timer"]["tsc_hz"])
        print(f"calibrate's default window for {a.workload}: {default:,} packets per instance (estimated)")
        if default not in sizes:
            sizes.append(default)
    topo = get_machine("local")
    placements = [("reference", reference_placement(topo, 4))]
    placements += [(f"1 fused on {c}", (1, (int(c),) * 3)) for c in topo.os_index]
    meters = {n: PlacementMeter(topo, a.workload, DpdkOptions(packets=n, warmup=0.0)) for n in sizes}
    got = {(name, n): [] for name, _ in placements for n in sizes}
    try:
        for rnd in range(a.rounds):
            for name, (k, ctx) in placements:
                for n in sizes:
                    got[(name, n)].append(meters[n](k, ctx))
            print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    finally:
        for m in meters.values():
            m.close()
    busiest = {(name, n): busiest_context(meters[n].task_cycles(k, ctx)) for name, (k, ctx) in placements
               for n in sizes}
    print(f"{a.workload}, {a.rounds} rounds; Mpps (measured): median [min-max] CV")
    print(input_label(a.workload, None, None, None).replace(", window the run's", ", windows below"))
    print(f"{'placement':18}" + "".join(f"{f'{n:,} packets':>32}" for n in sizes))
    for name, _ in placements:
        row = ""
        for n in sizes:
            v = np.array(got[(name, n)]) / 1e6
            row += f"{f'{np.median(v):.2f} [{v.min():.2f}-{v.max():.2f}] {100 * v.std(ddof=1) / v.mean():.1f}%':>32}"
        print(f"{name:18}{row}")
    # where a short window's time goes: the busiest context's cycles per packet (its tasks' polls
    # that moved packets), and with a characterization's TSC rate, the share of the window they fill
    print("cycles per packet of the busiest context (measured, each task's median over the rounds)"
          + ("; busy: the share of the window its tasks' polls took (estimated from the median rate)"
             if hz else ""))
    for name, (k, _) in placements:
        row = ""
        for n in sizes:
            cpp = busiest[(name, n)]
            rate = float(np.median(got[(name, n)])) / k  # one instance's packets per second
            cell = "-" if cpp is None else f"{cpp:.0f}" + (f", busy {100 * rate * cpp / hz:.0f}%" if hz else "")
            row += f"{cell:>32}"
        print(f"{name:18}{row}")
    return 0


def busiest_context(tasks: list[dict] | None) -> float | None:
    """The largest sum of one context's tasks' cycles per packet (it serves them in turn), or None."""
    if not tasks:
        return None
    return max(sum(t["cycles_per_packet"] for t in ts) for ts in tasks_by_context(tasks).values())


if __name__ == "__main__":
    sys.exit(main())
