"""The two special functions `assign estimate` needs, without scipy.special:
the normal distribution function (the deconvolution's selection probability)
and the chi-square quantile (the interval of the noise CV).

Importing scipy.special takes about 0.2 s of CPU here (it pulls in numpy's
testing, f2py and masked-array modules through its array-API layer), as
much as the whole command may take (bench/assign.sh, target 0.3 s wall).
`ndtr` is the C library's erfc applied elementwise (within 1e-13 of
scipy.special.ndtr over the range the likelihood uses); `chi2_isf` inverts
the regularised incomplete gamma function, summed as its power series in
log space (within 1e-11 of scipy.special.chdtri; tests/test_evt_special.py
checks both against scipy)."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_ERFC = np.frompyfunc(math.erfc, 1, 1)
_SQRT1_2 = math.sqrt(0.5)


def ndtr(x) -> np.ndarray:
    """The standard normal distribution function, elementwise."""
    x = np.asarray(x, dtype=float)
    return 0.5 * _ERFC(-_SQRT1_2 * x).astype(float)


def _log_gamma_p(a: float, x: float) -> float:
    """log P(a, x), the regularised lower incomplete gamma function, from its
    series P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)),
    summed in log space over every term within e^-45 of the largest."""
    if x <= 0.0:
        return -math.inf
    n = int(max(0.0, x - a) + 12.0 * math.sqrt(max(x, a, 1.0)) + 60.0)
    logs = np.concatenate([[0.0], np.cumsum(math.log(x) - np.log(a + np.arange(1.0, n + 1.0)))])
    top = float(logs.max())
    series = top + math.log(float(np.exp(logs - top).sum()))
    # log(x^a e^-x / Gamma(a + 1)); for large a through Stirling's series, as a*log(x) - x and lgamma(a)
    # are both far larger than their difference
    if a > 50.0:
        t = (x - a) / a
        stirling = 1.0 / (12.0 * a) - 1.0 / (360.0 * a ** 3) + 1.0 / (1260.0 * a ** 5) - 1.0 / (1680.0 * a ** 7)
        pre = a * (math.log1p(t) - t) - 0.5 * math.log(2.0 * math.pi * a) - stirling
    else:
        pre = a * math.log(x) - x - math.lgamma(a + 1.0)
    return pre + series


def chi2_isf(df: float, q: float) -> float:
    """x with P(chi-square(df) > x) = q (scipy.special.chdtri(df, q)), 0 < q < 1; to 1e-11 for q in
    [0.001, 0.999] (it solves on log P, which loses digits as P nears 1: the interval of a CV uses q =
    (1 -+ confidence) / 2)."""
    if not (df > 0 and 0.0 < q < 1.0):
        raise ValueError(f"chi2_isf needs df > 0 and 0 < q < 1, got df={df!r}, q={q!r}")
    a = 0.5 * df
    target = math.log1p(-q)  # log P at the quantile
    # Wilson-Hilferty's start, then Newton steps in u = log x (log P is nearly linear in log x where x is
    # small) kept inside a bracket, which is halved when a step leaves it
    z = NormalDist().inv_cdf(1.0 - q)
    h = 2.0 / (9.0 * df)
    w = 1.0 - h + z * math.sqrt(h)
    u = math.log(a * w ** 3) if w > 0.0 else math.log(a) - 10.0
    lo, hi = -math.inf, math.inf
    for _ in range(100):
        x = math.exp(u)
        lp = _log_gamma_p(a, x)
        if lp < target:
            lo = u
        else:
            hi = u
        # d log P / d log x = x density / P, density = x^(a-1) e^-x / Gamma(a)
        slope = math.exp(min(a * u - x - math.lgamma(a) - lp, 700.0))
        step = -(lp - target) / slope if slope > 0.0 else math.inf
        if abs(step) <= 1e-12 or hi - lo <= 1e-12:  # log P is known to about 1e-13
            u += step if lo < u + step < hi else 0.0
            break
        nxt = u + step
        if not (lo < nxt < hi):
            jump = 2.0 / math.sqrt(max(a, 1.0))  # about two sds of log x
            nxt = u + jump if math.isinf(hi) else u - jump if math.isinf(lo) else 0.5 * (lo + hi)
        u = nxt
    return 2.0 * math.exp(u)
