"""`assign best`'s choice on a stored run: first a search from the run's
leading placements (search/, the default sampler, a budget it prints),
then the leading distinct placements, drawn or found, measured again in
interleaved rounds until KN (selection.py) leaves one, every measurement
stored as it comes (a draw's in table repeats, purpose 'select'; a found
placement's in search_values with its selection and round), the search and
the selection resumable, and the result (the chosen placement's mean, its
interval and its gap to the certified optimum of means) stored with it."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .backends.base import MeasureRequest
from .repeats import noise_key
from .search.stored import noise_key as search_noise_key
from .selection import KN, Outcome, run as run_kn

if TYPE_CHECKING:
    from .backends.base import Backend
    from .evt.optimum import OptimumMean, RunSample
    from .store import Run, Store

DEFAULT_CANDIDATES = 10
DEFAULT_FIRST_STAGE = 10
DEFAULT_BUDGET_SHARE = 0.12      # of the run's draws, at most, unless --max-measurements
MIN_INDIFFERENCE_REL = 0.001     # a zone below 0.1% of the rate is not asked for
DEFAULT_SEARCH_SHARE = 1.0       # the search's budget: this share of the run's draws ...
MIN_SEARCH_BUDGET = 200          # ... and at least this many measurements
FOUND_MIN_VALUES = 2             # a found placement is a candidate once measured this often


@dataclass
class Candidate:
    draw: int | None             # the first draw of this placement (its key in the store); None: found by a search
    contexts: list[int]          # PU os_index per task
    mean: float                  # its mean so far (every measurement of every draw of it)
    measurements: int
    search: int | None = None    # the search that found it (draw None)

    @property
    def key(self) -> int | list:
        """What names it in a selection's parameters: its draw, or [search, contexts]."""
        return self.draw if self.draw is not None else [self.search, self.contexts]

    @property
    def label(self) -> str:
        return f"draw {self.draw}" if self.draw is not None else f"found by search {self.search}"


def leading_placements(sample: RunSample, assignments: dict[int, list[int]], m: int,
                       orbit_of: np.ndarray | None = None) -> list[Candidate]:
    """The m distinct placements with the highest means so far: the
    measurements of every draw of one placement pooled (draws of one
    distinct assignment, where the space is small enough to tell them,
    otherwise of one context list)."""
    groups = sample.groups()
    key_of: dict[int, Any] = {}
    for p, i in enumerate(sample.idx.tolist()):
        key_of[i] = int(orbit_of[p]) if orbit_of is not None else tuple(assignments[i])
    sums: dict[Any, float] = {}
    counts: dict[Any, int] = {}
    first_draw: dict[Any, int] = {}
    for i, v in zip(sample.idx.tolist(), sample.first.tolist()):
        k = key_of[i]
        sums[k] = sums.get(k, 0.0) + v
        counts[k] = counts.get(k, 0) + 1
        first_draw.setdefault(k, i)
    for i, vals in groups.items():
        k = key_of.get(i)
        if k is None:
            continue
        sums[k] += sum(vals)
        counts[k] += len(vals)
    ranked = sorted(sums, key=lambda k: (-sums[k] / counts[k], first_draw[k]))[:m]
    return [Candidate(first_draw[k], list(assignments[first_draw[k]]), sums[k] / counts[k], counts[k])
            for k in ranked]


def found_candidates(store: Store, run: Run, m: int, min_values: int = FOUND_MIN_VALUES
                     ) -> tuple[list[Candidate], int]:
    """The placements each finished search ended on and found best (the first k), then the m with the
    highest means that the run's searches measured min_values times or more (their search measurements
    pooled; a selection's rounds do not reorder them, so the same command finds its selection again;
    without noise one value is the mean); (candidates, k)."""
    groups: dict[tuple, list] = {}
    for sid, _, a, selection, _, v, status in store.search_values(run.id):
        if status == "ok" and selection is None:  # a selection's own rounds do not reorder the candidates
            g = groups.setdefault(tuple(a), [sid, []])
            g[1].append(v)

    def cand(a: tuple) -> Candidate:
        sid, v = groups[a]
        return Candidate(None, list(a), sum(v) / len(v), len(v), search=sid)

    ends = []
    for _, _, _, result in store.searches(run.id):
        for which in ("final", "best"):
            a = tuple((result or {}).get(which, {}).get("contexts", ()))
            if a in groups and a not in ends:
                ends.append(a)
    pool = [a for a, (_, v) in groups.items() if len(v) >= min_values and a not in ends]
    pool.sort(key=lambda a: (-sum(groups[a][1]) / len(groups[a][1]), groups[a][0], a))
    return [cand(a) for a in ends] + [cand(a) for a in pool[:m]], len(ends)


