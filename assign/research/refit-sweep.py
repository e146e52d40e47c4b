#!/usr/bin/env python3
"""assign/research/refit-sweep.py: which context-share choice predicts better, over
every stored calibration?  assign/research/refit-calibration.py replays one stored
`assign calibrate` run; this replays all it finds under the given folders,
once per `--context-shares` value (one share for every context, one per
context, or Akaike's choice between them), and scores each refit on every
stored `assign validate` run of the same calibration.  Nothing is measured:
the figures are computed from stored measurements.

A calibration is found as params-W.json with char-W.json beside it (the files
assign/CALIBRATE.md's commands write: calibrate --out, characterize --json), and
its validations as every val*-W.json in the same folder (validate --json)
measured against it; a calibration and validation found twice (a test bed's
result folders repeat earlier files) count once.  A calibration that cannot be replayed (no drift
reference, a placement that failed in some round, placements this version
would not draw) is listed as skipped, with why.

Usage:
  .venv/bin/python assign/research/refit-sweep.py DIR [DIR ...]

Printed: per calibration and validation, each choice's median and 90th
percentile absolute error and Spearman's rank correlation on the
validation's placements, raw (the median of their measured rounds) and
drift-corrected where stored; then, over the pairs where Akaike's criterion
chose a share per context, how often one share did better.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from importlib import resources
from pathlib import Path
from statistics import median

try:
    import numpy as np

    import assign.characterize.fit as fit_mod
    from assign.commands.validate import compare
    from assign.topology import Node, Topology
except ImportError as e:
    sys.exit(f"assign/research/refit-sweep.py: {e}; run it with the project's venv: .venv/bin/python assign/research/refit-sweep.py")

_spec = importlib.util.spec_from_file_location("refit_calibration", Path(__file__).with_name("refit-calibration.py"))
refit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refit)

CHOICES = ("one", "per-context", "choose")


class Skip(Exception):
    pass


def pairs(dirs: list[Path]) -> list[tuple[str, Path, Path, list[Path]]]:
    """(workload, calibration, characterization, validations) found under dirs, each
    calibration-validation pair once (a test bed's result folders repeat earlier files)."""
    found, seen = [], set()
    digest = (lambda p: hashlib.sha256(p.read_bytes()).hexdigest())
    for d in dirs:
        for cal in sorted(d.rglob("params-*.json")):
            w = cal.name[len("params-"):-len(".json")]
            char = cal.with_name(f"char-{w}.json")
            if not char.is_file():
                continue
            c = digest(cal)
            vals = []
            for v in sorted(cal.parent.glob(f"val*-{w}.json")):
                if (c, digest(v)) not in seen:
                    seen.add((c, digest(v)))
                    vals.append(v)
            if vals:
                found.append((w, cal, char, vals))
    return found


def raw(topo: Topology, w: str, params: dict, placements: list[dict]) -> tuple[float, float, float]:
    pls = [(q["instances"], tuple(q["contexts"])) for q in placements]
    meas = [float(np.median(q["measured_reps_pps"])) for q in placements]
    f = compare(fit_mod.predict(topo, w, params, pls), meas)
    return f["median_abs_err_pct"], f["p90_abs_err_pct"], f["spearman"]


def refits(w: str, cal_path: Path, char_path: Path) -> tuple[Topology, dict[str, dict]]:
    """The calibration refitted with each context-share choice: choice -> the workload's parameters."""
    doc = json.loads(cal_path.read_text())
    char = json.loads(char_path.read_text())
    if doc.get("calibrated_for", {}).get("workload") != w or char.get("workload") != w:
        raise Skip(f"not a {w} calibration and characterization")
    cal = doc["calibration"]
    topo = Topology("local", "the calibration's machine (hwloc)", Node.from_json(doc["calibrated_for"]["machine"]))
    drift = "both" if "crossing_reference" in cal.get("drift", {}) else True
    n_random = sum(q.get("kind", "random") == "random" for q in cal["placements"])
    defaults = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    out = {}
    for choice in CHOICES:
        try:
            measure, reps = refit.replay(cal, set(), str(cal_path))
        except SystemExit as e:  # replay's refusal, for one calibration of many
            raise Skip(str(e)) from None
        fitted = fit_mod.fit(topo, w, char, defaults["workloads"][w], measure, n_random, log=lambda s: None,
                             reps=reps, drift_reference=drift, max_instances=int(cal.get("max_instances", 4)),
                             context_shares=choice)
        got = [(q["instances"], tuple(q["contexts"])) for q in fitted["calibration"]["placements"]]
        if got != [(q["instances"], tuple(q["contexts"])) for q in cal["placements"]]:
            raise Skip("its placements are not the ones calibrate draws now (another seed or version)")
        out[choice] = fitted["workloads"][w]
    return topo, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path, metavar="DIR",
                    help="folders holding params-W.json, char-W.json and val*-W.json files (searched recursively)")
    a = ap.parse_args()
    for d in a.dirs:
        if not d.is_dir():
            sys.exit(f"assign/research/refit-sweep.py: {d}: not a folder")
    found = pairs(a.dirs)
    if not found:
        sys.exit("assign/research/refit-sweep.py: no params-W.json with char-W.json and val*-W.json beside it under "
                 + ", ".join(map(str, a.dirs)))
    print("refitted from stored measurements (nothing measured); errors computed: median / p90 % / Spearman")
    print(f"{'calibration':34} {'validation':26} {'AIC':>4} " + " ".join(f"{c + ', raw':>24}" for c in CHOICES))
    chose_many: list[tuple[tuple, tuple]] = []  # (one, per-context) raw figures where AIC chose per context
    n_cal = 0
    for w, cal, char, vals in found:
        name = f"{cal.parent.name}/{cal.name}"
        try:
            topo, fits = refits(w, cal, char)
        except (Skip, KeyError, ValueError, OSError) as e:
            print(f"{name:34} skipped: {e}")
            continue
        n_cal += 1
        aic = len(set(round(v, 6) for v in fits["choose"].get("context_share", {"": 1}).values()))
        for v in vals:
            try:
                placements = json.loads(v.read_text())["placements"]
                figs = {c: raw(topo, w, fits[c], placements) for c in CHOICES}
            except (KeyError, ValueError, OSError) as e:
                print(f"{name:34} {v.name:26} skipped: {e}")
                continue
            print(f"{name:34} {v.name:26} {aic:4d} "
                  + " ".join(f"{m:7.1f} {p:6.1f} {r:6.3f}   " for m, p, r in figs.values()))
            if aic > 1:
                chose_many.append((figs["one"], figs["per-context"]))
    n = len(chose_many)
    print(f"\n{n_cal} calibrations replayed; AIC column: the distinct context shares Akaike's criterion kept")
    if n:
        def better(i: int, lower: bool) -> int:
            return sum((o[i] < p[i]) if lower else (o[i] > p[i]) for o, p in chose_many)
        print(f"where AIC chose a share per context ({n} calibration-validation pairs), one share instead "
              f"(raw, computed):")
        for i, what, lower in ((0, "median error", True), (1, "p90 error", True), (2, "Spearman", False)):
            change = median(o[i] - p[i] for o, p in chose_many)
            print(f"  {'lower' if lower else 'higher'} {what} in {better(i, lower)} of {n} "
                  f"(median change {change:+.{3 if i == 2 else 1}f}{'' if i == 2 else ' points'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
