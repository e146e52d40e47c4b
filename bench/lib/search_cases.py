"""The cases of bench/search.py: spaces with their optimum, assign's flows
run by the real code path (the model backend, the store, `assign sample`'s
session, `assign best`'s search and selection, `assign estimate`'s
certificate), and the peers run on the same values.

Every measurement counts against the budget: draws, planned repetitions,
search and selection measurements for a flow (its run's cost.total);
trials for a peer.  The score of an answer is the noise-free mean of the
placement it deploys over the optimum."""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from assign.backends.model import ModelBackend, load_params
from assign.choice import Settings, choose
from assign.evt import EstimateError, estimate
from assign.run_sample import measurement_cost, run_optimum
from assign.search import Ledger, Space, make, run as run_search
from assign.session import Session
from assign.store import Store
from assign.topology import Topology, get_machine
from assign.workloads import Workload

RESTARTS = 30           # noise-free local-search restarts where the space is too large to enumerate
ENUMERABLE = 200_000    # distinct placements up to which the optimum is exact (assign enumerate's limit)


@dataclass(frozen=True)
class Case:
    name: str
    machine: str | None
    topology: str | None
    workload: str
    instances: int
    truth_db: str | None = None      # a ground truth measured on this machine (`assign enumerate --reps --db`)

    def topo(self) -> Topology:
        if self.truth_db is not None:
            return Replay.load(self.truth_db).topo
        return get_machine(self.machine, self.topology)

    @property
    def colocate(self) -> bool:
        return self.truth_db is not None and Replay.load(self.truth_db).colocate


class Replay:
    """A space measured on this machine, replayed: `assign enumerate --reps K --db F` measured every distinct
    placement K times in interleaved rounds; a measurement of a placement here is one of its K values,
    drawn at random (kind measured: every value is a real measurement, resampled).  Its optimum is the
    largest placement mean over all K rounds."""

    name = "replay"
    kind = "measured"
    batch_size = 4096
    _loaded: dict = {}

    def __init__(self, path: str):
        import json
        import sqlite3

        from assign.counting import orbit_hashes

        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            row = c.execute("SELECT id, workload, instances, topology, allow_colocate FROM truths ORDER BY id "
                            "LIMIT 1").fetchone()
            if row is None:
                raise ValueError(f"{path} holds no ground truth (assign enumerate --reps K --db {path})")
            tid, self.workload, self.instances, topo, colocate = row
            rows = c.execute("SELECT placement, assignment, value FROM truth_values WHERE truth_id=? AND "
                             "status='ok'", (tid,)).fetchall()
        self.path = path
        self.topo = Topology.from_json(json.loads(topo))
        self.colocate = bool(colocate)
        lut = {int(o): i for i, o in enumerate(self.topo.os_index)}
        values: dict[int, list[float]] = {}
        ctx: dict[int, list[int]] = {}
        for p, a, v in rows:
            values.setdefault(p, []).append(v)
            ctx[p] = [lut[int(o)] for o in json.loads(a)]
        order = sorted(values)
        words = orbit_hashes(self.topo, np.array([ctx[p] for p in order]))
        self.by_key = {tuple(w): np.array(values[p]) for w, p in zip(words.tolist(), order)}
        self.optimum = max(float(np.mean(v)) for v in values.values())
        self.rounds = min(len(v) for v in values.values())
        self.rng = np.random.default_rng(0)

    @classmethod
    def load(cls, path: str) -> "Replay":
        if path not in cls._loaded:
            cls._loaded[path] = cls(path)
        return cls._loaded[path]

    def reseed(self, seed: int) -> "Replay":
        self.rng = np.random.default_rng([seed, 5])
        return self

    def describe(self) -> dict:
        return {"replay_of": self.path}

    def values(self, ctx: np.ndarray) -> np.ndarray:
        from assign.counting import orbit_hashes

        keys = [tuple(w) for w in orbit_hashes(self.topo, np.atleast_2d(ctx)).tolist()]
        return np.array([self.rng.choice(self.by_key[k]) for k in keys])

    def means(self, ctx: np.ndarray) -> np.ndarray:
        from assign.counting import orbit_hashes

        keys = [tuple(w) for w in orbit_hashes(self.topo, np.atleast_2d(ctx)).tolist()]
        return np.array([float(np.mean(self.by_key[k])) for k in keys])

    def measure(self, requests):
        from assign.backends.base import Result

        lut = {int(o): i for i, o in enumerate(self.topo.os_index)}
        ctx = np.array([[lut[int(o)] for o in r.contexts] for r in requests])
        return [Result(float(v)) for v in self.values(ctx)]


