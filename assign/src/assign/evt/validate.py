"""Checks on the estimator's input; every failure names the problem and value."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .errors import EstimateError
from .threshold import MIN_EXCEEDANCES


def minimum_sample(max_tail_fraction: float) -> int:
    """Smallest n whose tail fraction still leaves MIN_EXCEEDANCES exceedances."""
    return math.ceil(MIN_EXCEEDANCES / max_tail_fraction - 1e-9)


def check_options(confidence: float, max_tail_fraction: float) -> None:
    if not (isinstance(confidence, (int, float)) and 0.0 < confidence < 1.0):
        raise EstimateError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    if not (isinstance(max_tail_fraction, (int, float)) and 0.0 < max_tail_fraction <= 0.5):
        raise EstimateError(f"max_tail_fraction must lie in (0, 0.5], got {max_tail_fraction!r}")


def check_values(values: Sequence[float]) -> np.ndarray:
    """Return the values as a 1-D float array or raise EstimateError."""
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EstimateError(f"values must be numbers: {exc}") from None
    if x.ndim != 1:
        raise EstimateError(f"values must be a flat sequence, got an array of shape {x.shape}")
    if x.size == 0:
        raise EstimateError("empty sample: there are no values to estimate from")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        i = int(bad[0])
        raise EstimateError(f"value #{i + 1} is {float(x[i])!r}: every value must be a finite number "
                            f"({bad.size} non-finite value(s) in the sample)")
    neg = np.flatnonzero(x < 0)
    if neg.size:
        i = int(neg[0])
        raise EstimateError(f"value #{i + 1} is {float(x[i])!r}: throughput cannot be negative "
                            f"({neg.size} negative value(s) in the sample)")
    if x.min() == x.max():
        raise EstimateError(f"all {x.size} values equal {float(x[0])!r}: a constant sample has no tail to fit")
    return x


def check_size(n: int, max_tail_fraction: float) -> None:
    need = minimum_sample(max_tail_fraction)
    if n < need:
        raise EstimateError(
            f"too few values: n={n}, need at least {need} so that the top "
            f"{max_tail_fraction:.0%} of the sample holds {MIN_EXCEEDANCES} exceedances")


def check_threshold(x: np.ndarray, threshold: float, n: int | None = None) -> None:
    """x: the sample, or its top holding every value above the threshold; n: the sample's size."""
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold)):
        raise EstimateError(f"threshold must be a finite number, got {threshold!r}")
    k = int(np.count_nonzero(x > threshold))
    if k < MIN_EXCEEDANCES:
        raise EstimateError(f"threshold {threshold!r} leaves {k} value(s) above it; "
                            f"at least {MIN_EXCEEDANCES} are needed for a GPD fit")
    n = x.size if n is None else n
    if 2 * k >= n:
        raise EstimateError(f"threshold {threshold!r} leaves {k} of {n} values above it: "
                            "a threshold must sit in the upper tail (under half the sample above it)")
