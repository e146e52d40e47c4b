"""Semi-parametric end-point estimator of Fraga Alves and Neves (2014,
Statistica Sinica 24, "Estimation of the finite right endpoint in the Gumbel
domain"), used as an independent cross-check of the GPD end point:

    x_F = X(n) + X(n-k) - (1/log 2) * sum_{i=0}^{k-1} log(1 + 1/(k+i)) * X(n-k-i)

X(j) is the j-th smallest value. The weights sum to log 2, so the estimate is
the sample maximum plus the distance between X(n-k) and a weighted mean of
the k order statistics below it. Valid for xi <= 0 (consistent, slower than
the MLE when xi < 0); it makes no parametric assumption about the tail.
"""
from __future__ import annotations

import math

import numpy as np


def fraga_alves_neves(sorted_values: np.ndarray, k: int) -> float:
    """End-point estimate from an ascending sample using the top 2k values."""
    n = sorted_values.size
    if k < 1 or 2 * k >= n:
        raise ValueError(f"need 1 <= k < n/2, got k={k} for n={n}")
    i = np.arange(k)
    weights = np.log1p(1.0 / (k + i)) / math.log(2.0)
    lower = sorted_values[n - k - 1 - i]  # X(n-k-i) in 1-based order statistics
    return float(sorted_values[-1] + sorted_values[n - k - 1] - np.dot(weights, lower))
