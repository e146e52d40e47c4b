"""A stored run as the optimum-of-means estimate reads it (evt/optimum.py):
its draws' first values, every further measurement of them (planned noise
repetitions and selection rounds), and which distinct placement each draw is
(for every draw where the space is small enough for the sample to hold all
of it; for the tail's draws always)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .counting import count_assignments, orbit_keys
from .evt.optimum import RunSample
from .topology import Topology

if TYPE_CHECKING:
    from .store import Run, Store


def _n_tasks(run: Run) -> int:
    """The run's task count: 3 per instance of a runtime app, a program's file's tasks."""
    from .workloads import stored_workload

    return stored_workload(run.workload, run.instances, run.params).n_tasks


def run_sample(store: Store, run: Run, limit: int | None = None, purposes: tuple[str, ...] = ("noise", "select")
               ) -> RunSample:
    """`limit`: only the first `limit` draws (and the repetitions made while the
    run held no more), what an iterative search saw at that size; `purposes`:
    which repeated measurements (planned noise repetitions, selection rounds)."""
    rows = store.indexed_values(run.id)
    if limit is not None:
        rows = rows[:limit]
    idx = np.array([i for i, _ in rows], dtype=np.int64)
    first = np.array([v for _, v in rows], dtype=float)
    reps = [(r.idx, r.value) for r in store.repeats(run.id)
            if r.status == "ok" and r.purpose in purposes and (limit is None or r.draws <= limit)]
    injected = run.params.get("noise_rel_sd") if run.kind == "modelled" else None
    try:
        topo = Topology.from_json(run.topology)
        size = count_assignments(topo, _n_tasks(run), run.allow_colocate)
    except (KeyError, TypeError, ValueError):  # a store whose topology this version cannot read
        return RunSample(idx, first, reps, injected_cv=float(injected) if injected is not None else None)

    def placements(pos: np.ndarray) -> np.ndarray:
        lut = np.full(int(topo.os_index.max()) + 1, -1, dtype=np.int64)
        lut[topo.os_index] = np.arange(topo.n_contexts)
        draws = idx[np.asarray(pos, dtype=np.int64)]
        where = store.assignments(run.id, draws.tolist())
        ctx = lut[np.array([where[int(i)] for i in draws], dtype=np.int64)].reshape(len(draws), -1)
        codes: dict[tuple, int] = {}
        return np.array([codes.setdefault(k, len(codes)) for k in orbit_keys(topo, ctx)], dtype=np.int64)

    def orbits() -> np.ndarray:
        return placements(np.arange(idx.size))

    return RunSample(idx, first, reps, space_size=size if size <= idx.size else None,
                     orbits=orbits if size <= idx.size else None,
                     injected_cv=float(injected) if injected is not None else None, placements=placements)


def measurement_cost(store: Store, run: Run) -> dict:
    """How many measurements the run spent beyond its draws: noise repetitions, searches and
    selection rounds, and their share of all its measurements."""
    _, ok, failed, _ = store.progress(run.id)
    counts = store.repeat_counts(run.id)
    noise, select = counts.get("noise", 0), counts.get("select", 0)
    searched, rounds = store.search_counts(run.id)
    select += rounds
    total = ok + failed + noise + select + searched
    return {"draws": ok + failed, "noise_repetitions": noise, "search_measurements": searched,
            "selection_measurements": select, "total": total,
            "share_pct": 100.0 * (noise + select + searched) / total if total else 0.0}


def describe_cost(cost: dict) -> str:
    search = cost.get("search_measurements", 0)
    return (f"{cost['noise_repetitions']:,} noise repetitions, {search:,} search measurements and "
            f"{cost['selection_measurements']:,} selection measurements: {cost['share_pct']:.1f}% of the run's "
            f"{cost['total']:,} measurements")


TOP_SINGLE_DRAWS = 100  # draws measured once that the certificate holds against its interval (the highest)


def found_placements(store: Store, run: Run, sample: RunSample | None = None) -> list:
    """Every placement of the run measured more than once (a draw with its repetitions and selection
    rounds; a search's placement with all its measurements), the highest draws measured once and the
    baselines measured, by the contexts each was measured on (evt/certificate.py).  `sample`: the run as run_sample read it."""
    from .evt.certificate import Found

    sample = sample if sample is not None else run_sample(store, run)
    reps = sample.groups()
    pos = {int(i): p for p, i in enumerate(sample.idx.tolist())}
    top = np.argsort(-sample.first, kind="stable")[:TOP_SINGLE_DRAWS + len(reps)]
    singles = [int(sample.idx[p]) for p in top if int(sample.idx[p]) not in reps][:TOP_SINGLE_DRAWS]
    want = [i for i in reps if i in pos] + singles
    where = store.assignments(run.id, want)
    groups: dict[tuple, Found] = {}
    for i in want:
        key = tuple(where[i])
        f = groups.setdefault(key, Found(key, [], "draw"))
        f.values += [float(sample.first[pos[i]]), *reps.get(i, ())]
    for _, _, a, _, _, v, status in store.search_values(run.id):
        if status == "ok":
            key = tuple(a)
            f = groups.setdefault(key, Found(key, [], "search"))
            f.values.append(v)
    for a, v in store.baseline_values(run.id):  # the baselines measured (Linux-like, one core): placements too
        key = tuple(a)
        groups.setdefault(key, Found(key, [], "baseline")).values.append(v)
    return list(groups.values())


def run_optimum(store: Store, run: Run, confidence: float = 0.95, limit: int | None = None,
                sample: RunSample | None = None):
    """The optimum of placement means of a stored run as every command states it: the iid sample's
    estimate (evt/optimum.py) certified against every placement measured and the run's searches
    (evt/certificate.py).  Raises EstimateError where the sample gives none."""
    from .evt import EstimateError
    from .evt.certificate import certify
    from .evt.noise import estimate_noise
    from .evt.optimum import OptimumMean, optimum_of_means

    sample = sample if sample is not None else run_sample(store, run, limit)
    searches = [r for _, _, _, r in store.searches(run.id) if r is not None] if limit is None else []
    try:
        iid = optimum_of_means(sample, confidence)
    except EstimateError as e:
        if not any(s.get("converged") for s in searches):
            raise
        # too few draws for the sample's estimate: a converged search may still certify the top
        noise = estimate_noise(sample.groups(), sample.injected_cv)
        iid = OptimumMean(None, None, None, noise, None, "no_sample_estimate", confidence, int(sample.idx.size),
                          len(sample.repeats), messages=[f"no estimate from the sample: {e}"])
    if limit is not None:
        return iid
    return certify(iid, found_placements(store, run, sample), searches, confidence)
