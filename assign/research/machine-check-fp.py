#!/usr/bin/env python3
"""How often the identical-machines rule of `assign sample --cluster`
(assign/src/assign/machine_check.py) flags identical workers by chance, and
how often it finds one that differs: simulated reference values (normal and
Student-t(3) noise of sd 1 around 1000), each trial a judgement at the
fewest references the rule judges (MIN_REFERENCES a worker, its worst
case), the 1% floor set to 0 so that the noise factor alone decides.
Prints counts side by side; all figures are simulated.

Usage: assign/research/machine-check-fp.py [--trials N]   (default 5000: about 2 minutes on a loaded 2-core box)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from assign import machine_check as mc  # noqa: E402


def trials(rng: np.random.Generator, n: int, workers: int, noise: str, shift: float) -> int:
    """Judgements out of n that flag worker 0 (shifted by `shift` noise sds) or, unshifted, any worker."""
    hits = 0
    for _ in range(n):
        x = rng.standard_normal((workers, mc.MIN_REFERENCES)) if noise == "normal" else \
            rng.standard_t(3, (workers, mc.MIN_REFERENCES))
        x[0] += shift
        got = mc.differing_workers({str(i): 1000.0 + x[i] for i in range(workers)})
        hits += any(v.worker == "0" for v in got) if shift else bool(got)
    return hits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=5000)
    args = ap.parse_args()
    if args.trials < 1:
        ap.error(f"--trials {args.trials}: must be >= 1")
    mc.FLOOR = 0.0
    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    print(f"identical-machines rule: NOISE_FACTOR {mc.NOISE_FACTOR:g}, MIN_REFERENCES {mc.MIN_REFERENCES}, "
          f"floor off; {args.trials} simulated judgements a row")
    print(f"  {'workers':>7} {'noise':>7}  {'false alarms (identical)':>26}  {'found: one off by 10 sd':>24}"
          f"  {'found: one off by 6 sd':>23}")
    for workers in (2, 3, 4):
        for noise in ("normal", "t3"):
            fa = trials(rng, args.trials, workers, noise, 0.0)
            found = [trials(rng, max(1, args.trials // 10), workers, noise, s) if workers > 2 else None
                     for s in (10.0, 6.0)]
            cells = [f"{f}/{max(1, args.trials // 10)}" if f is not None else "n/a (2: ambiguous)" for f in found]
            print(f"  {workers:>7} {noise:>7}  {f'{fa}/{args.trials}':>26}  {cells[0]:>24}  {cells[1]:>23}")
    print(f"  (simulated; {time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
