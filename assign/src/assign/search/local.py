"""`--sampler local`: a local search that converges under noise.

From the best of its starts, it looks at the distinct neighbours of the
incumbent (space.py: a task moved, or two swapped) in the order a ranker
gives (here: a random order; surrogate.py and model_guided.py rank by a
prediction), measures them once each, a batch at a time, and races the
plausible ones against the incumbent, in the spirit of COMPASS (Hong &
Nelson 2006) and its industrial-strength successor (Xu, Nelson & Hong 2010):
every placement keeps all its measurements, and repetitions go where they
change a decision.

* A neighbour replaces the incumbent when its mean exceeds the incumbent's
  by more than z_move standard errors of the difference, z_move being
  Bonferroni's over the neighbourhood (a plateau of equal placements then
  does not make the search wander), and it holds at least N_MIN values.
* A neighbour leaves the race when its mean is at most the incumbent's
  times (1 + resolution) with Z_ELIM standard errors to spare, or when it
  reaches N_MAX values undecided (a tie at what the budget can resolve).
* When every neighbour has left the race, the incumbent is a local optimum
  at that resolution: the search has converged (Report.converged) and, while
  its budget lasts, halves the resolution and tests again.  The resolution
  starts at one noise sd of a measurement (0 without noise: an exact local
  optimum, each neighbour measured once).

The noise sd is the ledger's (pooled over the placements measured twice
or more, the run's figure until those hold enough).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from .base import Report
from .ledger import Ledger

Z_ELIM = 2.0            # one-sided, per neighbour: "not better by more than the resolution"
ALPHA_MOVE = 0.05       # a move is wrong with at most this probability, over the whole neighbourhood
N_MIN = 4               # values a neighbour holds before it can replace the incumbent (1 without noise)
N_MAX = 64              # values after which a neighbour still in the race is a tie
BATCH = 32              # neighbours screened at a time, in the ranker's order
START_VALUES = 2        # values of each start before the best one is taken
FINEST = 1 / 16         # the resolution is not halved below this share of one noise sd


class LocalSearch:
    name = "local"

    def describe(self) -> str:
        return ("local search over moves and swaps, neighbours in a random order, raced against the incumbent "
                "(converges under noise)")

    # hooks for the ranked variants
    def rank(self, ledger: Ledger, ctx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.permutation(len(ctx))

    def moved(self, ledger: Ledger) -> None:
        """Called after every move (a ranker may learn from what was measured)."""

    def search(self, ledger: Ledger, rng: np.random.Generator, starts: Sequence[np.ndarray],
               report: Report) -> None:
        report.converged = False
        x = self.start(ledger, rng, starts)
        report.final = x
        delta = ledger.cv()
        while True:
            y, bound = self.step(ledger, rng, x, delta)
            if y is not None:
                x = y
                report.final, report.steps = x, report.steps + 1
                report.converged, report.resolution = False, None
                report.trace.append((ledger.spent, ledger.entries[x].mean))
                self.moved(ledger)
                continue
            better = report.resolution is None or bound < 0.9 * report.resolution
            report.converged = True
            report.resolution = bound if report.resolution is None else min(bound, report.resolution)
            cv = ledger.cv()
            if cv == 0.0 or not better or delta <= FINEST * cv or ledger.remaining == 0:
                return
            delta = min(delta, cv, bound) / 2.0

    def start(self, ledger: Ledger, rng: np.random.Generator, starts: Sequence[np.ndarray]) -> tuple:
        """The key of the best start by its mean (each measured START_VALUES times; a random
        placement where none is given)."""
        sp = ledger.space
        rows = np.asarray(starts, dtype=np.int64).reshape(-1, sp.n_tasks) if len(starts) else \
            sp.random(int(rng.integers(2 ** 31)), 0, 1)
        keys = sp.keys(rows)
        for k, r in zip(keys, rows):
            if k not in ledger.entries:
                ledger.know(k, r, [])
        uniq = list(dict.fromkeys(keys))
        ledger.measure_to(uniq, START_VALUES if ledger.cv() > 0 else 1)
        return max(uniq, key=lambda k: ledger.entries[k].mean)

    def step(self, ledger: Ledger, rng: np.random.Generator, x: tuple, delta: float) -> tuple[tuple | None, float]:
        """(a better neighbour of x, None) or (None, r): no neighbour of x is better than x by more
        than the share r (at least delta: what the race could resolve, ties included)."""
        sp = ledger.space
        nb, keys = sp.neighbours(ledger.entries[x].ctx, x)
        if not keys:
            return None, 0.0
        order = self.rank(ledger, nb, rng)
        z_move = NormalDist().inv_cdf(1.0 - ALPHA_MOVE / len(keys))
        seen: list[tuple] = []
        for b in range(0, len(order), BATCH):
            chunk = [int(i) for i in order[b:b + BATCH]]
            for i in chunk:
                if keys[i] not in ledger.entries:
                    ledger.know(keys[i], nb[i], [])
            new = [keys[i] for i in chunk if ledger.entries[keys[i]].spent == 0 and ledger.entries[keys[i]].n == 0]
            ledger.measure(new, [ledger.entries[k].ctx for k in new])
            seen.extend(keys[i] for i in chunk)
            y = self.race(ledger, x, seen, delta, z_move)
            if y is not None:
                return y, math.inf
        return None, self.bound(ledger, x, seen, delta)

    @staticmethod
    def bound(ledger: Ledger, x: tuple, cands: list[tuple], delta: float) -> float:
        """The share by which a neighbour's mean may exceed x's, at Z_ELIM standard errors: delta, or
        more where a neighbour reached N_MAX values undecided (a tie)."""
        ex = ledger.entries[x]
        sd = ledger.cv() * ex.mean
        worst = delta
        for k in cands:
            e = ledger.entries[k]
            if e.n:
                ucb = e.mean + Z_ELIM * sd * math.sqrt(1.0 / e.n + 1.0 / ex.n)
                worst = max(worst, ucb / ex.mean - 1.0)
        return max(0.0, worst)

    def race(self, ledger: Ledger, x: tuple, cands: list[tuple], delta: float, z_move: float) -> tuple | None:
        """Measure the plausible candidates and the incumbent until one candidate is shown better
        (returned) or none is plausibly better by more than delta (None)."""
        ex = ledger.entries[x]
        cv = ledger.cv()
        noisy = cv > 0
        n_min = N_MIN if noisy else 1
        if noisy and ex.n < n_min:
            ledger.measure_to([x], n_min)
        since = 0
        while True:
            if since >= 64:  # the noise figure follows what the race measures
                cv, since = ledger.cv(), 0
            sd = cv * ex.mean
            winners, active = [], []
            for k in cands:
                e = ledger.entries[k]
                if e.n == 0:
                    continue  # failed every time: no value to race with
                s = sd * math.sqrt(1.0 / e.n + 1.0 / ex.n)
                if e.n >= n_min and e.mean - z_move * s > ex.mean:
                    winners.append(k)
                elif noisy and e.n < N_MAX and e.mean + Z_ELIM * s > ex.mean * (1.0 + delta):
                    active.append(k)
            if winners:
                return max(winners, key=lambda k: ledger.entries[k].mean)
            if not active:
                return None
            ucb = lambda k: ledger.entries[k].mean + Z_ELIM * sd / math.sqrt(ledger.entries[k].n)  # noqa: E731
            pick = sorted(active, key=ucb, reverse=True)[:8]
            more = max(ledger.entries[k].n for k in pick)
            if ex.n < 2 * more and ex.n < 4 * N_MAX:
                pick.append(x)
            ledger.measure(pick, [ledger.entries[k].ctx for k in pick])
            since += len(pick)
