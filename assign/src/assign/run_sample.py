"""A stored run as the optimum-of-means estimate reads it (evt/optimum.py):
its draws' first values, every further measurement of them (planned noise
repetitions and selection rounds), and which distinct placement each draw is
(for every draw where the space is small enough for the sample to hold all
of it; for the tail's draws always).  Where the store has its value index
(store.py, VALUE_INDEX), `tail_sample` reads only what the estimates use (the
run's size, its top draws, its re-measured draws, and the top of its values
for the paper's estimate), and `sample_top` that top alone: the same
estimates as from every draw (tests/test_estimate_top.py), without reading a
million rows."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .counting import count_assignments, orbit_hashes
from .evt.certificate import Found
from .evt.optimum import MAX_TAIL, TAIL_FRACTION, RepeatArrays, RunSample
from .evt.top import SampleTop, top_size
from .topology import Topology

if TYPE_CHECKING:
    from .store import Run, Store


def _n_tasks(store: Store, run: Run) -> int:
    """The run's task count (3 per instance of a runtime app, a program's file's tasks): a stored
    placement's length, which costs a row where the workload costs an import of every packaged one
    (units.py); the workload's while the run holds no measurement."""
    n = store.task_count(run.id)
    if n is not None:
        return n
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
    reps = RepeatArrays(*store.repeat_arrays(run.id, purposes, limit))
    return _sample(store, run, idx, first, reps)


def _space(store: Store, run: Run) -> tuple[Topology, int] | None:
    """The run's topology and the count of its distinct placements; None where this version cannot read
    the stored topology."""
    try:
        topo = Topology.from_json(run.topology)
        return topo, count_assignments(topo, _n_tasks(store, run), run.allow_colocate)
    except (KeyError, TypeError, ValueError):
        return None


def _sample(store: Store, run: Run, idx: np.ndarray, first: np.ndarray, reps: RepeatArrays, size: int | None = None,
            paper=None, space: tuple[Topology, int] | None = None) -> RunSample:
    """space: _space's, where the caller has it."""
    injected = run.params.get("noise_rel_sd") if run.kind == "modelled" else None
    known = space if space is not None else _space(store, run)
    if known is None:  # a store whose topology this version cannot read
        return RunSample(idx, first, reps, injected_cv=float(injected) if injected is not None else None,
                         size=size, paper=paper)
    topo, count = known

    def placements(pos: np.ndarray) -> np.ndarray:
        lut = np.full(int(topo.os_index.max()) + 1, -1, dtype=np.int64)
        lut[topo.os_index] = np.arange(topo.n_contexts)
        draws = idx[np.asarray(pos, dtype=np.int64)]
        where = store.assignments(run.id, draws.tolist())
        ctx = lut[np.array([where[int(i)] for i in draws], dtype=np.int64)].reshape(len(draws), -1)
        # the distinct placement by its orbit's two-word hash (as orbit_keys tells them apart, a hundred
        # times faster: counting.py), numbered in order of appearance
        codes: dict[tuple, int] = {}
        return np.array([codes.setdefault(k, len(codes)) for k in map(tuple, orbit_hashes(topo, ctx).tolist())],
                        dtype=np.int64)

    def orbits() -> np.ndarray:
        return placements(np.arange(idx.size))

    whole = size is None and count <= idx.size  # every draw read, and perhaps every placement drawn
    return RunSample(idx, first, reps, space_size=count if whole else None, orbits=orbits if whole else None,
                     injected_cv=float(injected) if injected is not None else None, placements=placements,
                     size=size, paper=paper)


def sample_top(store: Store, run: Run, threshold: float | None = None,
               max_tail_fraction: float = TAIL_FRACTION) -> SampleTop | None:
    """The top of the run's values that the paper's estimate reads (evt/top.py; with a threshold,
    every value above it too), through the store's value index; None where the store cannot give it
    (no value index, flagged cluster workers) or the values are not what the estimate takes (a
    negative or infinite one, all equal): the caller reads them all, as before."""
    summary = store.value_summary(run.id)
    if summary is None:
        return None
    n, low, high = summary
    if not (0.0 <= low < high < math.inf):
        return None  # estimate() names the offending value from the whole sample
    above = 0 if threshold is None else store.count_above(run.id, threshold)
    top = store.top_values(run.id, top_size(n, max_tail_fraction, above + 1))
    return SampleTop(top[::-1].copy(), n)


