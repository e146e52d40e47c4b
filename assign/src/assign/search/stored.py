"""A search on a stored run: its ledger starts from the run's draws, their
repetitions and every earlier search's measurements; every measurement it
makes is stored as it comes (table search_values); an interrupted search
resumes.

Resuming replays: the searcher runs again from the start with the same
random stream, and each measurement it asks for that the store already
holds (the same placement at the same position) is served from the store
instead of measured.  A searcher is deterministic given its values, so the
resumed search asks exactly what the interrupted one did, and goes on from
where it stopped; should it ask for something else (another version of
assign), the replay ends there and everything stored stays in the run.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..backends.base import MeasureRequest
from ..evt.noise import estimate_noise
from ..topology import Topology
from . import make
from .base import Report, run as run_searcher
from .ledger import Ledger
from .space import Space

if TYPE_CHECKING:
    from ..backends.base import Backend
    from ..store import Run, Store

SEARCH_NOISE_BASE = 1 << 42     # model noise keys of search measurements: no draw or repetition has them
KNOWN_DRAWS = 200               # the run's leading draws the ledger holds as placements (all feed the surrogate)
STARTS = 10                     # the leading placements a search starts from


def noise_key(sid: int, seq: int) -> int:
    return SEARCH_NOISE_BASE + (int(sid) << 28) + int(seq)


def space_of(run: Run) -> tuple[Space, Topology]:
    """The run's space: N instances of R -> P -> T, or a program's named tasks (each a role of its own)."""
    from ..workloads import stored_workload

    topo = Topology.from_json(run.topology)
    w = stored_workload(run.workload, run.instances, run.params)
    if w.spec.program is not None:
        return Space(topo, w.n_tasks, run.allow_colocate), topo
    return Space.of_pipelines(topo, run.instances, run.allow_colocate), topo


def _context_rows(topo: Topology, assignments: list[list[int]]) -> np.ndarray:
    lut = np.full(int(topo.os_index.max()) + 1, -1, dtype=np.int64)
    lut[topo.os_index] = np.arange(topo.n_contexts)
    return lut[np.asarray(assignments, dtype=np.int64)].reshape(len(assignments), -1)


def ledger_of(store: Store, run: Run, space: Space, topo: Topology, budget: int,
              measure: Callable[[np.ndarray], list[float | None]], exclude_search: int | None = None) -> Ledger:
    """A ledger holding what the run knows: every draw's first value (for the surrogate), the leading
    draws with their repetitions, and every other search's measurements, as placements."""
    rows = store.indexed_values(run.id)
    idx = np.array([i for i, _ in rows], dtype=np.int64)
    first = np.array([v for _, v in rows], dtype=float)
    reps: dict[int, list[float]] = {}
    for r in store.repeats(run.id):
        if r.status == "ok":
            reps.setdefault(r.idx, []).append(r.value)
    cv = None
    if run.kind == "modelled" and run.params.get("noise_rel_sd") is not None:
        cv = float(run.params["noise_rel_sd"])
    else:
        noise = estimate_noise(reps)
        cv = noise.cv if noise.known else None
    ledger = Ledger(space, measure, budget, cv_hint=cv)
    if idx.size:
        where = store.assignments(run.id, idx.tolist())
        ledger.prior_ctx = _context_rows(topo, [where[int(i)] for i in idx])
        ledger.prior_values = first
        means = np.array([np.mean([v, *reps.get(int(i), ())]) for i, v in zip(idx, first)])
        lead = np.argsort(-means, kind="stable")[:KNOWN_DRAWS]
        for k, p in zip(space.keys(ledger.prior_ctx[lead]), lead):
            ledger.know(k, ledger.prior_ctx[p], [first[p], *reps.get(int(idx[p]), ())])
    other = [r for r in store.search_values(run.id) if r[0] != exclude_search and r[6] == "ok"]
    if other:
        ctx = _context_rows(topo, [r[2] for r in other])
        for k, c, r in zip(space.keys(ctx), ctx, other):
            ledger.know(k, c, [r[5]])
    return ledger


def leading(ledger: Ledger, m: int = STARTS) -> list[np.ndarray]:
    """The m placements with the highest means the ledger holds."""
    es = sorted((e for e in ledger.entries.values() if e.n), key=lambda e: -e.mean)
    return [e.ctx for e in es[:m]]


