"""What the Optuna samplers share: a study over the Lehmer code of a
placement, one trial a measurement, known placements enqueued first."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .lehmer import bounds, decode, encode
from .base import Report
from .ledger import Ledger


def optimise(sampler, ledger: Ledger, starts: Sequence[np.ndarray], report: Report) -> None:
    """Run the study until the ledger's budget is spent (every trial is one measurement)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sp = ledger.space
    top = bounds(sp.n_tasks, sp.n_contexts, sp.allow_colocate)
    names = [f"t{i}" for i in range(sp.n_tasks)]
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for s in starts:
        code = encode(np.asarray(s), sp.n_contexts, sp.allow_colocate)
        study.enqueue_trial(dict(zip(names, code)))
    while ledger.remaining > 0:
        trial = study.ask()
        code = [trial.suggest_int(n, 0, hi) for n, hi in zip(names, top)]
        ctx = decode(code, sp.n_contexts, sp.allow_colocate)
        key = sp.keys(ctx[None, :])[0]
        value = ledger.measure([key], [ctx])[0]
        if value is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(trial, value)
    report.notes.append(f"{len(study.trials)} trials")
