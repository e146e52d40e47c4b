"""The paper's iterative search (sec. 5.3, Fig. 13), on placement means and
with the searches that reach the top where random draws do not.  Each round:
sample up to n draws (with the planned noise repetitions), search from the
leading placements (search/, the default sampler) with the round's budget,
choose the placement to deploy by measuring the leading ones again
(choice.py), and certify the optimum of means against everything measured
(evt/certificate.py).  It stops when the interval holds (status ok) and
the chosen placement's gap at the ends of both intervals, its certified
gap, is within X% (the point estimates' gap is printed beside it: it is
never the stopping rule, since it says nothing of how far off it may be).
Otherwise the next round spends where the certified gap shrinks most: while no search has converged, or the
interval is refuted, or the search's resolution is the larger part of the
gap, on a search with twice the budget (it starts from everything measured
so far); else (and where the sample holds every placement: nothing to
search) on more draws and a longer selection.  Every step's estimates are stored with the run,
and the samples, repetitions, searches and selections are the run's, so an
interrupted loop resumes where it stopped.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from .choice import MIN_SEARCH_BUDGET, Settings, choose
from .search import DEFAULT
from .evt import EstimateError, estimate
from .evt.optimum import OptimumMean
from .run_sample import measurement_cost, run_optimum
from .session import Session


@dataclass
class Step:
    n: int
    best: float                      # best single value (the paper's "best found")
    upb: float | None                # the paper's UPB of single values
    gap_pct: float | None            # the chosen placement's mean to the optimum of means (point estimates)
    status: str
    note: str
    optimum: OptimumMean | None = None
    leading_mean: float | None = None
    chosen: dict | None = None       # the selection's result
    gap_pct_high: float | None = None    # the certified gap: at the ends of both intervals (None: no upper end)
    spent: int = 0                   # every measurement of the run so far
    next: str = ""                   # where the next round spends


def iterate(session: Session, target_gap_pct: float, n_init: int = 1000, n_delta: int = 100,
            max_n: int = 20000, confidence: float = 0.95, show_progress: bool = True,
            on_step: Callable[[Step], None] | None = None,
            selection: Settings | None = None, max_measurements: int | None = None) -> tuple[bool, list[Step]]:
    """Returns (target reached, steps).  The target is on the certified gap; a step whose interval has
    no upper end, or is refuted, never stops the loop."""
    store, run = session.store, session.run
    _, have, _, _ = store.progress(run.id)
    n = max(n_init, have)
    steps: list[Step] = []
    settings = selection or Settings(confidence=confidence)
    budget = settings.search_budget or max(MIN_SEARCH_BUDGET, n)
    rounds = settings.max_measurements
    # resumed: the rounds go on from the largest search and selection the run already holds, so that the
    # same command finds its finished rounds again instead of starting smaller ones
    sampler = settings.sampler or DEFAULT
    budget = max([budget] + [int(p["budget"]) for _, s, p, _ in store.searches(run.id) if s == sampler])
    held = [int(p["budget_rounds"]) * len(p["candidates"]) for _, p, _ in store.selections(run.id)
            if "budget_rounds" in p]
    if held and (rounds is None or max(held) > rounds):
        rounds = max(held)
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
        res = choose(store, run, lambda: session.backend, replace(settings, search_budget=budget,
                                                                   max_measurements=rounds),
                     quiet=not show_progress)
        note = ""
        try:
            opt = run_optimum(store, run, confidence)
        except EstimateError as e:
            opt, note = None, str(e)
        stored["optimum_mean"] = opt.to_dict() if opt is not None else None
        store.add_estimate(run.id, len(values), stored)
        spent = measurement_cost(store, run)["total"]
        step = Step(len(values), max(values) if values else float("nan"), upb, res.get("gap_pct"),
                    opt.status if opt is not None else "error", note, opt, chosen=res,
                    gap_pct_high=res.get("gap_pct_high"), spent=spent)
        if opt is not None and opt.messages:
            step.note = opt.messages[-1]
        reached = (opt is not None and opt.status == "ok" and step.gap_pct_high is not None
                   and step.gap_pct_high <= target_gap_pct)
        over = n >= max_n or (max_measurements is not None and spent >= max_measurements)
        if not reached and not over:
            step.next, budget, rounds, n = _next(store, run, opt, step, budget, rounds, n, n_delta, max_n)
        steps.append(step)
        if on_step:
            on_step(step)
        if reached:
            return True, steps
        if over:
            return False, steps


def _next(store, run, opt: OptimumMean | None, step: Step, budget: int, rounds: int | None, n: int, n_delta: int,
          max_n: int) -> tuple[str, int, int | None, int]:
    """Where the next round spends: (why, search budget, selection budget, draws)."""
    last = [r for _, _, _, r in store.searches(run.id) if r is not None]
    converged = [r for r in last if r.get("converged") and r.get("resolution") is not None]
    r = max((float(x["resolution"]) for x in converged), default=math.inf)
    n = min(n + n_delta, max_n)
    measured = (step.chosen or {}).get("measurements") or 100
    if ((step.chosen or {}).get("search") or {}).get("skipped"):  # the sample holds every placement
        return "more draws and a selection with twice the rounds", budget, 2 * max(rounds or 0, measured), n
    if opt is None or opt.status == "refuted" or not converged:
        return "a search with twice the budget (none converged yet, or the interval is refuted)", 2 * budget, rounds, n
    if step.gap_pct_high is None or 100.0 * r >= step.gap_pct_high / 2:
        return (f"a search with twice the budget (its resolution, {100 * r:.2g}%, is the larger part of the "
                f"certified gap)", 2 * budget, rounds, n)
    return "more draws and a selection with twice the rounds", budget, 2 * max(rounds or 0, measured), n
