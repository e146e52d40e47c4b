"""Maximum-likelihood GPD fit of threshold exceedances through the closed-form
profile likelihood of the end point (Grimshaw's reduction), and the Wilks
interval of the end point by root-finding on that profile.

Exceedances y = x - u are rescaled by their maximum, so max(y) = 1 and every
quantity is O(1). The end point of the rescaled excess distribution is
a = 1 + d with d > 0 (d = distance beyond the sample maximum). With
T(a) = -mean(log(1 - y/a)) the likelihood maximised over the shape for fixed a
is attained at xi = -T, sigma = T*a and equals

    L*(a) = -k * (log(a*T) + 1 - T)          when T <= 1,
    L*(a) = -k * log(a)                       when T > 1  (xi = -1 boundary).

Shapes xi >= 0 (no finite end point) use the same reduction with
theta = xi/sigma > 0: xi(theta) = mean(log(1 + theta*y)) and
L = -k*(log(xi/theta) + 1 + xi). Both meet the exponential limit
L_inf = -k*(log(mean(y)) + 1) as a -> infinity / theta -> 0.

The profile is evaluated in s = log(d), where 1 - y/a is computed as
(d + r)/a with r = 1 - y taken straight from the data, so that end points a
hair above the sample maximum (d ~ 1e-300) keep full precision.

The maximum and the interval ends are placed by refining a bracket on a grid
(`_refine_max`, `_refine_root`): the profile is vectorised, so each step
evaluates up to 33 points at once (fewer for tens of thousands of
exceedances) and shrinks the bracket accordingly, to 1e-12 in s.  This is what scipy.optimize's bounded Brent minimiser and
brentq did here before, to the same tolerance (tests/test_evt_profile.py
checks them against each other); it keeps `assign estimate` free of scipy,
whose import alone took longer than the 0.3 s the whole command has.

From K_BINNED exceedances on (a sample of 82,000 and more: up to 50,000
exceedances at a million draws, each profile point a pass over all of them)
the sums over the exceedances are taken over bins of them (BinnedProfile,
each bin's count, mean and central moments; within 1e-15 of the sums over
every exceedance), and the maximum and the interval ends are placed by
bracketed Newton and secant steps on the profile's derivative, to the same
1e-12 in s: the same estimate (tests/test_estimate_top.py compares the two
paths) at a small fraction of the cost.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .calibration import lr_factor

XI_MIN = -1.0
# Grid used only to bracket the maximum and the interval ends; both are then
# refined on finer grids inside the bracket.
_S_GRID = np.concatenate([np.arange(-700.0, -40.0, 10.0), np.arange(-40.0, 25.0 + 1e-9, 0.5)])
_LOG_THETA_GRID = np.arange(-12.0, 8.0 + 1e-9, 0.5)


@dataclass(frozen=True)
class Exceedances:
    """Exceedances over u, rescaled: y in (0, 1], r = 1 - y, scale = max(x) - u."""

    u: float
    xmax: float
    scale: float
    y: np.ndarray
    r: np.ndarray

    @property
    def k(self) -> int:
        return int(self.y.size)

    @classmethod
    def from_values(cls, x: np.ndarray, u: float) -> "Exceedances":
        above = x[x > u]
        xmax = float(above.max())
        scale = xmax - u
        return cls(u=float(u), xmax=xmax, scale=scale,
                   y=(above - u) / scale, r=(xmax - above) / scale)

    def upb_of_s(self, s: float) -> float:
        """End point on the data scale for s = log(d)."""
        return self.xmax + self.scale * float(np.exp(s))

    def s_of_upb(self, upb: float) -> float:
        return float(np.log((upb - self.xmax) / self.scale))


def _log_1m(y: np.ndarray, r: np.ndarray, d: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log(1 - y/a) for a = 1 + d (a column) and y with r = 1 - y taken from the data: log1p where y/a is
    small (large a), log((d + r)/a) near the maximum, where it keeps the precision of d."""
    z = y / a
    small = z < 0.5
    out = np.log1p(-z, where=small, out=np.empty_like(z))
    np.log((d + r) / a, where=~small, out=out)
    return out


