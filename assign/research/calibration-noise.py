#!/usr/bin/env python3
"""assign/research/calibration-noise.py: does a calibration measured while the machine
moved validate worse?  For every stored `assign calibrate` run with its
stored `assign validate` runs (found as assign/research/refit-sweep.py finds them), the
calibration's placement noise over rounds (median coefficient of variation
of each placement's raw rounds, measured) beside the validation's errors
(modelled vs measured) and its own noise; then, for a few noise limits, the
median validation error of the calibrations at or under the limit against
those over it.  Nothing is measured: the figures are read from the stored
files.  `assign calibrate` warns above CALIBRATION_NOISE_WARN_PCT
(assign/characterize/trust.py); this is the evidence for that limit.

Usage:
  .venv/bin/python assign/research/calibration-noise.py DIR [DIR ...]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from statistics import median

try:
    from assign.characterize.trust import CALIBRATION_NOISE_WARN_PCT
except ImportError as e:
    sys.exit(f"assign/research/calibration-noise.py: {e}; run it with the project's venv: "
             ".venv/bin/python assign/research/calibration-noise.py")

_spec = importlib.util.spec_from_file_location("refit_sweep", Path(__file__).with_name("refit-sweep.py"))
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)

LIMITS = (5.0, 10.0, 15.0, 20.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path)
    a = ap.parse_args()
    rows = []
    for w, cal, _char, vals in sweep.pairs(a.dirs):
        drift = json.loads(cal.read_text()).get("calibration", {}).get("drift") or {}
        noise = drift.get("noise_cv_pct_median_raw")
        if noise is None:  # one round per placement, or no drift reference: no noise over rounds
            continue
        for v in vals:
            d = json.loads(v.read_text())
            if "median_abs_err_pct" not in d:
                continue
            rows.append({"workload": w, "calibration": str(cal), "validation": str(v), "cal_noise": noise,
                         "median": d["median_abs_err_pct"], "p90": d["p90_abs_err_pct"],
                         "spearman": d.get("spearman"), "val_noise": d.get("noise_cv_pct_median")})
    if not rows:
        sys.exit("no calibration with a drift reference and more than one round, and a validation of it, found")
    rows.sort(key=lambda r: r["cal_noise"])
    print(f"{len(rows)} calibration-validation pairs (raw figures; noise: median CV over rounds, measured; "
          "errors: modelled vs measured)")
    print(f"{'calibration noise':>17} {'workload':<12} {'median err':>10} {'p90 err':>8} {'Spearman':>8} "
          f"{'validation noise':>16}  calibration")
    for r in rows:
        sp = "-" if r["spearman"] is None else f"{r['spearman']:.3f}"
        vn = "-" if r["val_noise"] is None else f"{r['val_noise']:.1f}%"
        print(f"{r['cal_noise']:>16.1f}% {r['workload']:<12} {r['median']:>9.1f}% {r['p90']:>7.1f}% {sp:>8} "
              f"{vn:>16}  {r['calibration']}")
    print(f"\nvalidation median error by the calibration's noise (calibrate warns above "
          f"{CALIBRATION_NOISE_WARN_PCT:g}%):")
    for lim in LIMITS:
        quiet = [r["median"] for r in rows if r["cal_noise"] <= lim]
        noisy = [r["median"] for r in rows if r["cal_noise"] > lim]
        def side(errs: list[float]) -> str:
            if not errs:
                return "none"
            return f"{median(errs):.1f}% over {len(errs)} ({sum(x > 10.0 for x in errs)} above the 10% goal)"

        print(f"  noise <= {lim:>4g}%: {side(quiet):<40}  noise > {lim:g}%: {side(noisy)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
