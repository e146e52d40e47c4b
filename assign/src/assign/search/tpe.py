"""`--sampler tpe`: Optuna's multivariate TPE over the Lehmer code, one trial a
measurement, the run's leading placements enqueued first.  No stopping rule
and no bound: it reports what it measured."""
from __future__ import annotations

from .optuna_study import optimise


class TPESearch:
    name = "tpe"

    def describe(self) -> str:
        return "Optuna's TPE (multivariate) over the placement's Lehmer code, one trial a measurement"

    def search(self, ledger, rng, starts, report) -> None:
        import optuna

        sampler = optuna.samplers.TPESampler(multivariate=True, seed=int(rng.integers(2 ** 31)))
        optimise(sampler, ledger, starts[:10], report)