def merge_candidates(drawn: list[Candidate], found: list[Candidate], m: int, ends: int = 0) -> list[Candidate]:
    """The m best by mean of both lists, each placement (its contexts) once, a drawn one first; the
    first `ends` of found (where the searches ended) always among them."""
    out: list[Candidate] = []
    seen: set[tuple] = set()
    for c in found[:ends]:
        if tuple(c.contexts) not in seen:
            seen.add(tuple(c.contexts))
            out.append(c)
    for c in sorted(drawn + found[ends:], key=lambda c: (-c.mean, c.draw is None)):
        if tuple(c.contexts) not in seen and len(out) < m:
            seen.add(tuple(c.contexts))
            out.append(c)
    return out


def mean_interval(values: list[float], confidence: float) -> tuple[float, float, float]:
    """Mean and t interval of a candidate's selection-round values."""
    from scipy.stats import t as student

    v = np.asarray(values, dtype=float)
    m = float(v.mean())
    if v.size < 2:
        return m, math.nan, math.nan
    h = float(student.ppf(0.5 + confidence / 2.0, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - h, m + h


def select(store: Store, run: Run, backend: Backend, candidates: list[Candidate], *, delta: float,
           confidence: float, first_stage: int, budget_rounds: int, seed: int,
           params: dict, on_round: Callable[[int, list[int]], None] | None = None) -> tuple[int, Outcome, dict]:
    """Run (or resume) the selection with these parameters; (selection id, outcome,
    round values per candidate)."""
    sid = None
    for i, p, result in store.selections(run.id):
        if p == params and result is None:
            sid = i  # an unfinished one with the same parameters: resumed
    if sid is None:
        sid = store.add_selection(run.id, params)
    stored: dict[tuple[int, int], float | None] = {}
    draw_pos = {c.draw: j for j, c in enumerate(candidates) if c.draw is not None}
    found_pos = {tuple(c.contexts): j for j, c in enumerate(candidates) if c.draw is None}
    for r in store.repeats(run.id, "select", sid):
        stored[(draw_pos[r.idx], r.round)] = r.value if r.status == "ok" else None
    for _, _, a, _, rnd, v, status in store.search_values(run.id, selection=sid):
        stored[(found_pos[tuple(a)], rnd)] = v if status == "ok" else None
    k = len(candidates)
    kn = KN(k, first_stage, delta, 1.0 - confidence)
    values: dict[int, list[float]] = {j: [] for j in range(k)}
    model = hasattr(backend, "measure_array")
    _, draws_ok, _, _ = store.progress(run.id)

    def order(rnd: int) -> list[int]:
        return [int(x) for x in np.random.default_rng([seed, sid, rnd]).permutation(k)]

    def measure(j: int, rnd: int) -> float | None:
        c = candidates[j]
        if (j, rnd) in stored:
            v = stored[(j, rnd)]
        elif c.draw is not None:
            seq = store.next_repeat_seq(run.id)
            key = noise_key(seq) if model else c.draw
            res = backend.measure([MeasureRequest(key, tuple(c.contexts))])[0]
            v = res.value if res.status == "ok" else None
            store.add_repeats(run.id, [(c.draw, "select", sid, rnd, draws_ok, v, res.status, res.reason, res.extra)])
        else:
            seq = store.next_search_seq(run.id, c.search)
            res = backend.measure([MeasureRequest(search_noise_key(c.search, seq) if model else seq,
                                                  tuple(c.contexts))])[0]
            v = res.value if res.status == "ok" else None
            store.add_search_values(run.id, c.search, [(c.contexts, sid, rnd, v, res.status, res.reason, res.extra)])
        if v is not None:
            values[j].append(v)
        return v

    outcome = run_kn(kn, measure, budget_rounds, order, on_round)
    return sid, outcome, values


def indifference(noise_cv: float | None, leader_mean: float, given_pct: float | None) -> tuple[float, str]:
    """The indifference zone (packets/s) and where it came from."""
    if given_pct is not None:
        return leader_mean * given_pct / 100.0, f"--indifference {given_pct:g}%"
    if noise_cv is not None and noise_cv > 0:
        rel = max(noise_cv, MIN_INDIFFERENCE_REL)
        return leader_mean * rel, "one noise sd of a measurement (measured)"
    return leader_mean * 0.01, "1% (no noise measured yet)"


def result_dict(run: Run, sid: int, candidates: list[Candidate], outcome: Outcome, values: dict[int, list[float]],
                delta: float, delta_source: str, confidence: float, optimum: OptimumMean | None,
                cost: dict) -> dict:
    c = candidates[outcome.chosen]
    mean, lo, hi = mean_interval(values[outcome.chosen], confidence)
    out: dict[str, Any] = {
        "selection": sid, "procedure": "KN (Kim & Nelson 2001), interleaved rounds",
        "candidates": [{"draw": x.draw, "search": x.search, "contexts": x.contexts, "mean_before": x.mean,
                        "measurements_before": x.measurements, "selection_mean": outcome.means[j],
                        "selection_rounds": outcome.counts[j], "eliminated_at_round": outcome.eliminated_at.get(j)}
                       for j, x in enumerate(candidates)],
        "indifference_zone": delta, "indifference_zone_pct": 100.0 * delta / c.mean if c.mean else None,
        "indifference_source": delta_source, "probability_correct_selection": confidence,
        "certified": outcome.certified, "rounds": outcome.rounds, "measurements": outcome.measurements,
        "kn_max_rounds": outcome.max_rounds, "survivors": [candidates[j].label for j in outcome.survivors],
        "chosen": {"draw": c.draw, "search": c.search, "label": c.label, "contexts": c.contexts, "mean": mean,
                   "ci_low": lo, "ci_high": hi, "rounds": len(values[outcome.chosen]), "kind": "measured"},
        "cost": cost,
    }
    if optimum is not None and optimum.estimate is not None:
        out["optimum_mean"] = optimum.to_dict()
        out["gap_pct"] = optimum.gap_pct(mean)
        out["gap_pct_high"] = (100.0 * (optimum.ci_high - lo) / optimum.ci_high
                               if optimum.ci_high is not None and math.isfinite(optimum.ci_high)
                               and not math.isnan(lo) else None)
        if optimum.status == "refuted":
            # what is measured: the gap to the best placement's lower bound, a lower bound of the true gap
            out["gap_pct"] = max(0.0, 100.0 * (optimum.ci_low - mean) / optimum.ci_low)
            out["gap_pct_is_lower_bound"] = True
    return out



@dataclass
class Settings:
    """What a selection is asked for (None: the defaults)."""

    candidates: int | None = None
    indifference_pct: float | None = None
    confidence: float = 0.95
    first_stage: int | None = None
    max_measurements: int | None = None
    sampler: str | None = None          # the search before the selection ("none": no search); None: the default
    search_budget: int | None = None    # None: DEFAULT_SEARCH_SHARE of the run's draws, at least MIN_SEARCH_BUDGET
    predict: Callable | None = None     # the model's noise-free prediction, for --sampler model


def search_budget(settings: Settings, draws: int) -> int:
    return settings.search_budget if settings.search_budget is not None else \
        max(MIN_SEARCH_BUDGET, int(DEFAULT_SEARCH_SHARE * draws))


def choose(store: Store, run: Run, make_backend: Callable[[], Backend], settings: Settings, *,
           close: bool = False, quiet: bool = False) -> dict:
    """Choose the placement to deploy from a stored run: search from its leading placements
    (settings.sampler), then run or resume a selection among the leading placements drawn or
    found (or reuse a finished one with the same parameters); its result, stored with the run."""
    from .run_sample import run_sample

    store.set_durability(run.kind)  # a modelled value is recomputed from the seed: no disk sync per value
    sample = run_sample(store, run, purposes=("noise",))
    if sample.idx.size == 0:
        raise ValueError(f"{store.path} run {run.id} holds no successful measurements")
    conf = settings.confidence
    draws = int(sample.idx.size)
    made: list = []

    def backend() -> Backend:  # one backend for the search and the selection (dpdk: one serving process)
        if not made:
            made.append(make_backend())
        return made[0]

    try:
        return _choose(store, run, backend, settings, sample, draws, conf, quiet)
    finally:
        if close and made and hasattr(made[0], "close"):
            made[0].close()


def _choose(store, run, backend, settings: Settings, sample, draws: int, conf: float, quiet: bool) -> dict:
    import sys

    from .evt import EstimateError
    from .evt.optimum import optimum_of_means
    from .run_sample import measurement_cost, run_optimum
    from .search import DEFAULT
    from .search.stored import search
    from .units import value_unit

    searched = None
    sampler = settings.sampler or DEFAULT
    everything = sample.space_size is not None and sample.orbits is not None and \
        np.unique(sample.orbits()).size == sample.space_size
    if sampler != "none" and everything:
        searched = {"sampler": sampler, "skipped": "the sample holds every distinct placement: nothing to search"}
    elif sampler != "none":
        budget = search_budget(settings, draws)
        searched = search(store, run, backend, sampler, budget, predict=settings.predict, quiet=quiet)

    def optimum():
        try:
            return run_optimum(store, run, conf)
        except EstimateError:
            return None

    try:  # the noise figure of the zone: from the draws and their planned repetitions only, so that the same
        # command finds its finished selection again (a selection's own rounds do not change it)
        before = optimum_of_means(sample, conf)
    except EstimateError:
        before = None
    m = settings.candidates or DEFAULT_CANDIDATES
    orbit_of = sample.orbits() if sample.orbits is not None else None
    assignments = store.assignments(run.id, sample.idx.tolist())
    noiseless = before is not None and before.noise.known and before.noise.cv == 0.0
    found, ends = found_candidates(store, run, m, 1 if noiseless else FOUND_MIN_VALUES)
    # where the searches ended always compete (the certificate rests on the last one's final placement)
    cands = merge_candidates(leading_placements(sample, assignments, m, orbit_of), found, m,
                             ends=min(ends, max(0, m - 1)))
    label = "modelled" if run.kind == "modelled" else "measured"
    if len(cands) < 2:
        c = cands[0]
        return {"chosen": {"draw": c.draw, "search": c.search, "label": c.label, "contexts": c.contexts,
                           "mean": c.mean, "ci_low": None, "ci_high": None, "rounds": 0, "kind": label},
                "certified": True, "candidates": [], "note": "the run holds one distinct placement",
                "search": searched}
    cv = before.noise.cv if before is not None and before.noise.known else None
    delta, source = indifference(cv, cands[0].mean, settings.indifference_pct)
    n0 = settings.first_stage or DEFAULT_FIRST_STAGE
    budget = settings.max_measurements or max(len(cands) * (n0 + 5), int(DEFAULT_BUDGET_SHARE * draws))
    budget_rounds = max(n0, budget // len(cands))
    params = {"candidates": [c.key for c in cands], "indifference": delta, "confidence": conf,
              "first_stage": n0, "budget_rounds": budget_rounds}
    for _, p, result in store.selections(run.id):
        if p == params and result is not None:
            return dict(result, reused=True)
    if not quiet:
        print(f"choosing among {len(cands)} leading placements (KN, interleaved rounds; indifference zone "
              f"{delta:,.0f} {value_unit(run.workload, run.params)} = {100 * delta / cands[0].mean:.2g}%, {source}; "
              f"first stage {n0} rounds; at most {budget_rounds} rounds; values {label})", file=sys.stderr)

    def progress(r: int, alive: list[int]) -> None:
        if not quiet and (r % 10 == 0 or len(alive) == 1):
            print(f"  round {r}: {len(alive)} left", file=sys.stderr)

    sid, outcome, values = select(store, run, backend(), cands, delta=delta, confidence=conf, first_stage=n0,
                                  budget_rounds=budget_rounds, seed=run.seed, params=params, on_round=progress)
    res = result_dict(run, sid, cands, outcome, values, delta, source, conf, optimum(), measurement_cost(store, run))
    res["chosen"]["kind"] = label
    res["search"] = searched
    store.finish_selection(run.id, sid, res)
    return res


def describe_search(res: dict) -> str:
    """A search's result in one line."""
    if res.get("skipped"):
        return f"no search ({res['skipped']})"
    how = ("converged: no neighbour of its final placement better by more than "
           f"{100 * res['resolution']:.2g}%" if res.get("converged") else
           "did not converge within its budget" if res.get("converged") is False else "no stopping rule")
    best = res.get("best") or {}
    mean = f"; best found: mean {best['mean']:,.0f} of {best['n']} measurements" if best else ""
    return (f"search {res.get('search')} ({res['sampler']}{', stored earlier' if res.get('reused') else ''}): "
            f"{res['spent']:,} of {res['budget']:,} measurements, {res['steps']} moves, {how}{mean}")
