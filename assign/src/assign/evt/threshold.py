"""Threshold choice for Peaks-Over-Threshold: the sample mean-excess function,
the candidate thresholds under the tail-fraction cap, and the automatic rule.

Automatic rule: candidates are order statistics leaving k exceedances with
k = k_max, k_max*0.85, k_max*0.85^2, ... down to MIN_EXCEEDANCES, where
k_max = floor(max_tail_fraction * n) (the paper's "at most 5% above u").
The chosen threshold is the lowest candidate whose GPD fit the
Anderson-Darling test does not reject at GOF_ALPHA: the lowest threshold keeps
the most data (smallest variance) and the test guards against the bias of a
threshold too low for the GPD approximation. If every candidate is rejected,
the one with the largest p-value is used and the estimate is flagged poor_fit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .gof import ad_pvalue, anderson_darling
from .profile import Exceedances, GpdFit, fit

MIN_EXCEEDANCES = 20
CANDIDATE_RATIO = 0.85
GOF_ALPHA = 0.05


def mean_excess(sorted_values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """e_n(u) = mean(x - u | x > u) for each u (nan where nothing exceeds u)."""
    xs = np.asarray(sorted_values, dtype=float)
    u = np.atleast_1d(np.asarray(thresholds, dtype=float))
    tail_sums = np.concatenate([np.cumsum(xs[::-1])[::-1], [0.0]])
    first_above = np.searchsorted(xs, u, side="right")
    count = xs.size - first_above
    with np.errstate(invalid="ignore", divide="ignore"):
        e = tail_sums[first_above] / count - u
    return np.where(count > 0, e, np.nan)


def candidate_thresholds(sorted_values: np.ndarray, max_tail_fraction: float, n: int | None = None) -> list[float]:
    """Candidate thresholds, lowest first, each leaving at least
    MIN_EXCEEDANCES values above it and at most max_tail_fraction of n.
    n: the sample's size where sorted_values is its top (evt/top.py)."""
    xs = sorted_values
    n = xs.size if n is None else n
    k_max = math.floor(max_tail_fraction * n)
    out: list[float] = []
    k = float(k_max)
    while round(k) >= MIN_EXCEEDANCES:
        u = float(xs[xs.size - int(round(k)) - 1])
        if np.count_nonzero(xs > u) >= MIN_EXCEEDANCES and (not out or u > out[-1]):
            out.append(u)
        k *= CANDIDATE_RATIO
    return out


@dataclass(frozen=True)
class Candidate:
    threshold: float
    fit: GpdFit
    ad_stat: float
    ad_p: float

    @property
    def accepted(self) -> bool:
        return self.ad_p >= GOF_ALPHA

    def to_dict(self) -> dict:
        f = self.fit
        return dict(threshold=self.threshold, exceedances=f.ex.k, xi=f.xi, upb=f.upb,
                    upb_ci_low=f.upb_ci_low,
                    upb_ci_high=f.upb_ci_high if math.isfinite(f.upb_ci_high) else None,
                    ad_stat=self.ad_stat, ad_p=self.ad_p)


def evaluate(values: np.ndarray, u: float, confidence: float) -> Candidate:
    f = fit(Exceedances.from_values(values, u), confidence)
    a2 = anderson_darling(f)
    return Candidate(u, f, a2, ad_pvalue(a2, f.xi, f.ex.k))


def choose(sorted_values: np.ndarray, candidates: list[float], confidence: float
           ) -> tuple[int, list[Candidate | None]]:
    """Index of the chosen candidate and the candidates evaluated so far
    (None for those not needed), with both neighbours of the chosen one
    evaluated for the sensitivity report."""
    done: list[Candidate | None] = [None] * len(candidates)
    chosen = -1
    for i, u in enumerate(candidates):
        done[i] = evaluate(sorted_values, u, confidence)
        if done[i].accepted:
            chosen = i
            break
    if chosen < 0:
        chosen = int(np.argmax([c.ad_p for c in done if c is not None]))
    for j in (chosen - 1, chosen + 1):
        if 0 <= j < len(candidates) and done[j] is None:
            done[j] = evaluate(sorted_values, candidates[j], confidence)
    return chosen, done
