"""Each plot helper draws on an Axes, and what it draws is the right data."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from assign.evt import estimate, plots  # noqa: E402


@pytest.fixture(scope="module")
def sample() -> np.ndarray:
    return stats.beta.rvs(2, 3, size=3000, random_state=np.random.default_rng(11)) * 1e6


@pytest.fixture(scope="module")
def est(sample):
    return estimate(sample, cross_checks=False)


def test_mean_excess_plot(sample, est) -> None:
    fig, ax = plt.subplots()
    assert plots.mean_excess(ax, sample, est.threshold) is ax
    xy = ax.lines[0].get_xydata()
    xs = np.sort(sample)
    i = 1234
    assert xy[i, 0] == xs[i]
    assert xy[i, 1] == pytest.approx(np.mean(xs[xs > xs[i]] - xs[i]))
    assert ax.lines[1].get_xdata()[0] == est.threshold
    fig.savefig(__import__("io").BytesIO(), format="png")
    plt.close(fig)


def test_gpd_quantile_plot(sample, est) -> None:
    fig, ax = plt.subplots()
    plots.gpd_qq(ax, est, sample)
    q, y = ax.lines[0].get_xydata().T
    assert y.size == est.exceedances
    assert np.all(np.diff(y) >= 0) and np.all(np.diff(q) > 0)
    k = est.exceedances
    assert q[0] == pytest.approx(stats.genpareto.ppf(0.5 / k, est.xi, scale=est.sigma))
    # A good fit: sample and model quantiles close to the diagonal.
    assert np.corrcoef(q, y)[0, 1] > 0.98
    plt.close(fig)


def test_profile_plot(sample, est) -> None:
    fig, ax = plt.subplots()
    plots.profile_upb(ax, est, sample)
    upb, rel = ax.lines[0].get_xydata().T
    assert np.nanmax(rel) == pytest.approx(0.0, abs=1e-2)  # relative to the maximum
    assert upb[np.nanargmax(rel)] == pytest.approx(est.upb, rel=1e-3)
    cut = ax.lines[1].get_ydata()[0]
    assert cut == pytest.approx(-stats.chi2.ppf(0.95, 1) / 2 * est.fit.cut_factor)
    vlines = [ln.get_xdata()[0] for ln in ax.lines[3:]]
    assert any(v == pytest.approx(est.upb_ci_low) for v in vlines)
    if math.isfinite(est.upb_ci_high):
        assert any(v == pytest.approx(est.upb_ci_high) for v in vlines)
    plt.close(fig)


def test_profile_plot_without_stored_fit(sample, est) -> None:
    from dataclasses import replace
    fig, ax = plt.subplots()
    plots.profile_upb(ax, replace(est, fit=None), sample)
    upb, rel = ax.lines[0].get_xydata().T
    assert upb[np.nanargmax(rel)] == pytest.approx(est.upb, rel=1e-3)
    plt.close(fig)


def test_threshold_stability_plot(sample, est) -> None:
    fig, ax = plt.subplots()
    plots.threshold_stability(ax, sample)
    us, upb = ax.lines[0].get_xydata().T
    assert us.size >= 10 and np.all(np.diff(us) > 0)
    # The point at the chosen threshold (if on the grid) is the estimate itself.
    fits = plots.stability_points(sample)
    assert [f.ex.u for f in fits] == list(us)
    for f, v in zip(fits, upb):
        assert (f.upb if f.upb is not None else np.nan) == pytest.approx(v, nan_ok=True)
    assert len(fig.axes) == 2  # xi on the twin axis
    plt.close(fig)


def test_plots_on_unbounded_data() -> None:
    x = stats.expon.rvs(size=2000, random_state=np.random.default_rng(12))
    e = estimate(x, cross_checks=False)
    fig, axes = plt.subplots(2, 2)
    plots.mean_excess(axes[0, 0], x, e.threshold)
    plots.gpd_qq(axes[0, 1], e, x)
    plots.profile_upb(axes[1, 0], e, x)
    plots.threshold_stability(axes[1, 1], x)
    fig.savefig(__import__("io").BytesIO(), format="svg")
    plt.close(fig)
