"""What a search knows: every measurement of every distinct placement it
has seen, the run's draws it started from, and its budget.

Each distinct placement (Space.keys) is one entry with all its values; a
searcher asks for placements by key and the ledger measures them through the
run's backend (ledger.measure), spending one unit of the budget per
measurement, a failed one included.  A searcher that asks for more than is
left gets `Spent`, which ends it where it stands (search.run catches it).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .space import Space

# (contexts of each placement to measure) -> one value per row, None where the measurement failed
MeasureFn = Callable[[np.ndarray], list[float | None]]


UNKNOWN_CV = 0.05   # a measured run with no repetitions yet: a noise this large is assumed until the search measures it


class Spent(Exception):
    """The search's budget of measurements is used up."""


@dataclass
class Entry:
    ctx: np.ndarray                         # (T,) context indices of the representative measured
    values: list[float] = field(default_factory=list)
    failures: int = 0
    spent: int = 0                          # measurements this search made of it (the run's draws are not)
    total: float = 0.0                      # the sum of values (a search reads means hundreds of thousands of times)

    def add(self, v: float) -> None:
        self.values.append(v)
        self.total += v

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return self.total / len(self.values) if self.values else -math.inf


class Ledger:
    def __init__(self, space: Space, measure: MeasureFn, budget: int, cv_hint: float | None = None):
        if budget < 0:
            raise ValueError(f"budget {budget}: expected >= 0")
        self.space = space
        self._measure = measure
        self.budget = budget
        self.spent = 0
        self.entries: dict[tuple, Entry] = {}
        self.cv_hint = cv_hint              # the run's noise figure (CV of one measurement), where measured
        # the run's draws (first values), for searchers that learn from the whole sample (the surrogate)
        self.prior_ctx = np.zeros((0, space.n_tasks), dtype=np.int64)
        self.prior_values = np.zeros(0)

    @property
    def remaining(self) -> int:
        return self.budget - self.spent

    def know(self, key: tuple, ctx: np.ndarray, values: Sequence[float]) -> None:
        """Measurements made before the search (the run's draws and repetitions): free."""
        e = self.entries.setdefault(key, Entry(np.asarray(ctx, dtype=np.int64)))
        for v in values:
            e.add(float(v))

    def measure(self, keys: Sequence[tuple], ctx: np.ndarray | Sequence[np.ndarray]) -> list[float | None]:
        """Measure each placement once (a key may repeat); Spent when the budget cannot pay for all."""
        if not len(keys):
            return []
        if len(keys) > self.remaining:
            raise Spent()
        rows = np.asarray(ctx, dtype=np.int64).reshape(len(keys), -1)
        for k, r in zip(keys, rows):
            self.entries.setdefault(k, Entry(r))
        values = self._measure(np.array([self.entries[k].ctx for k in keys]))
        self.spent += len(keys)
        for k, v in zip(keys, values):
            e = self.entries[k]
            e.spent += 1
            if v is None:
                e.failures += 1
            else:
                e.add(float(v))
        return values

    def measure_to(self, keys: Sequence[tuple], n: int) -> None:
        """Bring each entry to at least n values (fewer where the budget ends: Spent)."""
        need = [k for k in keys for _ in range(max(0, n - self.entries[k].n))]
        self.measure(need, [self.entries[k].ctx for k in need])

    def cv(self) -> float:
        """The CV of one measurement: pooled over the entries measured twice or more, the run's
        figure while those hold fewer than 20 degrees of freedom (UNKNOWN_CV where the run has none
        and the search has measured nothing twice yet)."""
        num = den = 0.0
        for e in self.entries.values():
            if e.n >= 2 and e.mean > 0:
                v = np.asarray(e.values) / e.mean
                num += float(np.sum((v - 1.0) ** 2))
                den += e.n - 1
        if den >= 20 or (den > 0 and self.cv_hint is None):
            return math.sqrt(num / den)
        return self.cv_hint if self.cv_hint is not None else UNKNOWN_CV

    def best(self, n_min: int = 1) -> tuple[tuple, Entry] | None:
        """The entry with the highest mean among those with at least n_min values."""
        pool = [(k, e) for k, e in self.entries.items() if e.n >= n_min]
        return max(pool, key=lambda ke: ke[1].mean) if pool else None