def search(store: Store, run: Run, make_backend: Callable[[], Backend], sampler: str, budget: int, *,
           seed: int | None = None, predict: Callable[[np.ndarray], np.ndarray] | None = None,
           quiet: bool = False) -> dict:
    """Run (or resume, or find finished) a search of `sampler` with this budget on the run; its result.
    make_backend is called once, when the first measurement is due; the caller closes what it made."""
    params = {"budget": int(budget), "seed": int(run.seed if seed is None else seed)}
    sid = None
    for i, s, p, result in store.searches(run.id):
        if s == sampler and p == params:
            if result is not None:
                return dict(result, search=i, reused=True)
            sid = i
    searcher = make(sampler, predict)
    if sid is None:
        sid = store.add_search(run.id, sampler, params)
    space, topo = space_of(run)
    stored = [r for r in store.search_values(run.id, sid) if r[3] is None]
    replay = {"rows": stored, "at": 0, "on": True}
    backend: list = []
    model = run.kind == "modelled"

    def measure(ctx: np.ndarray) -> list[float | None]:
        out: list[float | None] = []
        todo: list[np.ndarray] = []
        for row in ctx:
            a = [int(c) for c in topo.os_index[row]]
            if replay["on"] and replay["at"] < len(replay["rows"]):
                r = replay["rows"][replay["at"]]
                if r[2] == a:
                    replay["at"] += 1
                    out.append(r[5] if r[6] == "ok" else None)
                    continue
                replay["on"] = False
                if not quiet:
                    print(f"assign: search {sid} asks for other placements than it stored (another version of "
                          f"assign?): its {len(replay['rows']) - replay['at']} later stored measurements stay in "
                          f"the run; the search goes on from here", file=sys.stderr)
            replay["on"] = False
            todo.append(row)
            out.append(None)
        if todo:
            if not backend:
                backend.append(make_backend())
            # the replay serves a prefix of the rows: the rest are measured, in order
            served = len(ctx) - len(todo)
            return out[:served] + _measure(store, run, sid, backend[0], topo, todo, model)
        return out

    ledger = ledger_of(store, run, space, topo, budget, measure, exclude_search=sid)
    starts = leading(ledger)
    rng = np.random.default_rng([params["seed"], sid])
    if not quiet:
        print(f"searching: {searcher.describe()}; budget {budget:,} measurements (search {sid})", file=sys.stderr)
    report = run_searcher(searcher, ledger, rng, starts)  # the backend is the caller's: it closes it
    result = dict(summary(report, ledger, topo), search=sid)
    store.finish_search(run.id, sid, result)
    return dict(result, search=sid)


def _measure(store: Store, run: Run, sid: int, backend: Backend, topo: Topology, rows: list[np.ndarray],
             model: bool) -> list[float | None]:
    """Measure rows through the backend, storing each batch as it comes."""
    out: list[float | None] = []
    step = max(1, getattr(backend, "batch_size", 1))
    for b in range(0, len(rows), step):
        chunk = rows[b:b + step]
        seq0 = store.next_search_seq(run.id, sid)
        reqs = [MeasureRequest(noise_key(sid, seq0 + i) if model else seq0 + i,
                               tuple(int(c) for c in topo.os_index[r])) for i, r in enumerate(chunk)]
        res = backend.measure(reqs)
        store.add_search_values(run.id, sid, [(list(q.contexts), None, None, x.value, x.status, x.reason, x.extra)
                                              for q, x in zip(reqs, res)])
        out += [x.value if x.status == "ok" else None for x in res]
    return out


def summary(report: Report, ledger: Ledger, topo: Topology) -> dict:
    """What a finished search stores: how it ended and where."""
    d = report.to_dict()
    d["budget"] = ledger.budget
    final = ledger.entries.get(report.final) if report.final is not None else None
    if final is not None:
        d["final"] = {"contexts": [int(c) for c in topo.os_index[final.ctx]], "mean": final.mean, "n": final.n}
    best = ledger.best(2) or ledger.best(1)
    if best is not None:
        e = best[1]
        d["best"] = {"contexts": [int(c) for c in topo.os_index[e.ctx]], "mean": e.mean, "n": e.n}
    d["cv"] = ledger.cv()
    return d
