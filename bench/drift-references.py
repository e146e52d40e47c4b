#!/usr/bin/env python3
"""bench/drift-references.py: which drift reference takes the machine's
movement out of which placement?  Measures, round after round, the fused
reference (instances fused, one per context), the crossing reference (the
same instances, each split over two contexts), a few split placements and
a fused one, with both references again after them; then prints each
placement's spread over the rounds (coefficient of variation, measured)
raw, divided by the fused reference and divided by the crossing one (the
geometric mean of the two around it).  The lower figure says which
reference `assign calibrate/validate --drift-reference both` should scale
that kind of placement by (characterize/rounds.py).

Run with the project's venv, on a build with the app:
  .venv/bin/python bench/drift-references.py --workload ipfwd-l1 --rounds 40
"""
from __future__ import annotations

import argparse
import sys

try:
    import numpy as np

    from assign.backends.dpdk.options import DpdkOptions
    from assign.characterize.meter import PlacementMeter
    from assign.characterize.rounds import crossing_reference_placement, reference_placement, split
    from assign.topology import get_machine
    from assign.workloads import input_label
except ImportError as e:
    sys.exit(f"bench/drift-references.py: {e}; run it with the project's venv: .venv/bin/python "
             "bench/drift-references.py")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="ipfwd-l1")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--packets", type=int, default=100_000, help="window per instance (default: 100,000)")
    a = ap.parse_args()
    if a.rounds < 3:
        ap.error(f"--rounds {a.rounds}: a spread needs at least 3")
    topo = get_machine("local")
    fused = reference_placement(topo, 4)
    cross = crossing_reference_placement(topo, 4)
    if cross is None:
        sys.exit("bench/drift-references.py: one context: there is no placement to split")
    c0, c1 = fused[1][0], fused[1][3]
    tests = [(1, (c1, c0, c1)), (2, (c0, c1, c1, c0, c1, c0)), (3, (c0,) * 3 + (c1, c0, c0) * 2), (1, (c0,) * 3)]
    meter = PlacementMeter(topo, a.workload, DpdkOptions(packets=a.packets, warmup=0.0))
    f_ref, x_ref, vals = [], [], []
    try:
        for _ in range(a.rounds):
            f, x = meter(*fused), meter(*cross)
            v = [meter(*p) for p in tests]
            f2, x2 = meter(*fused), meter(*cross)
            f_ref.append(np.sqrt(f * f2))
            x_ref.append(np.sqrt(x * x2))
            vals.append(v)
    finally:
        meter.close()
    F, X, V = np.array(f_ref), np.array(x_ref), np.array(vals)

    def cv(v: np.ndarray) -> float:
        return float(v.std(ddof=1) / v.mean() * 100)

    print(input_label(a.workload, None, a.packets))
    print(f"{a.workload}, {a.rounds} rounds of {a.packets:,} packets per instance (all figures measured; CV over "
          "the rounds)")
    print(f"  fused reference {fused[0]} instance(s) on {list(fused[1])}: CV {cv(F):.1f}%")
    print(f"  crossing reference {cross[0]} instance(s) on {list(cross[1])}: CV {cv(X):.1f}%")
    print(f"  {'placement':42} {'kind':6} {'raw':>7} {'/fused':>7} {'/crossing':>9}")
    for j, p in enumerate(tests):
        v = V[:, j]
        print(f"  {f'{p[0]} on {list(p[1])}':42} {'split' if split(p) else 'fused':6} {cv(v):6.1f}% "
              f"{cv(v / F):6.1f}% {cv(v / X):8.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
