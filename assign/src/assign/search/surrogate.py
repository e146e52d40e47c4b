"""`--sampler surrogate` (the default): the local search of local.py, started
from the optima of a surrogate fitted to everything measured, its
neighbours ranked by the same surrogate, refitted after every move.

The surrogate is a linear model of log throughput over features that do
not change under the machine's symmetry (so it learns from every draw of
the sample at once, whatever contexts a draw used):

* for every pair of tasks, by the kind of pair (the two tasks' roles, and
  whether one hands packets to the other) and the lowest level the two
  share (context, pipeline, core, chip, machine): how many such pairs;
* for every task, by its role and each level: how many other tasks share
  that level with it (the crowding that overloads a pipeline or a core).

It is the second-order model of Bayesian optimisation of combinatorial
structures (Baptista & Poloczek, ICML 2018), with its coefficients tied by
the topology's symmetry and fitted by ridge regression.  On the T2's model
it ranks fresh random placements with a Spearman correlation of 0.99 after
5,000 noisy draws, and its own optimum is the model's exact optimum in 4 of
the 5 workloads (assign/notes/2026-11-28-search.md).  It is a ranking, not a
measurement: every placement it proposes is measured, and the local search
decides by what was measured.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .ledger import Ledger
from .local import LocalSearch
from .space import Space

RIDGE = 0.1             # on features that are counts; a light hand: only the rarely seen ones are shrunk
CROWD_CAP = 8           # co-runners counted up to this many (more: the same feature)
STARTS = 8              # the leading placements each descended on the surrogate
MAX_PRIOR = 20000       # draws of the sample the fit uses at most (the leading ones and a spread of the rest)


class Features:
    """The surrogate's features of placements (rows of context indices)."""

    def __init__(self, space: Space):
        self.space = space
        ids = space.topo.level_ids
        self.ids = ids
        self.levels = ids.shape[0]
        roles = space.roles
        self.n_roles = nr = int(roles.max()) + 1
        t = space.n_tasks
        self.i, self.j = np.triu_indices(t, 1)
        linked = np.zeros((t, t), dtype=bool)
        for a, b in space.links:
            linked[a, b] = linked[b, a] = True
        lo = np.minimum(roles[self.i], roles[self.j])
        hi = np.maximum(roles[self.i], roles[self.j])
        self.pair_class = ((lo * nr + hi) * 2 + linked[self.i, self.j]).astype(np.int64)
        self.n_pair = nr * nr * 2 * self.levels
        self.n_crowd = nr * (self.levels - 1) * CROWD_CAP
        self.size = self.n_pair + self.n_crowd + 1
        v = np.arange(space.n_contexts)
        self.dist = space.topo.distance(v[:, None], v[None, :])   # (V, V): the lowest level two contexts share

    def columns(self, ctx: np.ndarray) -> np.ndarray:
        """(B, P) the column of every feature occurrence of each row (a row's features: how often each
        column occurs in it)."""
        x = np.atleast_2d(np.asarray(ctx, dtype=np.int64))
        b = x.shape[0]
        lv = self.levels
        parts = []
        if self.i.size:
            parts.append(self.pair_class[None, :] * lv + self.dist[x[:, self.i], x[:, self.j]])
        roles = self.space.roles[None, :]
        for level in range(lv - 1):
            width = int(self.ids[level].max()) + 1
            g = self.ids[level][x] + (np.arange(b, dtype=np.int64) * width)[:, None]
            others = np.bincount(g.ravel(), minlength=b * width)[g] - 1
            parts.append(self.n_pair + (roles * (lv - 1) + level) * CROWD_CAP + np.minimum(others, CROWD_CAP - 1))
        parts.append(np.full((b, 1), self.size - 1, dtype=np.int64))
        return np.concatenate(parts, axis=1)

    def __call__(self, ctx: np.ndarray) -> np.ndarray:
        cols = self.columns(ctx)
        b = cols.shape[0]
        flat = (cols + (np.arange(b, dtype=np.int64) * self.size)[:, None]).ravel()
        return np.bincount(flat, minlength=b * self.size).reshape(b, self.size).astype(float)


