"""Anderson-Darling goodness of fit of the fitted GPD to the exceedances.

The parameters are estimated from the same data, so the classical A^2 tables
do not apply; the null distribution of A^2 under this very fitting procedure
(xi >= -1 constrained MLE) was simulated for a grid of shapes and exceedance
counts by `python -m assign.evt._precompute.make_ad_table` and is stored in ad_table.py.
p-values are interpolated in that table (shape, 1/k, then quantile level).
"""
from __future__ import annotations

import numpy as np

from .profile import GpdFit


def gpd_cdf_of_fit(fit: GpdFit) -> np.ndarray:
    """Fitted GPD distribution function at each exceedance (sorted ascending)."""
    ex = fit.ex
    if fit.upb is not None:
        # xi < 0: G = 1 - (1 - y/a)^(1/T) with 1 - y/a = (d + r)/a kept precise.
        d = (fit.upb - ex.xmax) / ex.scale
        a = 1.0 + d
        t = -fit.xi
        with np.errstate(divide="ignore"):  # d = 0 on the boundary: G(max) = 1
            lg = np.where(ex.y / a < 0.5, np.log1p(-ex.y / a), np.log((d + ex.r) / a))
        z = -np.expm1(lg / t)
    elif fit.xi == 0.0:
        z = -np.expm1(-ex.y * ex.scale / fit.sigma)
    else:
        z = -np.expm1(-np.log1p(fit.xi * ex.y * ex.scale / fit.sigma) / fit.xi)
    return np.sort(z)


def anderson_darling(fit: GpdFit) -> float:
    """A^2 of the exceedances against their fitted GPD. Probabilities are kept
    in [0.1/k, 1 - 0.1/k]: a fit on the xi = -1 boundary puts its end point at
    the sample maximum, where the fitted distribution function is exactly 1
    (the simulated table uses the same rule)."""
    k = fit.ex.k
    eps = 0.1 / k
    z = np.clip(gpd_cdf_of_fit(fit), eps, 1.0 - eps)
    i = np.arange(1, k + 1)
    return float(-k - np.mean((2 * i - 1) * (np.log(z) + np.log1p(-z[::-1]))))


def ad_quantiles(xi: float, k: int) -> np.ndarray:
    """Null quantiles of A^2 (at AD_TABLE_LEVELS) for shape xi and k exceedances."""
    from .ad_table import K as AD_TABLE_K, LEVELS as AD_TABLE_LEVELS, QUANTILES as AD_TABLE_QUANTILES, XI as AD_TABLE_XI

    xis = np.asarray(AD_TABLE_XI)
    inv_k = 1.0 / np.asarray(AD_TABLE_K, dtype=float)
    q = np.asarray(AD_TABLE_QUANTILES)  # [xi, k, level]
    x = float(np.clip(xi, xis[0], xis[-1]))
    ik = float(np.clip(1.0 / k, inv_k.min(), inv_k.max()))
    # Bilinear interpolation: shape first, then 1/k (the table's K ascend, so 1/K descend).
    by_k = np.array([[np.interp(x, xis, q[:, j, m]) for m in range(q.shape[2])]
                     for j in range(q.shape[1])])
    order = np.argsort(inv_k)
    return np.array([np.interp(ik, inv_k[order], by_k[order, m]) for m in range(q.shape[2])])


def ad_pvalue(a2: float, xi: float, k: int) -> float:
    """Approximate p-value, interpolated between the tabulated levels and
    clamped to [1 - max level, 1 - min level]."""
    from .ad_table import LEVELS as AD_TABLE_LEVELS

    levels = np.asarray(AD_TABLE_LEVELS)
    qs = ad_quantiles(xi, k)
    cdf = float(np.interp(a2, qs, levels, left=levels[0], right=levels[-1]))
    return 1.0 - cdf


def ad_critical(xi: float, k: int, alpha: float = 0.05) -> float:
    from .ad_table import LEVELS as AD_TABLE_LEVELS

    levels = np.asarray(AD_TABLE_LEVELS)
    return float(np.interp(1.0 - alpha, levels, ad_quantiles(xi, k)))
