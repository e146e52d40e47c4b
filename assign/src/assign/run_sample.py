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
    """How many measurements the run spent beyond its draws: noise repetitions
    and selection rounds, and their share of all its measurements."""
    _, ok, failed, _ = store.progress(run.id)
    reps = store.repeats(run.id)
    noise = sum(1 for r in reps if r.purpose == "noise")
    select = sum(1 for r in reps if r.purpose == "select")
    total = ok + failed + noise + select
    return {"draws": ok + failed, "noise_repetitions": noise, "selection_measurements": select,
            "total": total, "share_pct": 100.0 * (noise + select) / total if total else 0.0}


def describe_cost(cost: dict) -> str:
    return (f"{cost['noise_repetitions']:,} noise repetitions and {cost['selection_measurements']:,} selection "
            f"measurements: {cost['share_pct']:.1f}% of the run's {cost['total']:,} measurements")
