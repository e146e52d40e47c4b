#!/usr/bin/env python3
"""How many measurements guided search (assign search --guide model) needs
to come within X% of the estimated optimum, against plain random sampling,
side by side in this one run.

The optimum is the EVT estimate (UPB, estimated) of a large iid sample of
the backend.  Random: the draws of one iid stream in order; the count is
the first n whose best is within X% of UPB.  Guided: the model (noise-free,
--guide-params) ranks --pool candidates and they are measured best-ranked
first; the count is the first k whose best is within X%.  On the T2 model
the measurements are modelled (noise included) and the guide is the same
model without noise; with --model-params FILE from assign calibrate on
--machine local the guide is the calibrated model, and the "measurements"
are still the model unless --measured is given (then the dpdk backend runs
each one: slow).

Usage: .venv/bin/python bench/guided-search.py [--workload ipfwd-mem]
           [--machine ultrasparc-t2] [--instances 8] [--x 1,2,5]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "assign" / "src"))

from assign.backends.model import ModelBackend, load_params  # noqa: E402
from assign.evt import estimate  # noqa: E402
from assign.sampling import draws  # noqa: E402
from assign.topology import get_machine  # noqa: E402
from assign.workloads import Workload  # noqa: E402


def first_within(values: np.ndarray, target: float) -> int | None:
    hit = np.flatnonzero(np.maximum.accumulate(values) >= target)
    return int(hit[0]) + 1 if hit.size else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="ipfwd-mem")
    ap.add_argument("--machine", default="ultrasparc-t2")
    ap.add_argument("--instances", type=int, default=8)
    ap.add_argument("--model-params", default=None)
    ap.add_argument("--n", type=int, default=5000, help="iid draws for the estimate and the random curve")
    ap.add_argument("--pool", type=int, default=100_000)
    ap.add_argument("--x", default="1,2,5", help="gaps to the estimated optimum, percent")
    a = ap.parse_args()
    topo = get_machine(a.machine)
    w = Workload(a.workload, a.instances)
    colocate = w.n_tasks > topo.n_contexts
    params = load_params(w.name, a.model_params, topo)
    measured = ModelBackend(topo, w, params, seed=1)            # the "measurements" (noise included)
    guide = ModelBackend(topo, w, params, noise_rel_sd=0.0)     # the guide (noise-free)
    iid = draws(1, 0, a.n, w.n_tasks, topo.n_contexts, colocate)
    v_iid = np.asarray(measured.measure_array(np.arange(a.n), iid).values)
    est = estimate(v_iid, cross_checks=False)
    if est.upb is None:
        print("no finite UPB from the iid sample: nothing to compare against")
        return 1
    pool = draws(2, 0, a.pool, w.n_tasks, topo.n_contexts, colocate)
    order = np.argsort(-guide.predict(pool)[0], kind="stable")
    v_guided = np.asarray(measured.measure_array(10_000_000 + np.arange(a.pool), pool[order]).values)
    print(f"{w.name} x{w.instances} on {topo.name}: measurements modelled (model backend, noise "
          f"{measured.noise:g}); UPB {est.upb:,.0f} packets/s (estimated from {a.n} iid draws)")
    print(f"{'within X% of UPB':>18} {'random: draws':>14} {'guided: draws':>14} {'random / guided':>16}")
    for x in (float(t) for t in a.x.split(",")):
        target = est.upb * (1 - x / 100)
        r, g = first_within(v_iid, target), first_within(v_guided, target)
        ratio = f"{r / g:.1f}" if r and g else "-"
        print(f"{x:>17g}% {r if r else f'> {a.n}':>14} {g if g else f'> {a.pool}':>14} {ratio:>16}")
    print("counts are measured in this run on the model (modelled values); UPB is estimated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
