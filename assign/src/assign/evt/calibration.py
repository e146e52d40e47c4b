"""Small-sample calibration of Wilks' cut for the end-point interval.

Wilks: 2*(L(best) - L*(a)) ~ chi-square(1). With the tens of exceedances a 5%
tail leaves, the simulated ratio has a heavier tail (up to 1.7-2x the
chi-square quantile at k = 20), and for xi <= -1/2 the end point is a
non-regular parameter (Smith 1985) where the factor stays above 1 for any k.
The interval therefore uses the cut chi2_{conf,1}/2 * factor(xi_hat, k, conf),
factor interpolated in lr_table.py (shape, then 1/k, then level); a
parametric-bootstrap calibration evaluated at the estimated shape.
"""
from __future__ import annotations

import numpy as np


def lr_factor(xi: float, k: int, confidence: float) -> float:
    """Simulated LR quantile / chi-square(1) quantile at (xi, k, confidence).
    Shapes outside the table are clamped to it (xi >= -0.1 uses -0.1, whose
    factor is near 1); k beyond the table uses its largest k (conservative);
    levels outside the table use the nearest level's factor."""
    from .lr_table import K as LR_TABLE_K, LEVELS as LR_TABLE_LEVELS, RATIO as LR_TABLE_RATIO, XI as LR_TABLE_XI

    xis = np.asarray(LR_TABLE_XI)
    inv_k = 1.0 / np.asarray(LR_TABLE_K, dtype=float)
    ratio = np.asarray(LR_TABLE_RATIO)  # [xi, k, level]
    x = float(np.clip(xi, xis[0], xis[-1]))
    ik = float(np.clip(1.0 / k, inv_k.min(), inv_k.max()))
    lv = float(np.clip(confidence, LR_TABLE_LEVELS[0], LR_TABLE_LEVELS[-1]))
    order = np.argsort(inv_k)
    by_level = []
    for m in range(ratio.shape[2]):
        by_k = np.array([np.interp(x, xis, ratio[:, j, m]) for j in range(ratio.shape[1])])
        by_level.append(np.interp(ik, inv_k[order], by_k[order]))
    return float(max(1.0, np.interp(lv, LR_TABLE_LEVELS, by_level)))