def tail_sample(store: Store, run: Run, paper: SampleTop | None = None,
                purposes: tuple[str, ...] = ("noise", "select")) -> RunSample | None:
    """The run as the optimum of means reads it (run_sample's, all of it), but only its top draws (at
    least the largest MAX_TAIL + 1 first values, with every draw tied with the last of them, and as
    many more as found_placements reads) and its re-measured draws, with its size and the top of its
    values (`paper`, or read when the paper's estimate needs it); None where the value index cannot
    serve (sample_top) or where the sample may hold every placement of a small space (that estimate
    reads every draw)."""
    summary = store.value_summary(run.id)
    if summary is None:
        return None
    n, low, high = summary
    if not (0.0 <= low < high < math.inf):
        return None
    known = _space(store, run)
    if known is not None and known[1] <= n:
        return None
    reps = RepeatArrays(*store.repeat_arrays(run.id, purposes))
    remeasured = np.unique(reps.idx).tolist()
    m = min(n, MAX_TAIL + 1 + TOP_SINGLE_DRAWS + len(remeasured))
    # the m-th largest value: from the paper's top where the caller read it (ascending), else one query
    at_least = float(paper.values[-m]) if paper is not None and paper.values.size >= m else \
        float(store.top_values(run.id, m)[-1])
    idx, first = store.top_draws(run.id, at_least)
    have = set(idx.tolist())
    more = store.draw_values(run.id, [i for i in remeasured if i not in have])
    if more:
        idx = np.concatenate([idx, np.array(list(more), dtype=np.int64)])
        first = np.concatenate([first, np.array(list(more.values()), dtype=float)])
        order = np.argsort(idx, kind="stable")
        idx, first = idx[order], first[order]
    cached: list[SampleTop] = [paper] if paper is not None else []

    def paper_values() -> SampleTop:
        if not cached:
            top = sample_top(store, run)
            if top is None:  # the store changed under us: read every value
                raise RuntimeError(f"{store.path}: the value index went away while the run was read")
            cached.append(top)
        return cached[0]

    return _sample(store, run, idx, first, reps, size=n, paper=paper_values, space=known)


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


class Placement(Found):
    """A Found whose mean is computed once for its values (certify reads it for every bound it takes:
    a dozen times for each of thousands of placements)."""

    @property
    def mean(self) -> float:
        m = self.__dict__.get("_mean")
        if m is None or m[0] != len(self.values):
            m = self.__dict__["_mean"] = (len(self.values), float(Found.mean.fget(self)))
        return m[1]


TOP_SINGLE_DRAWS = 100  # draws measured once that the certificate holds against its interval (the highest)


def found_placements(store: Store, run: Run, sample: RunSample | None = None) -> list:
    """Every placement of the run measured more than once (a draw with its repetitions and selection
    rounds; a search's placement with all its measurements), the highest draws measured once and the
    baselines measured, by the contexts each was measured on (evt/certificate.py).  `sample`: the run as
    run_sample read it."""
    sample = sample if sample is not None else run_sample(store, run)
    reps = sample.groups()
    draws, first = sample.idx.tolist(), sample.first.tolist()  # Python numbers: thousands of lookups below
    pos = {i: p for p, i in enumerate(draws)}
    top = np.argsort(-sample.first, kind="stable")[:TOP_SINGLE_DRAWS + len(reps)].tolist()
    singles = [draws[p] for p in top if draws[p] not in reps][:TOP_SINGLE_DRAWS]
    want = [i for i in reps if i in pos] + singles
    where = store.assignments(run.id, want)
    groups: dict[tuple, Found] = {}
    for i in want:
        key = tuple(where[i])
        f = groups.get(key)
        if f is None:
            f = groups[key] = Placement(key, [], "draw")
        f.values.append(first[pos[i]])
        f.values.extend(reps.get(i, ()))
    for _, _, a, _, _, v, status in store.search_values(run.id):
        if status == "ok":
            key = tuple(a)
            f = groups.setdefault(key, Placement(key, [], "search"))
            f.values.append(v)
    for a, v in store.baseline_values(run.id):  # the baselines measured (Linux-like, one core): placements too
        key = tuple(a)
        groups.setdefault(key, Placement(key, [], "baseline")).values.append(v)
    found = list(groups.values())
    # every mean at once, over the placements with one count of values (numpy sums a row of a 2-D array as
    # it sums a 1-D one: the means certify's np.mean gives)
    by_count: dict[int, list[Placement]] = {}
    for f in found:
        if f.values:
            by_count.setdefault(len(f.values), []).append(f)
    for count, fs in by_count.items():
        means = np.mean(np.array([f.values for f in fs], dtype=float).reshape(len(fs), count), axis=1)
        for f, m in zip(fs, means.tolist()):
            f.__dict__["_mean"] = (count, m)
    return found


def run_optimum(store: Store, run: Run, confidence: float = 0.95, limit: int | None = None,
                sample: RunSample | None = None):
    """The optimum of placement means of a stored run as every command states it: the iid sample's
    estimate (evt/optimum.py) certified against every placement measured and the run's searches
    (evt/certificate.py).  Raises EstimateError where the sample gives none."""
    from .evt import EstimateError
    from .evt.certificate import certify
    from .evt.noise import estimate_noise
    from .evt.optimum import OptimumMean, optimum_of_means

    if sample is None:
        sample = (tail_sample(store, run) if limit is None else None) or run_sample(store, run, limit)
    searches = [r for _, _, _, r in store.searches(run.id) if r is not None] if limit is None else []
    try:
        iid = optimum_of_means(sample, confidence)
    except EstimateError as e:
        if not any(s.get("converged") for s in searches):
            raise
        # too few draws for the sample's estimate: a converged search may still certify the top
        noise = estimate_noise(sample.groups(), sample.injected_cv)
        iid = OptimumMean(None, None, None, noise, None, "no_sample_estimate", confidence, sample.n_draws,
                          len(sample.repeats), messages=[f"no estimate from the sample: {e}"])
    if limit is not None:
        return iid
    return certify(iid, found_placements(store, run, sample), searches, confidence)
