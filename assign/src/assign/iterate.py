"""The paper's iterative search (sec. 5.3, Fig. 13), on placement means:
sample N_init (with the planned noise repetitions), estimate the optimum of
placement means, and when the leading placement's mean is within X% of it,
choose the placement to deploy by measuring the leading ones again
(choice.py); stop when the chosen placement's mean is within X% of the
optimum of means, else add N_delta and repeat.  Every step's estimates are
stored with the run, and the samples, repetitions and selections are the
run's, so an interrupted search resumes where it stopped.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .choice import Settings, choose
from .evt import EstimateError, estimate
from .evt.optimum import OptimumMean, optimum_of_means
from .run_sample import run_optimum
from .session import Session


@dataclass
class Step:
    n: int
    best: float                      # best single value (the paper's "best found")
    upb: float | None                # the paper's UPB of single values
    gap_pct: float | None            # the gap: the chosen (else the leading) placement's mean to the optimum of means
    status: str
    note: str
    optimum: OptimumMean | None = None
    leading_mean: float | None = None
    chosen: dict | None = None       # the selection's result, when this step ran one


def iterate(session: Session, target_gap_pct: float, n_init: int = 1000, n_delta: int = 100,
            max_n: int = 20000, confidence: float = 0.95, show_progress: bool = True,
            on_step: Callable[[Step], None] | None = None,
            selection: Settings | None = None) -> tuple[bool, list[Step]]:
    """Returns (target reached, steps).  The gap is (mu* - mean) / mu* in percent,
    point estimates; a step without a usable estimate of mu* never stops the search."""
    store, run = session.store, session.run
    _, have, _, _ = store.progress(run.id)
    n = max(n_init, have)
    steps: list[Step] = []
    settings = selection or Settings(confidence=confidence)
    while True:
        session.sample_until(n, show_progress=show_progress)
        values = store.values(run.id)
        stored: dict = {}
        upb = None
        try:
            est = estimate(values, confidence=confidence, cross_checks=False)
            stored = est.to_dict()
            upb = est.upb
        except EstimateError as e:
            stored = {"error": str(e)}
        try:
            opt = run_optimum(store, run, confidence)
        except EstimateError as e:
            opt = None
            note = str(e)
        stored["optimum_mean"] = opt.to_dict() if opt is not None else None
        store.add_estimate(run.id, len(values), stored)
        step = Step(len(values), max(values) if values else float("nan"), upb, None,
                    opt.status if opt is not None else "error", "" if opt is not None else note, opt)
        if opt is not None and opt.estimate is not None and opt.status == "ok":
            lead = opt.leading
            if lead is not None:
                step.leading_mean = lead["mean"]
                step.gap_pct = opt.gap_pct(lead["mean"])
            if step.gap_pct is not None and step.gap_pct <= target_gap_pct:
                res = choose(store, run, lambda: session.backend, settings, quiet=not show_progress)
                step.chosen = res
                after = res.get("optimum_mean") or {}
                if after.get("estimate"):
                    step.gap_pct = 100.0 * (after["estimate"] - res["chosen"]["mean"]) / after["estimate"]
        elif opt is not None:
            step.note = "; ".join(opt.messages[:1])
        steps.append(step)
        if on_step:
            on_step(step)
        if step.chosen is not None and step.gap_pct is not None and step.gap_pct <= target_gap_pct:
            return True, steps
        if n >= max_n:
            return False, steps
        n = min(n + n_delta, max_n)