def profile_neg(ex: Exceedances, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form profile log-likelihood (rescaled data) and T at s = log(d).
    Returns (L*, T), arrays shaped like s."""
    s_arr = np.atleast_1d(np.asarray(s, dtype=float))
    d = np.exp(s_arr)[:, None]
    a = 1.0 + d
    t = -_log_1m(ex.y, ex.r, d, a).mean(axis=1)
    k = ex.k
    log_a = np.log1p(d[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        interior = -k * (log_a + np.log(t) + 1.0 - t)
    ll = np.where(t <= 1.0, interior, -k * log_a)
    shape = np.shape(s)
    return ll.reshape(shape), t.reshape(shape)


def profile_pos(ex: Exceedances, log_theta: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Profile log-likelihood (rescaled data) for xi > 0 at theta = xi/sigma.
    Returns (L, xi)."""
    lt = np.atleast_1d(np.asarray(log_theta, dtype=float))
    theta = np.exp(lt)[:, None]
    xi = np.log1p(theta * ex.y).mean(axis=1)
    ll = -ex.k * (np.log(xi) - lt + 1.0 + xi)
    shape = np.shape(log_theta)
    return ll.reshape(shape), xi.reshape(shape)


def loglik_exponential(ex: Exceedances) -> float:
    """The a -> infinity limit of the profile (exponential excesses)."""
    return float(-ex.k * (np.log(ex.y.mean()) + 1.0))


def gpd_loglik(y: np.ndarray, xi: float, sigma: float) -> float:
    """Plain GPD log-likelihood (any scale), -inf outside the support."""
    if sigma <= 0:
        return -np.inf
    if abs(xi) < 1e-12:
        return float(-y.size * np.log(sigma) - y.sum() / sigma)
    w = 1.0 + xi * y / sigma
    if np.any(w <= 0):
        return -np.inf
    return float(-y.size * np.log(sigma) - (1.0 / xi + 1.0) * np.log(w).sum())


@dataclass(frozen=True)
class GpdFit:
    """Maximum-likelihood fit (xi >= -1) and the end-point profile interval."""

    ex: Exceedances
    xi: float
    sigma: float                 # data scale
    loglik: float                # on the data scale
    upb: float | None            # None when xi >= 0
    upb_ci_low: float | None     # None when every finite end point is rejected
    upb_ci_high: float           # math.inf for a one-sided interval
    on_boundary: bool            # xi = -1: end point at the sample maximum
    confidence: float
    s_hat: float | None          # log(d) at the maximum (None when xi >= 0)
    cut: float                   # profile level (rescaled) that bounds the interval
    cut_factor: float            # small-sample factor applied to chi2/2 (1 = plain Wilks)
    wilks_ci: tuple[float | None, float]  # the uncalibrated chi2(1) interval

    @property
    def one_sided(self) -> bool:
        return not np.isfinite(self.upb_ci_high)

    def profile(self, upb: np.ndarray) -> np.ndarray:
        """Profile log-likelihood on the data scale at end points upb > max."""
        s = np.log((np.asarray(upb, dtype=float) - self.ex.xmax) / self.ex.scale)
        ll, _ = profile_neg(self.ex, s)
        return ll - self.ex.k * np.log(self.ex.scale)

    @property
    def cut_data_scale(self) -> float:
        return self.cut - self.ex.k * np.log(self.ex.scale)


_REFINE_POINTS = 33
_REFINE_ELEMENTS = 200_000  # points x exceedances per step: fewer points a step for large k
_REFINE_TOL = 1e-12


def _points(k: int, least: int = 5) -> int:
    """Grid points per refinement step: 33 for a few hundred exceedances (few
    steps, each cheap), down to `least` for tens of thousands (fewer
    evaluations in all; 3 is bisection)."""
    return int(min(_REFINE_POINTS, max(least, _REFINE_ELEMENTS // max(k, 1))))


def _refine_max(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float,
                points: int = _REFINE_POINTS) -> tuple[float, float]:
    """Maximum of a unimodal vectorised f on [lo, hi]: the best of a grid, then a
    grid over its two neighbouring cells, until the bracket is below 1e-12."""
    best_x, best_f = lo, -np.inf
    while True:
        x = np.linspace(lo, hi, points)
        fx = np.asarray(f(x), dtype=float)
        i = int(np.nanargmax(np.where(np.isfinite(fx), fx, -np.inf)))
        if fx[i] >= best_f:
            best_x, best_f = float(x[i]), float(fx[i])
        if hi - lo <= _REFINE_TOL:
            return best_x, best_f
        lo, hi = float(x[max(i - 1, 0)]), float(x[min(i + 1, x.size - 1)])


def _refine_root(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float,
                 points: int = _REFINE_POINTS) -> float:
    """The sign change of a vectorised f in [lo, hi] (f(lo), f(hi) of opposite
    signs), to 1e-12: the cell of a grid where the sign changes, refined."""
    f_lo = float(f(np.array([lo]))[0])
    while hi - lo > _REFINE_TOL:
        x = np.linspace(lo, hi, points)
        fx = np.empty(points)
        fx[1:-1] = f(x[1:-1])
        fx[0] = f_lo
        fx[-1] = -f_lo if f_lo != 0 else 1.0  # not evaluated: hi's sign differs from lo's
        change = np.flatnonzero(np.signbit(fx[1:]) != np.signbit(fx[:1]))
        j = int(change[0])
        lo, hi, f_lo = float(x[j]), float(x[j + 1]), float(fx[j])
    return 0.5 * (lo + hi)


def chi2_1_quantile(p: float) -> float:
    """The p-quantile of chi-square with 1 degree of freedom: (z_{(1+p)/2})^2."""
    return NormalDist().inv_cdf(0.5 + 0.5 * p) ** 2


def fit(ex: Exceedances, confidence: float = 0.95, calibrate: bool = True) -> GpdFit:
    """Fit the GPD to the exceedances and bound the end point. The interval is
    {a : L*(a) >= L(best) - c/2} with c the chi-square(1) quantile, times the
    small-sample factor of calibration.py when `calibrate` (else plain Wilks)."""
    k = ex.k
    binned = BinnedProfile(ex) if k >= K_BINNED else None
    if binned is None:
        def neg(v: np.ndarray) -> np.ndarray:
            return profile_neg(ex, v)[0]

        def pos(v: np.ndarray) -> np.ndarray:
            return profile_pos(ex, v)[0]

        def max_neg(lo: float, hi: float) -> tuple[float, float]:
            return _refine_max(neg, lo, hi, _points(k))

        def root_neg(cut: float, lo: float, hi: float) -> float:
            return _refine_root(lambda v: neg(v) - cut, lo, hi, _points(k, 3))
    else:
        neg, pos, max_neg = binned.neg, binned.pos, binned.max_neg

    grid_ll = neg(_S_GRID)
    i = int(np.argmax(grid_ll))
    if 0 < i < _S_GRID.size - 1:
        s_hat, l_neg = max_neg(_S_GRID[i - 1], _S_GRID[i + 1])
        if grid_ll[i] > l_neg:
            s_hat, l_neg = float(_S_GRID[i]), float(grid_ll[i])
    else:
        s_hat, l_neg = float(_S_GRID[i]), float(grid_ll[i])
    l_inf = loglik_exponential(ex)

    pos_ll = pos(_LOG_THETA_GRID)
    j = int(np.argmax(pos_ll))
    l_pos = float(pos_ll[j])
    lt_hat = float(_LOG_THETA_GRID[j])
    if l_pos > max(l_neg, l_inf) and 0 < j < _LOG_THETA_GRID.size - 1:
        lt_hat, l_pos = _refine_max(pos, _LOG_THETA_GRID[j - 1], _LOG_THETA_GRID[j + 1], _points(k))

    log_scale = np.log(ex.scale)
    if l_neg >= max(l_inf, l_pos) and s_hat < _S_GRID[-1]:
        l_best = l_neg
        _, t_hat = profile_neg(ex, s_hat)
        t_hat = float(t_hat)
        on_boundary = t_hat >= 1.0 - 1e-9 or i == 0
        xi = -min(t_hat, 1.0)
        d_hat = float(np.exp(s_hat))
        sigma = -xi * (1.0 + d_hat) * ex.scale
        upb: float | None = ex.xmax + ex.scale * d_hat
        s_best: float | None = s_hat
    else:
        # No finite end point maximises the likelihood: xi >= 0.
        on_boundary = False
        s_best = None
        upb = None
        if l_pos > l_inf:
            l_best = l_pos
            theta = float(np.exp(lt_hat))
            xi = float(profile_pos(ex, lt_hat)[1])
            sigma = xi / theta * ex.scale
        else:
            l_best = l_inf
            xi = 0.0
            sigma = float(ex.y.mean()) * ex.scale
    half = chi2_1_quantile(confidence) / 2.0
    factor = lr_factor(xi, k, confidence) if calibrate else 1.0
    cut = l_best - half * factor

    # The maximum joins the bracketing grid, so a peak narrower than the grid
    # step still brackets both ends.
    if s_best is not None:
        at = int(np.searchsorted(_S_GRID, s_best))
        sg, lg = np.insert(_S_GRID, at, s_best), np.insert(grid_ll, at, l_best)
    else:
        sg, lg = _S_GRID, grid_ll
    if binned is None:
        low, high = _interval(ex, sg, lg, cut, l_inf, root_neg)
        wilks = (low, high) if factor == 1.0 else _interval(ex, sg, lg, l_best - half, l_inf, root_neg)
    else:  # both intervals' ends placed at once
        ends = binned.intervals(ex, sg, lg, [cut] if factor == 1.0 else [cut, l_best - half], l_inf)
        (low, high), wilks = ends[0], ends[-1]
    return GpdFit(ex=ex, xi=float(xi), sigma=float(sigma), loglik=float(l_best - k * log_scale),
                  upb=upb, upb_ci_low=low, upb_ci_high=high, on_boundary=bool(on_boundary),
                  confidence=confidence, s_hat=s_best, cut=float(cut), cut_factor=float(factor),
                  wilks_ci=wilks)


def _interval(ex: Exceedances, grid_s: np.ndarray, grid_ll: np.ndarray, cut: float, l_inf: float,
              root: Callable[[float, float, float], float]) -> tuple[float | None, float]:
    """Convex hull of {a : L*(a) >= cut}: the grid brackets the outermost
    crossings, root(cut, lo, hi) places them."""
    inside = np.flatnonzero(grid_ll >= cut)
    upper_open = l_inf >= cut
    if inside.size == 0:
        # Every finite end point is rejected (a clearly positive shape).
        return None, np.inf
    lo_i, hi_i = int(inside[0]), int(inside[-1])
    if lo_i == 0:
        low = ex.xmax  # the sample maximum itself cannot be excluded
    else:
        low = ex.upb_of_s(root(cut, grid_s[lo_i - 1], grid_s[lo_i]))
    if upper_open or hi_i == grid_s.size - 1:
        high = np.inf
    else:
        high = ex.upb_of_s(root(cut, grid_s[hi_i], grid_s[hi_i + 1]))
    return low, high


# Large tails (K_BINNED exceedances on): the profile's sums over bins of the exceedances.
K_BINNED = 4096
_BIN_RHO = 0.125                     # a bin's spread about its mean, relative to its distance from either end
_BIN_STEP = math.log1p(_BIN_RHO)     # bins: r (near the maximum) or y (near the threshold) within 1 + RHO
_BIN_TERMS = 16                      # series terms: RHO^17 / 17 < 1e-16
_NEWTON_TOL = 1e-12


class BinnedProfile:
    """profile_neg and profile_pos of a large set of exceedances, summed over bins of them.

    The exceedances (ascending) are cut into runs whose r = 1 - y (for those nearer the maximum) or y
    (nearer the threshold) lie within a factor 1 + _BIN_RHO.  In a bin with mean m_r of r, each term
    log(d + r_i) = log(d + m_r) + log1p(delta_i / (d + m_r)), delta_i = r_i - m_r, |delta_i| <= RHO m_r
    whatever d >= 0, so the bin's sum is its count times the term at its mean (computed as profile_neg
    computes a term) plus a power series in 1 / (d + m_r) whose coefficients are the bin's central
    moments: the sum to within 1e-16 of each term, at the cost of a few hundred bins instead of tens of
    thousands of exceedances.  A bin of one exceedance is its exact term.  Likewise log1p(theta y_i)
    about the bin's mean of y for profile_pos.  The derivative of profile_neg in s comes the same way,
    for the Newton steps that place the maximum and the interval's ends."""

    def __init__(self, ex: Exceedances):
        y, r = ex.y, ex.r
        k = y.size
        near_max = r <= y
        with np.errstate(divide="ignore"):
            # runs of equal keys are contiguous: y ascends (keys above 4e6 descend), then r descends
            key = np.where(near_max, np.floor(np.log(r) / _BIN_STEP), 4e6 - np.floor(np.log(y) / _BIN_STEP))
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        count = np.diff(np.append(starts, k))
        self.k = k
        self.count = count.astype(float)
        self.mr = np.add.reduceat(r, starts) / count
        self.my = np.add.reduceat(y, starts) / count
        which = np.repeat(np.arange(starts.size), count)
        delta = np.where(near_max, r - self.mr[which], self.my[which] - y)
        mom = np.empty((starts.size, _BIN_TERMS))                      # (B, M): sums of delta^m, m = 1..M
        power = delta.copy()
        for j in range(_BIN_TERMS):
            mom[:, j] = np.add.reduceat(power, starts)
            power *= delta
        m = np.arange(1.0, _BIN_TERMS + 1.0)
        self.c_neg = mom * ((-1.0) ** (m + 1.0) / m)                   # log1p(delta w) = sum c_m w^m
        self.c_pos = -mom / m                                          # log1p(-delta w): theta y = theta(m_y - delta)
        # d/dd of sum y_i / (d + r_i) terms: y_i = m_y - delta_i, 1/(d + r_i) = sum_j (-delta_i)^j w^(j+1)
        s = np.concatenate([self.count[:, None], mom], axis=1)         # S_0 .. S_M
        sign = (-1.0) ** np.arange(_BIN_TERMS)
        self.c_der = sign * (self.my[:, None] * s[:, :-1] - s[:, 1:])  # (B, M): coefficient of w^(j+1)

    @staticmethod
    def _series(c: np.ndarray, w: np.ndarray) -> np.ndarray:
        """sum_m c[:, m-1] w^m (Horner), for w of shape (P, B)."""
        acc = c[:, -1] * w
        for j in range(c.shape[1] - 2, -1, -1):
            np.add(acc, c[:, j], out=acc)
            np.multiply(acc, w, out=acc)
        return acc

    def _t(self, s: np.ndarray, derivative: bool = False):
        d = np.exp(s)[:, None]
        a = 1.0 + d
        lead = _log_1m(self.my, self.mr, d, a)
        w = 1.0 / (d + self.mr)
        t = -(self.count * lead + self._series(self.c_neg, w)).sum(axis=1) / self.k
        if not derivative:
            return t, None
        dt = -self._series(self.c_der, w).sum(axis=1) / (self.k * a[:, 0])   # dT/dd
        return t, dt

    def neg(self, s) -> np.ndarray:
        """profile_neg's L* at s."""
        s_arr = np.atleast_1d(np.asarray(s, dtype=float))
        t, _ = self._t(s_arr)
        log_a = np.log1p(np.exp(s_arr))
        with np.errstate(divide="ignore", invalid="ignore"):
            interior = -self.k * (log_a + np.log(t) + 1.0 - t)
        return np.where(t <= 1.0, interior, -self.k * log_a).reshape(np.shape(s))

    def neg_slope(self, s: float) -> tuple[float, float]:
        """(L*, dL*/ds) at s."""
        t, dt = self._t(np.array([float(s)]), derivative=True)
        t, dt = float(t[0]), float(dt[0])
        d = math.exp(s)
        a = 1.0 + d
        if t <= 1.0:
            return -self.k * (math.log1p(d) + math.log(t) + 1.0 - t), -self.k * d * (1.0 / a + dt / t - dt)
        return -self.k * math.log1p(d), -self.k * d / a

    def pos(self, log_theta) -> np.ndarray:
        """profile_pos's L at log theta."""
        lt = np.atleast_1d(np.asarray(log_theta, dtype=float))
        theta = np.exp(lt)[:, None]
        w = theta / (1.0 + theta * self.my)
        xi = (self.count * np.log1p(theta * self.my) + self._series(self.c_pos, w)).sum(axis=1) / self.k
        return (-self.k * (np.log(xi) - lt + 1.0 + xi)).reshape(np.shape(log_theta))

    def _neg_slopes(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(L*, dL*/ds) at each s."""
        t, dt = self._t(s, derivative=True)
        d = np.exp(s)
        a = 1.0 + d
        log_a = np.log1p(d)
        with np.errstate(divide="ignore", invalid="ignore"):
            interior = t <= 1.0
            ll = np.where(interior, -self.k * (log_a + np.log(t) + 1.0 - t), -self.k * log_a)
            slope = np.where(interior, -self.k * d * (1.0 / a + dt / t - dt), -self.k * d / a)
        return ll, slope

    def roots_neg(self, cut: np.ndarray, lo: np.ndarray, hi: np.ndarray, f_lo: np.ndarray, f_hi: np.ndarray
                  ) -> np.ndarray:
        """The s in each [lo, hi] where L*(s) = cut, given L* - cut at both ends (opposite signs): from the
        secant's point, Newton steps kept inside each bracket (halved where a step leaves it), to 1e-12;
        all the brackets at once."""
        lo, hi, f_lo = lo.astype(float), hi.astype(float), f_lo.astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = lo - f_lo * (hi - lo) / (f_hi - f_lo)
        s = np.where((lo < s) & (s < hi), s, 0.5 * (lo + hi))
        out = np.full(s.size, np.nan)
        active = np.arange(s.size)
        for _ in range(200):
            ll, g = self._neg_slopes(s[active])
            f = ll - cut[active]
            same = (f > 0.0) == (f_lo[active] > 0.0)
            lo[active] = np.where(same, s[active], lo[active])
            f_lo[active] = np.where(same, f, f_lo[active])
            hi[active] = np.where(same, hi[active], s[active])
            with np.errstate(divide="ignore", invalid="ignore"):
                nxt = s[active] - f / g
            inside = (lo[active] < nxt) & (nxt < hi[active]) & np.isfinite(nxt)
            nxt = np.where(inside, nxt, 0.5 * (lo[active] + hi[active]))
            done = (np.abs(nxt - s[active]) <= _NEWTON_TOL) | (hi[active] - lo[active] <= _NEWTON_TOL) | (f == 0.0)
            s[active] = np.where(f == 0.0, s[active], nxt)
            out[active[done]] = s[active[done]]
            active = active[~done]
            if active.size == 0:
                break
        out[active] = s[active]
        return out

    def intervals(self, ex: Exceedances, grid_s: np.ndarray, grid_ll: np.ndarray, cuts: list[float],
                  l_inf: float) -> list[tuple[float | None, float]]:
        """_interval's (low, high) for each cut, their ends placed together (roots_neg)."""
        problems: list[tuple[int, int, float, int]] = []     # (which cut, which end, cut, grid index below)
        ends: list[list] = []
        for c, cut in enumerate(cuts):
            inside = np.flatnonzero(grid_ll >= cut)
            if inside.size == 0:
                ends.append([None, np.inf])  # every finite end point is rejected (a clearly positive shape)
                continue
            lo_i, hi_i = int(inside[0]), int(inside[-1])
            end = [ex.xmax if lo_i == 0 else None, np.inf]  # the sample maximum itself cannot be excluded
            if lo_i > 0:
                problems.append((c, 0, cut, lo_i - 1))
            if not (l_inf >= cut or hi_i == grid_s.size - 1):
                problems.append((c, 1, cut, hi_i))
            ends.append(end)
        if problems:
            at = np.array([p[3] for p in problems])
            cut = np.array([p[2] for p in problems])
            roots = self.roots_neg(cut, grid_s[at], grid_s[at + 1], grid_ll[at] - cut, grid_ll[at + 1] - cut)
            for (c, which, _, _), r in zip(problems, roots.tolist()):
                ends[c][which] = ex.upb_of_s(r)
        return [(lo, hi) for lo, hi in ends]

    def max_neg(self, lo: float, hi: float) -> tuple[float, float]:
        """The maximum of L* on [lo, hi] (a grid point's neighbours): the zero of its slope by secant
        steps kept inside the bracket (Illinois), to 1e-12; _refine_max where the slope does not
        change sign over the bracket."""
        g_lo, g_hi = self.neg_slope(lo)[1], self.neg_slope(hi)[1]
        if not (g_lo > 0.0 > g_hi):
            return _refine_max(self.neg, lo, hi, _REFINE_POINTS)
        side = 0
        s = lo
        for _ in range(200):
            s = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
            if not (lo < s < hi):
                s = 0.5 * (lo + hi)
            g = self.neg_slope(s)[1]
            if g > 0.0:
                lo, g_lo = s, g
                if side == -1:
                    g_hi *= 0.5
                side = -1
            elif g < 0.0:
                hi, g_hi = s, g
                if side == 1:
                    g_lo *= 0.5
                side = 1
            else:
                break
            if hi - lo <= _NEWTON_TOL:
                break
        return s, float(self.neg(s))