def parse(text: str) -> Case:
    """'t2 WORKLOAD xN', 'TOPOLOGY WORKLOAD xN' (hwloc synthetic, e.g. 'pack:2 core:4 pu:2 stateful x3') or
    'measured FILE' (a ground truth of this machine, replayed: Replay)."""
    if text.startswith("measured "):
        r = Replay.load(text.split(" ", 1)[1])
        return Case(text, None, None, r.workload, r.instances, text.split(" ", 1)[1])
    head, _, inst = text.rpartition(" x")
    where, _, wl = head.rpartition(" ")
    if not where or not inst.isdigit():
        raise ValueError(f"space {text!r}: expected 't2 WORKLOAD xN' or 'TOPOLOGY WORKLOAD xN'")
    if where == "t2":
        return Case(text, "ultrasparc-t2", None, wl, int(inst))
    return Case(text, None, where, wl, int(inst))


def model(case: Case, noise: float = 0.0, seed: int = 0) -> ModelBackend:
    topo = case.topo()
    w = Workload(case.workload, case.instances)
    return ModelBackend(topo, w, load_params(w.name), noise, seed)


@lru_cache(maxsize=None)
def optimum(case: Case) -> tuple[float, str]:
    """The noise-free optimum and how it is known: exact where the space is enumerable, else the best
    of RESTARTS noise-free local searches from random placements."""
    from assign.counting import count_assignments
    from assign.enumeration import representatives

    if case.truth_db is not None:
        r = Replay.load(case.truth_db)
        return r.optimum, f"measured on this machine: the largest placement mean over {r.rounds} rounds of every " \
                          f"placement (assign enumerate --reps)"
    be = model(case)
    topo = be.topo
    n_tasks = 3 * case.instances
    if count_assignments(topo, n_tasks) <= ENUMERABLE:
        reps, _ = representatives(topo, n_tasks)
        best = max(float(be.predict(np.array(reps[i:i + 20000]))[0].max()) for i in range(0, len(reps), 20000))
        return best, "exact (every distinct placement)"
    sp = Space.of_pipelines(topo, case.instances)
    best = -math.inf
    for x in sp.random(12345, 0, RESTARTS):
        fx = float(be.predict(x[None, :])[0][0])
        while True:
            m = sp.moves(x)
            p = be.predict(m)[0]
            j = int(np.argmax(p))
            if p[j] <= fx * (1 + 1e-12):
                break
            x, fx = m[j], float(p[j])
        best = max(best, fx)
    return best, f"best of {RESTARTS} noise-free local-search restarts"


@dataclass
class Outcome:
    score: float                        # noise-free mean of the deployed placement / optimum
    bound: tuple[float, float] | None   # the interval the answer states for the optimum (None: none)
    cost: int                           # measurements spent
    status: str = ""

    def held(self, opt: float) -> bool | None:
        if self.bound is None:
            return None
        lo, hi = self.bound
        return lo <= opt * (1 + 1e-12) and opt <= hi * (1 + 1e-12)


