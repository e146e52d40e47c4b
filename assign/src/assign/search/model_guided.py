"""`--sampler model`: the local search of local.py, started from the
placements the performance model (backends/model.py, noise-free, with
--model-params) ranks best among a pool of random ones, each descended on
the model, and its neighbours ranked by the model.  Every placement it
proposes is measured; the model only orders them.  On a run whose values
come from that same model it knows the answer: bench/search.py says so."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .ledger import Ledger
from .local import LocalSearch

POOL = 20000            # random placements the model ranks for the starts
STARTS = 8


class ModelGuidedSearch(LocalSearch):
    name = "model"

    def __init__(self, predict: Callable[[np.ndarray], np.ndarray]):
        self.predict = predict

    def describe(self) -> str:
        return ("local search started from the model's best placements, its neighbours ranked by the model's "
                "prediction (converges under noise)")

    def descend(self, ledger: Ledger, x: np.ndarray) -> np.ndarray:
        sp = ledger.space
        fx = float(self.predict(x[None, :])[0])
        for _ in range(10 * sp.n_tasks):
            m = sp.moves(x)
            p = self.predict(m)
            j = int(np.argmax(p))
            if p[j] <= fx * (1 + 1e-12):
                break
            x, fx = m[j], float(p[j])
        return x

    def search(self, ledger, rng, starts, report) -> None:
        sp = ledger.space
        pool = sp.random(int(rng.integers(2 ** 31)), 0, POOL)
        best = pool[np.argsort(-self.predict(pool), kind="stable")[:STARTS]]
        super().search(ledger, rng, [self.descend(ledger, x) for x in best] + list(starts[:1]), report)

    def rank(self, ledger: Ledger, ctx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.lexsort((rng.random(len(ctx)), -self.predict(ctx)))