class Surrogate:
    """Log throughput as a ridge regression on Features; `predict` ranks placements."""

    def __init__(self, features: Features, coef: np.ndarray, offset: float):
        self.features, self.coef, self.offset = features, coef, offset

    @staticmethod
    def fit(features: Features, ctx: np.ndarray, values: np.ndarray, weights: np.ndarray) -> "Surrogate":
        ok = np.asarray(values) > 0
        f = features(np.asarray(ctx)[ok])
        y = np.log(np.asarray(values, dtype=float)[ok])
        w = np.sqrt(np.asarray(weights, dtype=float)[ok])
        offset = float(np.average(y, weights=w ** 2)) if y.size else 0.0
        a = f * w[:, None]
        gram = a.T @ a + RIDGE * np.eye(features.size)
        coef = np.linalg.solve(gram, a.T @ ((y - offset) * w))
        return Surrogate(features, coef, offset)

    def predict(self, ctx: np.ndarray) -> np.ndarray:
        # the sum of the coefficients of the features each row holds (no feature matrix)
        return self.coef[self.features.columns(ctx)].sum(axis=1) + self.offset

    def descend(self, x: np.ndarray) -> np.ndarray:
        """Best-improvement local search on the surrogate (no measurement): its local optimum from x."""
        sp = self.features.space
        x = np.asarray(x, dtype=np.int64)
        fx = float(self.predict(x[None, :])[0])
        for _ in range(10 * sp.n_tasks):
            m = sp.moves(x)
            if not len(m):
                break
            p = self.predict(m)
            j = int(np.argmax(p))
            if p[j] <= fx + 1e-12:
                break
            x, fx = m[j], float(p[j])
        return x


def fit_ledger(features: Features, ledger: Ledger) -> Surrogate:
    """The surrogate of everything the ledger holds: the run's draws (first values) and every
    placement's mean, weighted by its count of values."""
    rows, vals, wts = [], [], []
    pc, pv = ledger.prior_ctx, ledger.prior_values
    if pv.size > MAX_PRIOR:
        order = np.argsort(-pv)
        keep = np.concatenate([order[:MAX_PRIOR // 2], order[MAX_PRIOR // 2::max(1, pv.size // MAX_PRIOR)]])
        pc, pv = pc[keep], pv[keep]
    if pv.size:
        rows.append(pc)
        vals.append(pv)
        wts.append(np.ones(pv.size))
    es = [e for e in ledger.entries.values() if e.n]
    if es:
        rows.append(np.array([e.ctx for e in es]))
        vals.append(np.array([e.mean for e in es]))
        wts.append(np.array([e.n for e in es], dtype=float))
    if not rows:
        return Surrogate(features, np.zeros(features.size), 0.0)
    return Surrogate.fit(features, np.concatenate(rows), np.concatenate(vals), np.concatenate(wts))


class SurrogateSearch(LocalSearch):
    name = "surrogate"

    def __init__(self) -> None:
        self.surrogate: Surrogate | None = None
        self.features: Features | None = None

    def describe(self) -> str:
        return ("local search started from the optima of a surrogate fitted to every measurement (pairs of tasks "
                "by the level they share, crowding per level), its neighbours ranked by it (converges under noise)")

    def refit(self, ledger: Ledger) -> Surrogate:
        if self.features is None:
            self.features = Features(ledger.space)
        self.surrogate = fit_ledger(self.features, ledger)
        return self.surrogate

    def search(self, ledger, rng, starts, report) -> None:
        sur = self.refit(ledger)
        lead = list(starts[:STARTS]) if len(starts) else list(ledger.space.random(int(rng.integers(2 ** 31)), 0,
                                                                                   STARTS))
        first = {}
        for s, k in zip(lead, ledger.space.keys(np.asarray(lead))):
            first.setdefault(k, s)  # each distinct placement descended once
        descended = [sur.descend(s) for s in first.values()]
        super().search(ledger, rng, descended + lead[:1], report)

    def rank(self, ledger: Ledger, ctx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        sur = self.surrogate or self.refit(ledger)
        p = sur.predict(ctx)
        return np.lexsort((rng.random(len(p)), -p))

    def moved(self, ledger: Ledger) -> None:
        self.refit(ledger)