def plan(budget: int) -> dict:
    """assign's default flow at a total budget: a quarter on draws (at most 5000), one repetition per
    20 draws, a tenth on the selection, the rest on the search."""
    n = min(5000, max(100, budget // 4))
    select = max(30, budget // 10)
    return {"draws": n, "search": max(0, budget - n - n // 20 - select), "select": select,
            "candidates": min(10, max(2, select // 15)), "first_stage": 5 if select < 150 else 10}


MISCALIBRATION = 0.2   # the model sampler's guide: every parameter off by a factor exp(N(0, 0.2^2))


def guide(case: Case, seed: int):
    """For --sampler model on the model's own spaces: the model with every cost, demand and sensitivity
    off by a random factor, as a calibration on a real machine would be (the exact model would know
    the answer)."""
    from dataclasses import replace

    be = model(case)
    rng = np.random.default_rng([seed, 77])
    p = be.params
    f = lambda a: a * np.exp(MISCALIBRATION * rng.standard_normal(np.shape(a)))  # noqa: E731
    off = ModelBackend(be.topo, be.workload, replace(p, base_ns=f(p.base_ns), demand=f(p.demand),
                                                     sensitivity=f(p.sensitivity), comm_ns=f(p.comm_ns)), 0.0)
    return lambda ctx: off.predict(ctx)[0]


def flow(case: Case, sampler: str, noise: float, seed: int, budget: int) -> Outcome:
    """`assign sample` + `assign best --sampler S` + `assign estimate`, scaled to the budget."""
    p = plan(budget)
    topo = case.topo()
    w = Workload(case.workload, case.instances)
    replay = Replay.load(case.truth_db).reseed(seed) if case.truth_db else None
    clean = model(case) if replay is None else None
    with tempfile.TemporaryDirectory() as d:
        with Store(os.path.join(d, "run.db")) as store:
            be = replay or ModelBackend(topo, w, load_params(w.name), noise, seed)
            session, _ = Session.open(store, topo, w, be, seed, case.colocate)
            session.sample_until(p["draws"], show_progress=False)
            settings = Settings(candidates=p["candidates"], first_stage=p["first_stage"],
                                max_measurements=p["select"], sampler=sampler, search_budget=p["search"],
                                predict=guide(case, seed) if sampler == "model" else None)
            res = choose(store, session.run, lambda: be, settings, quiet=True)
            ctx = np.array([[int(np.where(topo.os_index == o)[0][0]) for o in res["chosen"]["contexts"]]])
            score = float(clean.predict(ctx)[0][0]) if replay is None else float(replay.means(ctx)[0])
            try:
                opt = run_optimum(store, session.run)
                bound = None if opt.estimate is None or opt.ci_low is None else \
                    (opt.ci_low, math.inf if opt.ci_high is None else opt.ci_high)
                status = opt.status
            except EstimateError:
                bound, status = None, "no estimate"
            cost = measurement_cost(store, session.run)["total"]
    return Outcome(score / optimum(case)[0], bound, cost, status)


def peer(case: Case, name: str, noise: float, seed: int, budget: int) -> Outcome:
    """A searcher on its own (no iid sample before it): `budget` measurements, one each, and the
    placement with the best value deployed (its mean where it measured one twice)."""
    replay = Replay.load(case.truth_db).reseed(seed) if case.truth_db else None
    be = model(case) if replay is None else None
    sp = Space.of_pipelines(case.topo(), case.instances, case.colocate)
    rng = np.random.default_rng([seed, sum(map(ord, name)), int(noise * 1e6)])

    def measure(ctx: np.ndarray) -> list[float | None]:
        if replay is not None:
            return replay.values(ctx).tolist()
        mu = be.predict(ctx)[0]
        return (mu * (1.0 + noise * np.clip(rng.standard_normal(len(mu)), -3, 3))).tolist()

    ledger = Ledger(sp, measure, budget, cv_hint=noise if replay is None else None)
    if name == "opentuner":
        from opentuner_peer import search as ot_search
        ot_search(ledger, int(rng.integers(2 ** 31)))
    else:
        run_search(make(name), ledger, rng, [])
    best = ledger.best(1)
    score = float(be.predict(best[1].ctx[None, :])[0][0]) if replay is None else \
        float(replay.means(best[1].ctx[None, :])[0])
    bound = None
    if name == "random":  # the paper's answer: its UPB interval on the single values
        vals = [v for e in ledger.entries.values() for v in e.values]
        try:
            est = estimate(vals, cross_checks=False)
            if est.upb is not None:
                bound = (est.upb_ci_low, math.inf if est.upb_ci_high is None else est.upb_ci_high)
        except EstimateError:
            pass
    return Outcome(score / optimum(case)[0], bound, ledger.spent)
