"""Does the EVT interval from 1000 random samples hold the true optimum?

The model of ipfwd-mem with 2 instances (6 tasks) on the T2: `enumerate`
evaluates all 1,526 distinct assignments, as measuring each once would (with
the workload's measurement noise), which gives the optimum.  Then 100
replications, each 1000 iid random assignments measured afresh, each
estimated at 95%.  The fraction of intervals holding the optimum is printed;
an estimate that reports no interval (poor fit) counts as a miss.
"""
from __future__ import annotations

import collections

import numpy as np

from assign.backends.base import MeasureRequest
from assign.enumeration import representatives
from assign.evt import EstimateError, estimate
from assign.backends.model import ModelBackend
from assign.sampling import draws
from assign.topology import get_machine
from assign.workloads import Workload

REPLICATIONS = 100
N = 1000
WORKLOAD = "ipfwd-mem"


def _requests(topo, ctx: np.ndarray, first: int = 0) -> list[MeasureRequest]:
    return [MeasureRequest(first + i, tuple(int(x) for x in topo.os_index[row])) for i, row in enumerate(ctx)]


def test_enumerated_optimum_inside_the_interval_in_most_replications():
    topo = get_machine("ultrasparc-t2")
    workload = Workload(WORKLOAD, 2)
    reps, _ = representatives(topo, workload.n_tasks)
    reps = np.array(reps)
    enum_backend = ModelBackend(topo, workload, seed=10_000)
    assert enum_backend.noise > 0
    optimum = max(r.value for r in enum_backend.measure(_requests(topo, reps)))
    noiseless_optimum = float(enum_backend.predict(reps)[0].max())

    covered = covered_noiseless = two_sided = 0
    statuses: collections.Counter[str] = collections.Counter()
    for r in range(REPLICATIONS):
        backend = ModelBackend(topo, workload, seed=r)
        values = [res.value for res in backend.measure(_requests(topo, draws(r, 0, N, workload.n_tasks, 64)))]
        try:
            est = estimate(values, confidence=0.95)
        except EstimateError:
            statuses["no estimate"] += 1
            continue
        statuses[est.status] += 1
        if est.upb_ci_low is None:
            continue
        high = np.inf if est.upb_ci_high is None else est.upb_ci_high
        two_sided += bool(np.isfinite(high))
        covered += est.upb_ci_low <= optimum <= high
        covered_noiseless += est.upb_ci_low <= noiseless_optimum <= high
    fraction = covered / REPLICATIONS
    print(f"\n{WORKLOAD} x2 (6 tasks) on the T2, model: enumerate optimum {optimum:,.0f} pps (modelled); "
          f"95% interval from {N} random samples holds it in {covered}/{REPLICATIONS} = {fraction:.2f} replications "
          f"(noise-free optimum {noiseless_optimum:,.0f}: {covered_noiseless}/{REPLICATIONS}); "
          f"two-sided intervals: {two_sided}; statuses: {dict(statuses)}")
    assert fraction >= 0.75
