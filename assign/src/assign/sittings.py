"""A measured run's values by sitting (each `assign sample` that measured into
it; values from before sittings were recorded form sitting 0), and whether
they come from one distribution, as the EVT estimate assumes: the
Anderson-Darling k-sample test (scipy.stats.anderson_ksamp).  A sitting on a
cluster records the coordinator's ground; its values were measured on the
workers, whose grounds (stored for each sitting, or with the worker in a
store from before that) are listed with it."""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field

import numpy as np

from .ground import summary

MIN_VALUES = 50      # a sitting with fewer is listed, not tested
ONE_DISTRIBUTION_P = 0.01


@dataclass
class Sitting:
    number: int              # 0: before sittings were recorded; k + 1: the stored sitting seq k
    first_idx: int
    started: str | None
    ground: dict | None
    values: list[float]
    # the distinct grounds of the cluster workers that measured its values (None: a worker's not
    # recorded); empty for values measured in one process
    worker_grounds: list[dict | None] = field(default_factory=list)

    def to_dict(self) -> dict:
        v = np.asarray(self.values)
        return {"sitting": self.number, "first_draw": self.first_idx, "started": self.started,
                "n": len(v), "median": float(np.median(v)), "max": float(v.max()),
                "host": (self.ground or {}).get("host"), "app_sha256": (self.ground or {}).get("app_sha256"),
                "cluster": (self.ground or {}).get("cluster"), "worker_grounds": self.worker_grounds}


def split(store, run_id: int) -> list[Sitting]:
    """The run's values (store.values's) by sitting, sittings without a value left out."""
    stored = store.sittings(run_id)
    starts = [first for _, first, _, _ in stored]
    groups = [Sitting(0, 0, None, None, [])] + [Sitting(q + 1, first, t, g, []) for q, first, t, g in stored]
    for idx, v in store.indexed_values(run_id):
        groups[int(np.searchsorted(starts, idx, side="right"))].values.append(v)
    # the workers that measured each sitting's values, and what they measured on
    by_worker: list[set[str]] = [set() for _ in groups]
    for idx, w in store.value_workers(run_id):
        by_worker[int(np.searchsorted(starts, idx, side="right"))].add(w)
    grounds = store.worker_grounds(run_id) if any(by_worker) else {}  # as first seen
    in_sitting = store.sitting_worker_grounds(run_id) if any(by_worker) else {}
    for g, workers in zip(groups, by_worker):
        # what each worker reported in this sitting (sitting g.number is stored as seq g.number - 1),
        # else as the run first saw it (a store from before sitting_workers)
        distinct = {json.dumps(in_sitting.get((g.number - 1, w), grounds.get(w)), sort_keys=True)
                    for w in workers}
        g.worker_grounds = [json.loads(x) for x in sorted(distinct)]
    return [g for g in groups if g.values]


def compare(groups: list[Sitting]) -> dict | None:
    """The k-sample test over the sittings of at least MIN_VALUES values; None with fewer than two."""
    tested = [g for g in groups if len(g.values) >= MIN_VALUES]
    if len(tested) < 2:
        return None
    with warnings.catch_warnings():  # scipy warns when it caps the p-value to [0.001, 0.25]: said below
        warnings.simplefilter("ignore")
        from scipy.stats import anderson_ksamp
        r = anderson_ksamp([np.asarray(g.values) for g in tested])
    p = float(r.pvalue)
    return {"test": "Anderson-Darling k-sample (scipy.stats.anderson_ksamp)", "kind": "estimated",
            "sittings": [g.number for g in tested], "statistic": float(r.statistic), "p": p,
            "p_reads": "p <= 0.001" if p <= 0.001 else "p >= 0.25" if p >= 0.25 else f"p = {p:.3f}",
            "one_distribution": p >= ONE_DISTRIBUTION_P}


def describe(groups: list[Sitting], test: dict | None) -> list[str]:
    """Lines for the estimate's text output: each sitting, then the test's verdict."""
    lines = []
    for g in groups:
        d = g.to_dict()
        when = ("before sittings were recorded" if g.number == 0 else
                f"from {g.started[:16]} on {d['host']}" if d["cluster"] is None else
                f"from {g.started[:16]} on cluster {d['cluster']}, coordinated from {d['host']}")
        lines.append(f"  sitting {g.number} ({when}): n {d['n']}, median {d['median']:,.0f}, best {d['max']:,.0f} "
                     f"(measured)")
        if g.worker_grounds:
            lines.append("    measured by cluster workers on: "
                         + "; ".join(sorted({summary(w) for w in g.worker_grounds})))
    if test is None:
        return lines
    if test["one_distribution"]:
        lines.append(f"  the sittings' values agree ({test['test']}, {test['p_reads']}): one distribution, "
                     f"as the estimate assumes")
    else:
        lines.append(f"  warning: the sittings' values differ ({test['test']}, {test['p_reads']}): they do not come "
                     f"from one distribution, and the estimate above assumes they do; estimate one sitting "
                     f"(--sitting K), or sample on one ground")
    return lines
