"""Choosing the placement to deploy: Kim and Nelson's fully sequential
indifference-zone procedure (KN; Kim & Nelson, ACM TOMACS 11(3), 2001) over
the leading placements of a run, measured again in interleaved rounds.

Every round measures each surviving candidate once, in an order shuffled
per round; KN's variances are those of the *differences* between two
candidates within a round, so whatever moves the machine between rounds
(drift between minutes) falls on both and cancels.  With k candidates, a
first stage of n0 rounds, probability of correct selection 1 - a and
indifference zone delta:

    h^2   = (n0 - 1) ((2a / (k - 1))^(-2/(n0-1)) - 1)
    S2_il = variance of X_i - X_l over the first n0 rounds
    after round r >= n0, candidate i is eliminated when some l has
    mean_i(r) < mean_l(r) - max(0, delta/(2r) (h^2 S2_il / delta^2 - r))

and the procedure stops when one is left.  KN's guarantee: when the best
mean exceeds every other by delta or more, it is chosen with probability at
least 1 - a; when several are within delta of the best, the chosen one is
within delta of it with that probability (the indifference zone).  A
budget of rounds may stop it first: the result then says that the choice
is not certified, and which candidates were left.

The procedure is pure (`KN.feed` a round, `KN.state`); selection.run
measures, stores every measurement as it comes, and resumes from the store.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np


def kn_h2(k: int, n0: int, alpha: float) -> float:
    """KN's h^2 (with c = 1) for k systems, first stage n0, error alpha."""
    if k < 2:
        return 0.0
    if n0 < 2:
        raise ValueError(f"the first stage needs at least 2 rounds, got {n0}")
    eta = 0.5 * ((2.0 * alpha / (k - 1)) ** (-2.0 / (n0 - 1)) - 1.0)
    return 2.0 * eta * (n0 - 1)


@dataclass
class KN:
    k: int
    n0: int
    delta: float
    alpha: float
    rounds: list[list[float]] = field(default_factory=list)   # values of the round, NaN where not measured
    alive: list[bool] = field(default_factory=list)
    eliminated_at: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.alive:
            self.alive = [True] * self.k
        self.h2 = kn_h2(self.k, self.n0, self.alpha)
        self._s2: np.ndarray | None = None

    @property
    def survivors(self) -> list[int]:
        return [i for i, a in enumerate(self.alive) if a]

    @property
    def done(self) -> bool:
        return len(self.survivors) <= 1

    def max_rounds(self) -> int | None:
        """The round by which KN is sure to stop (known after the first stage)."""
        if self._s2 is None:
            return None
        n = np.floor(self.h2 * self._s2 / self.delta ** 2)
        np.fill_diagonal(n, 0)
        return int(n.max()) + 1

    def feed(self, values: Sequence[float]) -> None:
        """One round: a value for every survivor (others are ignored)."""
        row = [float(values[i]) if self.alive[i] else math.nan for i in range(self.k)]
        self.rounds.append(row)
        r = len(self.rounds)
        if r < self.n0 or self.done:
            return
        x = np.array(self.rounds)
        if self._s2 is None:
            first = x[: self.n0]
            d = first[:, :, None] - first[:, None, :]
            self._s2 = np.var(d, axis=0, ddof=1)
        mean = x.mean(axis=0)  # survivors have every round
        alive = self.survivors
        out = []
        for i in alive:
            for l in alive:
                if l == i:
                    continue
                w = max(0.0, self.delta / (2.0 * r) * (self.h2 * self._s2[i, l] / self.delta ** 2 - r))
                if mean[i] < mean[l] - w:
                    out.append(i)
                    break
        for i in out:
            self.alive[i] = False
            self.eliminated_at[i] = r
        if not any(self.alive):  # cannot happen (the best mean survives every pair); keep the best
            self.alive[int(np.argmax(mean))] = True

    def means(self) -> np.ndarray:
        x = np.array(self.rounds) if self.rounds else np.zeros((0, self.k))
        with np.errstate(invalid="ignore"):
            return np.nanmean(x, axis=0) if x.size else np.full(self.k, math.nan)


@dataclass
class Outcome:
    chosen: int                        # candidate position
    certified: bool                    # KN stopped with one survivor
    rounds: int
    measurements: int
    survivors: list[int]
    means: list[float]
    counts: list[int]
    eliminated_at: dict[int, int]
    max_rounds: int | None


def run(kn: KN, measure: Callable[[int, int], float | None], budget_rounds: int,
        order: Callable[[int], list[int]], on_round: Callable[[int, list[int]], None] | None = None) -> Outcome:
    """Feed KN round by round: measure(candidate, round) gives a value (None:
    it failed: that candidate leaves the selection); order(round) gives the
    order of the round's measurements.  Stops when one survivor is left or
    after budget_rounds rounds."""
    failed: set[int] = set()
    while not kn.done and len(kn.rounds) < budget_rounds:
        r = len(kn.rounds)
        vals = [math.nan] * kn.k
        for i in order(r):
            if not kn.alive[i]:
                continue
            v = measure(i, r)
            if v is None:
                failed.add(i)
                kn.alive[i] = False
                kn.eliminated_at[i] = r
                continue
            vals[i] = v
        if not any(kn.alive):
            break
        kn.feed(vals)
        if on_round:
            on_round(len(kn.rounds), kn.survivors)
    x = np.array(kn.rounds) if kn.rounds else np.zeros((0, kn.k))
    counts = [int(np.count_nonzero(~np.isnan(x[:, i]))) for i in range(kn.k)]
    means = kn.means()
    surv = kn.survivors
    pool = surv if surv else [i for i in range(kn.k) if counts[i] > 0]
    if not pool:
        raise RuntimeError(f"every one of the {kn.k} candidates' measurements failed: nothing to choose (the "
                           f"failures are stored with their reasons)")
    chosen = max(pool, key=lambda i: means[i])
    return Outcome(chosen, len(surv) == 1, len(kn.rounds), int(sum(counts)), surv, [float(m) for m in means],
                   counts, dict(kn.eliminated_at), kn.max_rounds())
