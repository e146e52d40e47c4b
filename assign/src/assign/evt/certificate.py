"""The certificate of the optimum of placement means: the estimate from the
iid sample (optimum.py) held against every placement measured, the
searches' included, so that nothing found refutes it (assign/EVT.md,
"The certificate").

Every placement measured has a mean and a standard error (the run's noise
CV times its mean over the square root of its count); the bounds below are
simultaneous over the placements measured twice or more (Bonferroni).

* L, the measured lower bound: the largest lower confidence bound of a
  placement's mean.  The optimum of means is at least every placement's
  mean, so the interval never starts below L.
* A placement whose lower bound lies above the interval's upper end
  refutes the interval: the status says `refuted`, the estimate becomes
  that measured lower bound and the upper end is unknown.
* The last search that converged (search/local.py: no neighbour of its
  final placement is better by more than its resolution r; it started from
  everything measured before it) gives an upper end of its own: the upper
  confidence bound of its final placement's mean (every measurement of it,
  the selection's included), times 1 + r, never below the sample's
  unrefuted interval.  It rests on the search having reached the top: a
  local optimum at resolution r within r of the global one
  (assign/notes/2026-11-28-search.md).  Only searches that start from a
  prediction of the whole space's top certify (CERTIFYING: the
  surrogate's and the model's): `--sampler local` converged 9% below the
  T2's optimum.  Nor does a search certify where the sample is too small
  for an estimate of its own (400 draws): on 100 draws of the
  60,165-placement space the surrogate was too coarse, and the search
  converged on a local optimum 7% below the optimum.  Where the sample
  holds every distinct placement (every-placement) nothing is
  extrapolated and the sample's interval stays.
* The bounds use the larger of the run's noise figure and the spread of
  every placement measured twice or more, at its 95% upper limit on few
  degrees of freedom (noise_for_bounds).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from .optimum import OptimumMean

# samplers whose convergence certifies the top (search/): they start from the optima of a prediction of the
# whole space; a plain local search's convergence is local
CERTIFYING = ("surrogate", "model")


@dataclass
class Found:
    """A placement measured in the run, with every value of it."""

    contexts: tuple[int, ...]
    values: list[float]
    source: str                    # "draw" or "search"

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))


@dataclass
class Bounds:
    low: float                     # the largest lower bound: L
    low_at: Found
    high: float                    # the largest upper bound
    z: float
    count: int


def _counts_means(found: Sequence[Found]) -> tuple[np.ndarray, np.ndarray]:
    """Each placement's measurement count and mean, as arrays: the bounds over thousands of placements in a
    few array operations (one placement at a time, certify took 30 ms at a million draws)."""
    return (np.fromiter((f.n for f in found), dtype=float, count=len(found)),
            np.fromiter((f.mean if f.n else 0.0 for f in found), dtype=float, count=len(found)))


def bounds(found: Sequence[Found], cv: float, confidence: float,
           stats: tuple[np.ndarray, np.ndarray] | None = None) -> Bounds | None:
    """Simultaneous bounds over the placements measured twice or more (once, without noise).  stats:
    _counts_means(found), where the caller has it."""
    n, mean = _counts_means(found) if stats is None else stats
    pool = np.flatnonzero((n >= (2 if cv > 0 else 1)) & (mean > 0))
    if not pool.size:
        return None
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / (2.0 * pool.size))
    half = z * cv / np.sqrt(n[pool])
    lo = mean[pool] * (1.0 - half)
    hi = mean[pool] * (1.0 + half)
    j = int(np.argmax(lo))
    return Bounds(float(lo[j]), found[int(pool[j])], float(np.max(hi)), z, int(pool.size))


def refuting(found: Sequence[Found], cv: float, z: float, high: float,
             stats: tuple[np.ndarray, np.ndarray] | None = None) -> Found | None:
    """The placement whose lower bound lies furthest above `high`, if any does."""
    n, mean = _counts_means(found) if stats is None else stats
    with np.errstate(divide="ignore", invalid="ignore"):
        lb = np.where(n > 0, mean * (1.0 - z * cv / np.sqrt(n)), -np.inf)
    above = lb > high
    if not np.any(above):
        return None
    return found[int(np.argmax(np.where(above, lb, -np.inf)))]


SURE_DF = 30   # below this many degrees of freedom the noise figure's 95% upper limit is used


def noise_for_bounds(iid: OptimumMean, found: Sequence[Found]) -> tuple[float, int]:
    """The CV the bounds use, and its degrees of freedom: the larger of the run's figure (its planned
    repetitions) and the spread of every placement measured twice or more (repetitions, searches,
    selections: each placement's values around its mean; a value that made a placement a candidate
    was a lucky one, so this errs high), and, on few degrees of freedom, that figure's 95% upper
    limit: a figure from five repetitions can be half the noise, and bounds made with it were too
    narrow on the 60,165-placement space at 300 measurements."""
    from .special import chi2_isf

    # each placement's squared relative deviations, over every placement of one count at once (numpy sums
    # a row of a 2-D array as it sums a 1-D one), then pooled in the placements' order
    by_count: dict[int, list[int]] = {}
    for j, f in enumerate(found):
        if f.n >= 2 and f.mean > 0:
            by_count.setdefault(f.n, []).append(j)
    squares: dict[int, float] = {}
    for count, js in by_count.items():
        v = np.array([found[j].values for j in js], dtype=float).reshape(len(js), count)
        v /= np.array([found[j].mean for j in js])[:, None]
        v -= 1.0
        squares.update(zip(js, np.sum(v * v, axis=1).tolist()))
    ss, df = 0.0, 0
    for j in sorted(squares):
        ss += squares[j]
        df += found[j].n - 1
    pooled = math.sqrt(ss / df) if df else 0.0
    cv, cv_df = max((iid.noise.cv, iid.noise.df), (pooled, df))
    if 0 < cv_df < SURE_DF and cv > 0:
        cv *= math.sqrt(cv_df / chi2_isf(cv_df, 0.95))
    return cv, cv_df


def certify(iid: OptimumMean, found: Sequence[Found], searches: Sequence[dict], confidence: float) -> OptimumMean:
    """The optimum of means of a run: the iid estimate, the measured lower bound, the converged
    searches' upper end, and the check that no placement measured refutes the interval."""
    if not iid.noise.known or not found:
        return iid
    cv, cv_df = noise_for_bounds(iid, found)
    stats = _counts_means(found)
    b = bounds(found, cv, confidence, stats)
    if b is None:
        return iid
    msgs = list(iid.messages)
    diag = dict(iid.diagnostics)
    diag["measured_lower_bound"] = b.low
    diag["bounds_cv"], diag["bounds_cv_df"] = cv, cv_df
    diag["placements_bounded"] = b.count
    diag["z_simultaneous_found"] = b.z
    sample_high = iid.ci_high if iid.ci_high is not None else math.inf
    sample_refuted = refuting(found, cv, b.z, sample_high, stats) if math.isfinite(sample_high) else None
    if sample_refuted is not None:
        diag["sample_interval"] = [iid.ci_low, iid.ci_high]
        msgs.append(f"the sample's interval [{iid.ci_low or 0:,.0f}, {sample_high:,.0f}] is refuted: a placement "
                    f"({sample_refuted.source}, {sample_refuted.n} measurements) has a mean of at least "
                    f"{sample_refuted.mean * (1 - b.z * cv / math.sqrt(sample_refuted.n)):,.0f} (simultaneous "
                    f"{100 * confidence:g}% bound): random draws did not reach the top of this space")
    done = [s for s in searches if s.get("converged") and s.get("resolution") is not None
            and s.get("sampler") in CERTIFYING]
    out = replace(iid, messages=msgs, diagnostics=diag)
    by_contexts = {f.contexts: f for f in found}
    ends = []
    for s in done[-1:]:  # the last search that converged: it started from everything measured before it
        f = by_contexts.get(tuple(s.get("final", {}).get("contexts", ())))
        if f is not None and f.n:
            ends.append(f.mean * (1.0 + b.z * cv / math.sqrt(f.n)) * (1.0 + float(s["resolution"])))
    # where the sample holds every placement nothing is extrapolated; where it is too small for an estimate of
    # its own (under 400 draws) a search certifies nothing either: on 100 draws of the 60,165-placement space
    # the surrogate was too coarse, and the search converged on a local optimum 7% below the optimum
    if ends and iid.method != "every-placement" and iid.estimate is not None:
        r = float(done[-1]["resolution"])
        high = max(ends)
        if sample_refuted is None and iid.status == "ok" and math.isfinite(sample_high):
            high = max(high, sample_high)
        low = b.low
        est = min(max(b.low_at.mean, low), high)
        diag.update(search_resolution=r, searches_converged=len(done), search_high=max(ends))
        msgs.append(f"certified by search {done[-1].get('search', '')} that converged: no neighbour "
                    f"of its final placement is better by more than {100 * r:.2g}%; the interval runs from the "
                    f"measured lower bound to the upper bound of that placement's mean times 1 + {r:.3g} (it "
                    f"rests on the search having reached the top: assign/EVT.md, \"The certificate\")")
        out = replace(out, estimate=est, ci_low=low, ci_high=high, method="search", status="ok")
    elif sample_refuted is not None:
        out = replace(out, estimate=b.low_at.mean, ci_low=b.low, ci_high=math.inf, status="refuted")
        msgs.append("no search converged: the optimum of means is at least the measured lower bound, with no "
                    "upper end (`assign best` searches; `assign iterate` goes on)")
    else:
        js = [j for j, f in enumerate(found) if f.source == "draw"]
        drawn = bounds([found[j] for j in js], cv, confidence, (stats[0][js], stats[1][js]))
        if out.estimate is not None and (out.ci_low is None or out.ci_low < b.low):
            out = replace(out, ci_low=b.low)
        if out.estimate is not None and out.estimate < b.low:
            out = replace(out, estimate=b.low_at.mean)
        if drawn is not None and out.ci_high is not None and math.isfinite(out.ci_high) and drawn.high > out.ci_high:
            out = replace(out, ci_high=drawn.high)  # where a re-measured draw's mean may lie
    if not searches and iid.method not in (None, "every-placement"):
        msgs.append("no search has been run on this space: the interval rests on the sample's tail alone, which "
                    "on a space whose top is thin lies below the optimum (the T2: 4-10%); `assign best` searches "
                    "before it chooses, `assign search` on its own")
    # whatever made it, the interval is held against everything measured
    if out.ci_high is not None and math.isfinite(out.ci_high):
        f = refuting(found, cv, b.z, out.ci_high, stats)
        if f is not None:
            msgs.append(f"a placement ({f.source}, {f.n} measurements, mean {f.mean:,.0f}) lies above the "
                        f"interval's upper end beyond its noise: refuted")
            out = replace(out, estimate=b.low_at.mean, ci_low=b.low, ci_high=math.inf, status="refuted")
    return out
