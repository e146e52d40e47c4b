"""The paper's iterative search (sec. 5.3, Fig. 13): sample N_init, estimate,
stop when the best measured is within X% of the estimated optimum, else add
N_delta and repeat.  Every step's estimate is stored with the run, and the
samples are the run's, so an interrupted search resumes where it stopped.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .evt import EstimateError, estimate
from .session import Session


@dataclass
class Step:
    n: int
    best: float
    upb: float | None
    gap_pct: float | None
    status: str
    note: str


def iterate(session: Session, target_gap_pct: float, n_init: int = 1000, n_delta: int = 100,
            max_n: int = 20000, confidence: float = 0.95, show_progress: bool = True,
            on_step: Callable[[Step], None] | None = None) -> tuple[bool, list[Step]]:
    """Returns (target reached, steps).  The gap is the paper's: (UPB - best)
    / UPB in percent, with UPB the point estimate; a step whose estimate is
    not usable (unbounded tail, poor fit) never stops the search."""
    store, run = session.store, session.run
    _, have, _, _ = store.progress(run.id)
    n = max(n_init, have)
    steps: list[Step] = []
    while True:
        session.sample_until(n, show_progress=show_progress)
        values = store.values(run.id)
        try:
            est = estimate(values, confidence=confidence)
            d = est.to_dict()
            store.add_estimate(run.id, len(values), d)
            usable = est.status == "ok" and est.gap_pct is not None
            step = Step(len(values), est.best, est.upb, est.gap_pct, est.status,
                        "" if usable else "; ".join(est.messages[:1]))
        except EstimateError as e:
            usable = False
            step = Step(len(values), max(values) if values else float("nan"), None, None, "error", str(e))
        steps.append(step)
        if on_step:
            on_step(step)
        if usable and step.gap_pct <= target_gap_pct:
            return True, steps
        if n >= max_n:
            return False, steps
        n = min(n + n_delta, max_n)
