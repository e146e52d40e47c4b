#!/usr/bin/env python3
"""The harness's own overhead per figure of `assign characterize`, measured
in this one run: each figure (a role's cycles per packet, a sharing slowdown)
comes from one or more runs of the app; a run's overhead is its wall time
outside its measurement window (EAL start-up or re-pinning, port set-up,
drain, tear-down).  Printed per figure: runs, window seconds, overhead
seconds, and overhead / window side by side.

Usage: .venv/bin/python bench/characterize.py [--workload W] [--build DIR]
           [--packets N] [--max-reps N]
Needs build-profile/ (tools/setup.sh --asan) or --build DIR of a build
configured with -Dprofile=true.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "assign" / "src"))

from assign.characterize.harness import Harness, Settings  # noqa: E402
from assign.commands.characterize import default_profile_build  # noqa: E402
from assign.topology import get_machine  # noqa: E402
from assign.workloads import input_label  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="ipfwd-l1")
    ap.add_argument("--build", type=Path, default=None)
    ap.add_argument("--packets", type=int, default=200_000)
    ap.add_argument("--max-reps", type=int, default=5)
    a = ap.parse_args()
    s = Settings(build=(a.build or default_profile_build()).resolve(), packets=a.packets, min_reps=3,
                 max_reps=a.max_reps)
    h = Harness(get_machine("local"), a.workload, s)
    try:
        result = h.characterize(log=lambda *_: None)
    finally:
        h.close()
    by: dict[str, list[dict]] = defaultdict(list)
    for r in result["runs"]:
        by[r["what"]].append(r)
    print(f"{a.workload}, {a.packets:,} packets per run; all figures measured in this run")
    print(input_label(a.workload, None, a.packets))
    print(f"{'figure (runs that measure it)':34} {'runs':>4} {'window s':>9} {'overhead s':>10} {'overhead/window':>15}")
    tot_w = tot_o = 0.0
    for what, runs in by.items():
        w = sum(r["window_s"] for r in runs)
        o = sum(max(0.0, r["wall_s"] - r["window_s"]) for r in runs)
        tot_w += w
        tot_o += o
        label = "R, P, T cycles/packet (baseline)" if what == "baseline" else f"slowdown {what}"
        print(f"{label:34} {len(runs):4d} {w:9.3f} {o:10.3f} {o / w if w else float('nan'):15.2f}")
    print(f"{'all':34} {len(result['runs']):4d} {tot_w:9.3f} {tot_o:10.3f} {tot_o / tot_w:15.2f}")
    print(f"timer floor (measured): one TSC read {result['timer']['rdtsc_cycles']} cycles, one profile mark "
          f"{result['timer']['mark_cycles']:.1f} cycles; per packet: "
          + ", ".join(f"{r} {v['floor_cycles_per_packet']:.2f}" for r, v in result["roles"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
