#!/usr/bin/env python3
"""The optimum of placement means under measurement noise, on the model
(issue 40's goals; method and reading: assign/EVT.md, "Validation").

  spaces    small synthetic machines where every distinct placement is
            evaluated without noise (the exact optimum), three workloads,
            noise 0, 1, 2, 5%, sampled by the real code path (the model
            backend, the planned repetitions, the store): coverage of the 95%
            interval (goal >= 90%) and median |error| in noise sds (goal <= 1)
  endpoint  values with a known end point (the noiseless coverage table's
            distributions) with 1, 2, 5% noise: coverage (goal >= 90%)
  t2        the model of the T2 (no enumeration possible): the same draws with
            and without noise; does the noisy interval hold the noiseless
            estimate (goal >= 90%)?
Every run also prints the share of its measurements spent on repetitions
(goal <= 20% with the selection, which `assign best` adds: the measured part
and assign/tests/test_best_selection.py measure that).

  measured  on this machine with the dpdk backend against ground truth
            (`assign enumerate --reps`): bench/lib/optimum_measured.py, run
            as `bench/optimum.py measured [--help]`; needs a quiet machine

    .venv/bin/python bench/optimum.py [--seeds 100] [--n 5000] [--jobs 2] [--part spaces endpoint t2]
                                      [--spaces 'pack:2 core:4 pu:2 x3' ...] [--noises 0 0.01 ...]
    .venv/bin/python bench/optimum.py measured [--workloads stateful analyzer ipfwd-l1] [--n 2000]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from concurrent.futures import ProcessPoolExecutor

try:
    from assign.evt import coverage_noise as cn
except ImportError:
    sys.exit("run it with the project's venv: .venv/bin/python bench/optimum.py (tools/setup.sh makes it)")

SPACES = [  # (topology, instances): every placement drawn by 5000 draws / most of them / a fraction
    ("pack:1 core:4 pu:2", 2),
    ("pack:1 core:6 pu:2", 3),
    ("pack:2 core:4 pu:2", 3),
]
WORKLOADS = ("stateful", "ipfwd-l1", "ahocorasick")
NOISES = (0.0, 0.01, 0.02, 0.05)
ENDPOINT_DISTS = ("uniform(0,1)", "beta(3,2)", "beta(2,3)", "rev-weibull(c=2)", "rev-weibull(c=4)")


def _space(job):
    topo, inst, wl, noise, seed, n = job
    case, cost = cn.space_case(topo, wl, inst, noise, seed, n)
    return (f"{topo} x{inst} {wl}", noise), case, cost


def _endpoint(job):
    dist, noise, seed, n = job
    return (dist, noise), cn.endpoint_case(dist, noise, seed, n), None


def _t2(job):
    wl, noise, seed, n = job
    case, cost = cn.t2_case(wl, 8, noise, seed, n)
    return (f"T2 {wl} x8 (truth: the same draws' noiseless estimate)", noise), case, cost


def run_part(name, fn, jobs, workers) -> list[cn.Summary]:
    """The jobs in row order; each row printed as soon as its runs are in."""
    sums: dict = {}
    costs: dict = {}
    t0 = time.time()
    print(f"\n{name}: {len(jobs)} runs", flush=True)
    print(cn.HEADER, flush=True)
    out: list[cn.Summary] = []

    def close(key) -> None:
        s = sums[key]
        if key in costs:
            s.extra["cost_pct"] = max(costs[key])
        out.append(s)
        print(s.row(), flush=True)

    last = None
    with ProcessPoolExecutor(workers) as ex:
        for key, case, cost in ex.map(fn, jobs, chunksize=1):
            if last is not None and key != last:
                close(last)
            last = key
            sums.setdefault(key, cn.Summary(key[0], key[1])).cases.append(case)
            if cost is not None:
                costs.setdefault(key, []).append(cost)
    if last is not None:
        close(last)
    print(f"({time.time() - t0:.0f} s)", flush=True)
    return out


def main() -> int:
    if sys.argv[1:2] == ["measured"]:
        sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
        import optimum_measured
        return optimum_measured.main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help="replications per row (default: 100)")
    ap.add_argument("--n", type=int, default=5000, help="draws per run (default: 5000)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all CPUs)")
    ap.add_argument("--part", nargs="+", default=["spaces", "endpoint", "t2"], choices=["spaces", "endpoint", "t2"])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    ap.add_argument("--noises", nargs="+", type=float, default=list(NOISES), metavar="CV",
                    help="injected noise levels, as fractions (default: " + " ".join(f"{v:g}" for v in NOISES)
                         + "; the endpoint and t2 parts use the nonzero ones)")
    ap.add_argument("--spaces", nargs="+", default=[f"{t} x{i}" for t, i in SPACES], metavar="'TOPOLOGY xN'",
                    help="the spaces part's synthetic machines and instance counts (default: "
                         + ", ".join(f"'{t} x{i}'" for t, i in SPACES) + ")")
    args = ap.parse_args()
    if any(not 0.0 <= v < 1.0 for v in args.noises):
        ap.error(f"--noises {' '.join(map(str, args.noises))}: each a fraction in [0, 1) (0.02 is 2%)")
    noisy = [v for v in args.noises if v > 0]
    spaces = []
    for sp in args.spaces:
        topo, _, inst = sp.rpartition(" x")
        if not topo or not inst.isdigit() or int(inst) < 1:
            ap.error(f"--spaces '{sp}': not 'TOPOLOGY xN' (e.g. 'pack:2 core:4 pu:2 x3')")
        spaces.append((topo, int(inst)))
    print(f"optimum of placement means under noise: {args.seeds} seeds a row, n = {args.n} draws, every run "
          f"planning one repetition per 20 draws (modelled values; estimates labelled estimated)")
    verdicts = []
    if "spaces" in args.part:
        for topo, inst in spaces:  # the exact optima first, once each
            for wl in args.workloads:
                cn.exact_optimum(topo, wl, inst)
        jobs = [(t, i, wl, nz, s, args.n) for t, i in spaces for wl in args.workloads for nz in args.noises
                for s in range(args.seeds)]
        rows = run_part("spaces (truth: the exact optimum of the noiseless model)", _space, jobs, args.jobs)
        cov = min(r.coverage for r in rows)
        err = max((r.error_in_sds for r in rows if r.noise > 0), default=0.0)
        cost = max(r.extra.get("cost_pct", 0) for r in rows)
        verdicts.append(f"spaces: worst coverage {100 * cov:.1f}% (goal >= 90%), worst median |error| {err:.2f} noise "
                        f"sds (goal <= 1), repetitions at most {cost:.1f}% of a run's measurements")
    if "endpoint" in args.part:
        jobs = [(d, nz, s, args.n) for d in ENDPOINT_DISTS for nz in noisy for s in range(args.seeds)]
        rows = run_part("endpoint (truth: the known end point of the means, 1)", _endpoint, jobs, args.jobs)
        verdicts.append(f"endpoint: worst coverage {100 * min(r.coverage for r in rows):.1f}% (goal >= 90%)")
    if "t2" in args.part:
        jobs = [(wl, nz, s, args.n) for wl in ("ipfwd-mem", "stateful") for nz in noisy for s in range(args.seeds)]
        rows = run_part("t2 (truth: the noiseless estimate from the same draws)", _t2, jobs, args.jobs)
        verdicts.append(f"t2: worst containment {100 * min(r.coverage for r in rows):.1f}% (goal >= 90%)")
    print()
    for v in verdicts:
        print("summary: " + v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
