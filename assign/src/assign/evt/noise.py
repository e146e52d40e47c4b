"""The measurement noise of a run, from the repetitions it planned itself.

A measured value is the placement's mean times (1 + e), e ~ N(0, cv^2): the
noise is relative (a CV), as the model backend injects it and as real runs
show it (a placement at twice the rate spreads about twice as far).  The CV
is estimated from repetitions only, pooled over the placements that have at
least two of them: each placement's first value chose it for repetition
(the planned repetitions go to the leading draws, whose first values are
the lucky ones), so it would bias the spread upwards.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


NO_NOISE_CV = 1e-9  # below this, the spread of equal values' floating-point sums
# a skewness the interval's normal noise does not describe: stateful x3 measured 16 times a placement on
# this 2-core VM beside four to six CPU hogs gave 1.1 (its single values up to 2.5 times their
# placement's mean), and the deconvolution's lower end lay above every placement's mean
# (assign/notes/2026-11-28-search.md, "A space measured on this machine")
SKEWED = 0.5


@dataclass(frozen=True)
class Noise:
    """Relative noise of one measurement (measured), and what it rests on."""

    cv: float              # relative sd of one measurement
    df: int                # degrees of freedom of the pooled estimate
    placements: int        # placements with two or more repetitions
    repetitions: int       # repetitions those placements hold
    injected: float | None = None  # the model backend's noise_rel_sd (known exactly), else None
    skew: float | None = None      # skewness of the relative noise (placements of 3+ repetitions), else None
    skew_values: int = 0           # the repetitions it rests on

    def skewed(self) -> bool:
        """The noise is clearly not normal: a skewness of at least SKEWED, and four times what normal
        noise gives on as many values (its sd about sqrt(6 / values))."""
        return (self.skew is not None and self.skew_values > 0
                and abs(self.skew) >= max(SKEWED, 4.0 * math.sqrt(6.0 / self.skew_values)))

    @property
    def known(self) -> bool:
        return self.df > 0

    def interval(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """Chi-square interval of the CV (normal noise), or None without data."""
        if self.df <= 0:
            return None
        from .special import chi2_isf  # scipy.special.chdtri without scipy's import

        a = (1.0 - confidence) / 2.0
        return (self.cv * math.sqrt(self.df / chi2_isf(self.df, a)),
                self.cv * math.sqrt(self.df / chi2_isf(self.df, 1.0 - a)))

    def to_dict(self) -> dict[str, Any]:
        ci = self.interval()
        return {"cv": self.cv if self.known else None, "df": self.df, "placements": self.placements,
                "repetitions": self.repetitions, "cv_ci95": list(ci) if ci else None,
                "injected_cv": self.injected, "skewness": self.skew, "skewness_values": self.skew_values,
                "kind": "measured"}

    def describe(self) -> str:
        if not self.known:
            return "not measured (no placement has two repetitions yet)"
        ci = self.interval()
        text = (f"CV {100 * self.cv:.2f}% (measured; 95% interval {100 * ci[0]:.2f}-{100 * ci[1]:.2f}%), "
                f"from {self.repetitions} repetitions of {self.placements} placements")
        if self.injected is not None:
            text += f"; injected by the model: {100 * self.injected:.2f}%"
        return text


def estimate_noise(groups: Iterable[Iterable[float]] | Mapping[Any, Iterable[float]],
                   injected: float | None = None) -> Noise:
    """Pooled relative sd of the repetitions of each placement (each group:
    one placement's repetitions, its first value left out)."""
    arrays = groups if hasattr(groups, "rows") else None  # optimum.Groups: the values as one array too
    if isinstance(groups, Mapping):
        groups = groups.values()
    groups = [g if isinstance(g, (list, tuple)) else list(g) for g in groups]
    # each placement's mean and relative deviations over every placement of one count at once (numpy sums a
    # row of a 2-D array as it sums a 1-D one: the same numbers as one placement at a time), the squares
    # summed and pooled in the placements' order
    by_size: dict[int, list[int]] = {}
    for j, g in enumerate(groups):
        if len(g) >= 2:
            by_size.setdefault(len(g), []).append(j)
    squares: dict[int, float] = {}
    cubes = third_weight = 0.0
    n3 = 0
    for size, js in by_size.items():
        v = arrays.rows(np.array(js), size) if arrays is not None else \
            np.array([groups[j] for j in js], dtype=float).reshape(len(js), size)
        m = np.mean(v, axis=1)
        keep = m > 0
        rel = v[keep] / m[keep][:, None] - 1.0
        squares.update(zip(np.asarray(js)[keep].tolist(), (float(r @ r) for r in rel)))
        if size >= 3:  # two values deviate symmetrically from their mean: no third moment in them
            cubes += float(np.sum(rel ** 3))
            # E[sum of a group's cubed deviations from its own mean] = (m-1)(m-2)/m times the third moment
            third_weight += int(keep.sum()) * (size - 1) * (size - 2) / size
            n3 += int(keep.sum()) * size
    ss = 0.0
    df = placements = reps = 0
    for j, g in enumerate(groups):
        if j in squares:
            ss += squares[j]
            df += len(g) - 1
            placements += 1
            reps += len(g)
    cv = math.sqrt(ss / df) if df > 0 else 0.0
    if cv < NO_NOISE_CV:  # rounding of equal values, not noise (a model without noise)
        cv = 0.0
    skew = cubes / third_weight / cv ** 3 if third_weight > 0 and cv > 0 else None
    return Noise(cv=cv, df=df, placements=placements, repetitions=reps, injected=injected, skew=skew,
                 skew_values=n3 if skew is not None else 0)
