"""Matplotlib helpers for the figures of an EVT estimate. Each draws on a given
Axes and returns it; labels say which figures are estimated."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from scipy import stats

from .estimate import Estimate
from .profile import Exceedances, GpdFit, fit, profile_neg
from .threshold import MIN_EXCEEDANCES, mean_excess as _mean_excess

_TOP_LEFT_OUT = 5  # mean excess over the last few points is noise


def mean_excess(ax: Axes, values: Sequence[float], threshold: float,
                max_tail_fraction: float = 0.05) -> Axes:
    """Sample mean-excess plot e_n(u) against u, with the chosen threshold and
    the lowest threshold the tail-fraction cap allows."""
    xs = np.sort(np.asarray(values, dtype=float))
    us = xs[:-_TOP_LEFT_OUT] if xs.size > 2 * _TOP_LEFT_OUT else xs[:-1]
    ax.plot(us, _mean_excess(xs, us), ".", ms=2, color="C0", label="mean excess (measured sample)")
    ax.axvline(threshold, color="C3", label=f"chosen threshold u = {threshold:.6g}")
    cap = xs[xs.size - math.floor(max_tail_fraction * xs.size) - 1]
    ax.axvline(cap, color="0.5", ls=":", label=f"{max_tail_fraction:.0%} tail cap")
    ax.set_xlabel("threshold u")
    ax.set_ylabel("mean excess e_n(u)")
    ax.set_title("Sample mean-excess plot")
    ax.legend(fontsize="small")
    return ax


def gpd_qq(ax: Axes, est: Estimate, values: Sequence[float]) -> Axes:
    """Exceedances over the threshold against the quantiles of the fitted
    GPD at plotting positions (i - 0.5)/k; a straight line means a good fit."""
    x = np.asarray(values, dtype=float)
    y = np.sort(x[x > est.threshold] - est.threshold)
    p = (np.arange(1, y.size + 1) - 0.5) / y.size
    q = stats.genpareto.ppf(p, est.xi, scale=est.sigma)
    ax.plot(q, y, "o", ms=3, color="C0", label="exceedances (observed)")
    lim = [0.0, max(float(q.max()), float(y.max()))]
    ax.plot(lim, lim, color="C3", lw=1, label="y = x")
    ax.set_xlabel(f"GPD quantile (estimated: xi={est.xi:.3g}, sigma={est.sigma:.3g})")
    ax.set_ylabel("exceedance x - u (observed)")
    ax.set_title("GPD quantile plot")
    ax.legend(fontsize="small")
    return ax


def _fit_of(est: Estimate, values: Sequence[float]) -> GpdFit:
    if est.fit is not None:
        return est.fit
    x = np.asarray(values, dtype=float)
    return fit(Exceedances.from_values(x, est.threshold), est.confidence)


def profile_upb(ax: Axes, est: Estimate, values: Sequence[float]) -> Axes:
    """Profile log-likelihood of UPB relative to its maximum, the chi-square
    cut and the interval; the exponential limit (UPB -> infinity) dashed."""
    f = _fit_of(est, values)
    ex = f.ex
    # Show from the sample maximum to half again beyond the interval's upper
    # end (or a few scales when it is open): log-spaced near the maximum, where
    # the profile changes fast, and evenly spaced across the rest.
    if f.upb_ci_high is not None and math.isfinite(f.upb_ci_high):
        span = 1.5 * (f.upb_ci_high - ex.xmax)
    elif f.upb is not None:
        span = max(4.0 * (f.upb - ex.xmax), 3.0 * ex.scale)
    else:
        span = 5.0 * ex.scale
    d = np.unique(np.concatenate([np.geomspace(1e-9 * span, span, 300), np.linspace(0.0, span, 300)[1:]]))
    s = np.log(d / ex.scale)
    ll, _ = profile_neg(ex, s)
    top = f.loglik
    rel = ll - ex.k * math.log(ex.scale) - top
    upb = ex.xmax + d
    ax.plot(upb, rel, color="C0", label="profile log-likelihood")
    depth = top - f.cut_data_scale  # chi2_{conf,1} / 2
    ax.axhline(-depth, color="C3", ls="--",
               label=f"cut: chi-square(1) x {f.cut_factor:.2f} small-sample factor ({est.confidence:.0%})")
    l_inf = -ex.k * (math.log(ex.y.mean()) + 1.0) - ex.k * math.log(ex.scale)
    ax.axhline(l_inf - top, color="0.5", ls=":", label="exponential limit (UPB -> infinity)")
    if f.upb is not None:
        ax.axvline(f.upb, color="C2", label=f"UPB (estimated) = {f.upb:.6g}")
    for end in (f.upb_ci_low, f.upb_ci_high):
        if end is not None and math.isfinite(end):
            ax.axvline(end, color="C3", lw=0.8)
    ax.axvline(ex.xmax, color="k", lw=0.8, ls=":", label=f"best observed = {ex.xmax:.6g}")
    ax.set_xlim(ex.xmax - 0.03 * span, ex.xmax + span)
    ax.set_ylim(max(-4.0 * depth, float(np.min(rel))), 0.5)
    ax.set_xlabel("upper performance bound UPB")
    ax.set_ylabel("log-likelihood - maximum")
    ax.set_title("Profile likelihood of UPB (estimated)")
    ax.legend(fontsize="small")
    return ax


def stability_points(values: Sequence[float], confidence: float = 0.95,
                     max_fraction: float = 0.10, points: int = 20) -> list[GpdFit]:
    """GPD fits at `points` thresholds from the max_fraction tail down to
    MIN_EXCEEDANCES exceedances (lowest threshold first)."""
    xs = np.sort(np.asarray(values, dtype=float))
    k_hi = max(MIN_EXCEEDANCES, math.floor(max_fraction * xs.size))
    ks = np.unique(np.geomspace(k_hi, MIN_EXCEEDANCES, points).round().astype(int))[::-1]
    fits = []
    for k in ks:
        u = float(xs[xs.size - k - 1])
        if np.count_nonzero(xs > u) >= MIN_EXCEEDANCES:
            fits.append(fit(Exceedances.from_values(xs, u), confidence))
    return fits


def threshold_stability(ax: Axes, values: Sequence[float], confidence: float = 0.95,
                        max_tail_fraction: float = 0.05) -> Axes:
    """UPB and its interval against the threshold (finite ends only; an open
    upper end is drawn as an arrow), and the shape xi on a second axis."""
    xs = np.sort(np.asarray(values, dtype=float))
    fits = stability_points(xs, confidence, max_fraction=2 * max_tail_fraction)
    us = np.array([f.ex.u for f in fits])
    upb = np.array([f.upb if f.upb is not None else np.nan for f in fits])
    low = np.array([f.upb_ci_low if f.upb_ci_low is not None else np.nan for f in fits])
    high = np.array([f.upb_ci_high if f.upb_ci_high is not None else np.nan for f in fits])
    ax.plot(us, upb, "o-", color="C0", ms=3, label="UPB (estimated)")
    finite = np.isfinite(high)
    ax.vlines(us[finite], low[finite], high[finite], color="C0", alpha=0.5,
              label=f"{confidence:.0%} interval (estimated)")
    top = np.nanmax(np.concatenate([high[finite], upb, [xs[-1]]]))
    for u_, lo in zip(us[~finite], low[~finite]):
        ax.annotate("", xy=(u_, top), xytext=(u_, lo if np.isfinite(lo) else xs[-1]),
                    arrowprops=dict(arrowstyle="->", color="C1"))
    ax.axhline(xs[-1], color="k", ls=":", lw=0.8, label="best observed")
    cap = xs[xs.size - math.floor(max_tail_fraction * xs.size) - 1]
    ax.axvline(cap, color="0.5", ls=":", label=f"{max_tail_fraction:.0%} tail cap")
    ax.set_xlabel("threshold u")
    ax.set_ylabel("UPB")
    ax.set_title("End-point stability against the threshold")
    ax2 = ax.twinx()
    ax2.plot(us, [f.xi for f in fits], "s--", color="C2", ms=3, label="shape xi (estimated)")
    ax2.set_ylabel("xi")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize="small")
    return ax
