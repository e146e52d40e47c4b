"""The closed-form end-point profile and the MLE against independent numerics."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from assign.evt.crosscheck import cross_check, scipy_refit
from assign.evt.profile import Exceedances, fit, gpd_loglik, loglik_exponential, profile_neg


def exceedances(seed: int, xi: float, k: int = 200, scale: float = 3.0e6) -> Exceedances:
    """GPD exceedances on a throughput-like scale (far from O(1) on purpose)."""
    y = stats.genpareto.rvs(xi, scale=scale, size=k, random_state=np.random.default_rng(seed))
    u = 5.0e7
    return Exceedances.from_values(u + y, u)


def numeric_profile(ex: Exceedances, upb: float) -> float:
    """max over xi in [-1, 0) of the GPD log-likelihood with end point fixed at
    upb (sigma = -xi * (upb - u)), by a generic bounded optimiser."""
    y = ex.y * ex.scale
    a = upb - ex.u
    res = optimize.minimize_scalar(lambda xi: -gpd_loglik(y, xi, -xi * a), bounds=(-1.0, -1e-9),
                                   method="bounded", options={"xatol": 1e-12})
    return float(-res.fun)


@pytest.mark.parametrize("xi", [-0.6, -0.3, -0.1])
def test_closed_form_profile_matches_numeric_profile(xi: float) -> None:
    ex = exceedances(1, xi)
    for upb in ex.xmax + ex.scale * np.array([1e-6, 1e-3, 0.05, 0.3, 1.0, 5.0, 50.0]):
        ll, _ = profile_neg(ex, math.log((upb - ex.xmax) / ex.scale))
        closed = float(ll) - ex.k * math.log(ex.scale)
        assert closed == pytest.approx(numeric_profile(ex, upb), abs=1e-6), upb


def test_profile_on_boundary_is_minus_k_log_a() -> None:
    ex = exceedances(2, -0.5)
    d = 1e-200  # a hair above the maximum: T(a) > 1, xi = -1 boundary
    ll, t = profile_neg(ex, math.log(d))
    assert t > 1.0
    assert float(ll) == pytest.approx(-ex.k * math.log1p(d))


def test_profile_tends_to_exponential_limit() -> None:
    ex = exceedances(3, -0.2)
    ll, _ = profile_neg(ex, 40.0)
    assert float(ll) == pytest.approx(loglik_exponential(ex), abs=1e-6)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("xi", [-0.7, -0.4, -0.2, 0.1, 0.3])
def test_mle_agrees_with_scipy_genpareto(seed: int, xi: float) -> None:
    ex = exceedances(100 + seed, xi)
    f = fit(ex)
    xi_s, sigma_s = scipy_refit(ex)
    ll_s = gpd_loglik(ex.y * ex.scale, xi_s, sigma_s)
    # "Where scipy converges": a finite likelihood inside xi >= -1.
    if not np.isfinite(ll_s) or xi_s < -1.0:
        pytest.fail(f"scipy did not converge from the moments start: xi={xi_s}")
    assert f.loglik >= ll_s - 1e-6
    assert f.xi == pytest.approx(xi_s, abs=2e-3)
    assert f.sigma == pytest.approx(sigma_s, rel=2e-3)
    assert cross_check(f).agrees
    if f.upb is not None:
        assert f.upb == pytest.approx(ex.u - f.sigma / f.xi, rel=1e-9)
        assert f.upb > ex.xmax


def test_mle_is_the_maximum_of_the_profile() -> None:
    ex = exceedances(7, -0.4)
    f = fit(ex)
    assert f.upb is not None and f.s_hat is not None
    for ds in (-1e-3, 1e-3, -0.1, 0.1):
        ll, _ = profile_neg(ex, f.s_hat + ds)
        assert float(ll) - ex.k * math.log(ex.scale) <= f.loglik + 1e-9


def test_interval_ends_are_roots_of_the_cut() -> None:
    ex = exceedances(8, -0.4)
    f = fit(ex, 0.95)
    assert f.upb_ci_low is not None and math.isfinite(f.upb_ci_high)
    assert ex.xmax < f.upb_ci_low < f.upb < f.upb_ci_high
    half = stats.chi2.ppf(0.95, 1) / 2
    assert f.cut_factor >= 1.0
    for end in (f.upb_ci_low, f.upb_ci_high):
        level = float(f.profile(np.array([end]))[0])
        assert level == pytest.approx(f.loglik - half * f.cut_factor, abs=1e-6)
    # The plain Wilks interval: chi-square(1) cut, inside the calibrated one.
    wl, wh = f.wilks_ci
    for end in (wl, wh):
        assert float(f.profile(np.array([end]))[0]) == pytest.approx(f.loglik - half, abs=1e-6)
    assert f.upb_ci_low <= wl < f.upb < wh <= f.upb_ci_high
    plain = fit(ex, 0.95, calibrate=False)
    assert plain.cut_factor == 1.0 and (plain.upb_ci_low, plain.upb_ci_high) == f.wilks_ci
    wider = fit(ex, 0.99)
    assert wider.upb_ci_low < f.upb_ci_low and wider.upb_ci_high > f.upb_ci_high


def test_uniform_exceedances_sit_on_the_boundary() -> None:
    # Uniform exceedances (xi = -1): the MLE often puts the end point at the max.
    hits = 0
    for seed in range(20):
        y = np.random.default_rng(seed).uniform(0.0, 1.0, 100)
        f = fit(Exceedances.from_values(y, 0.0))
        assert f.xi >= -1.0
        if f.on_boundary:
            hits += 1
            assert f.xi == -1.0 and f.upb == ex_max(y) and f.upb_ci_low == ex_max(y)
            assert f.upb_ci_high > f.upb
    assert hits > 0


def ex_max(y: np.ndarray) -> float:
    return float(y.max())


def test_scale_invariance() -> None:
    ex = exceedances(9, -0.3, scale=1.0)
    big = Exceedances.from_values(ex.u * 1e9 + ex.y * ex.scale * 1e9, ex.u * 1e9)
    f, g = fit(ex), fit(big)
    assert g.xi == pytest.approx(f.xi, rel=1e-6)
    assert (g.upb - big.u) == pytest.approx((f.upb - ex.u) * 1e9, rel=1e-6)


def test_estimate_cross_check_on_known_end_point_samples() -> None:
    """On the exceedances estimate() picks, scipy's refit agrees with the MLE
    wherever it converges inside xi >= -1; where it leaves that region (uniform
    data: xi < -1, where the likelihood is unbounded) it is not a competitor."""
    from assign.evt import estimate
    from assign.evt.coverage import DISTRIBUTIONS

    agreed = compared = 0
    for name in ("uniform(0,1)", "beta(2,3)", "rev-weibull(c=2)"):
        dist = DISTRIBUTIONS[name][0]
        for seed in range(10):
            est = estimate(dist.rvs(2000, random_state=np.random.default_rng(seed)))
            sc = est.diagnostics["scipy_genpareto"]
            if not sc["converged"] or sc["xi"] < -1.0:
                continue
            compared += 1
            assert sc["loglik"] <= est.fit.loglik + 1e-6, (name, seed, sc)
            if sc["agrees"]:
                agreed += 1
            else:  # scipy's Nelder-Mead stopped short: it must be at a worse likelihood
                assert sc["loglik"] < est.fit.loglik, (name, seed, sc)
    print(f"\nscipy genpareto converged inside xi >= -1 in {compared} of 30 estimates, agreed in {agreed}")
    assert compared >= 15 and agreed >= 0.8 * compared


def test_narrow_profile_still_bracketed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile peak narrower than the bracketing grid's step (many
    exceedances; here a coarse grid stands in for them): both ends must still
    be found around the maximum."""
    from assign.evt import profile

    coarse = np.concatenate([np.arange(-700.0, -40.0, 10.0), np.arange(-40.0, 25.0, 4.0)])
    monkeypatch.setattr(profile, "_S_GRID", coarse)
    ex = exceedances(21, -0.3, k=5000)
    f = fit(ex)
    grid_ll, _ = profile_neg(ex, coarse)
    assert not np.any(grid_ll >= f.cut)  # no grid point inside the interval
    assert f.upb is not None and f.upb_ci_low is not None and math.isfinite(f.upb_ci_high)
    assert ex.xmax < f.upb_ci_low < f.upb < f.upb_ci_high
    half = stats.chi2.ppf(0.95, 1) / 2 * f.cut_factor
    for end in (f.upb_ci_low, f.upb_ci_high):
        assert float(f.profile(np.array([end]))[0]) == pytest.approx(f.loglik - half, abs=1e-6)


@pytest.mark.parametrize("seed, xi", [(1, -0.3), (2, -0.6), (3, -0.1), (4, -0.9), (5, 0.2)])
def test_grid_refinement_places_what_scipy_places(seed: int, xi: float) -> None:
    """profile.py refines its maximum and interval ends on vectorised grids
    (no scipy at run time); scipy's bounded Brent and brentq find the same
    points on the same profile."""
    from assign.evt.profile import _S_GRID, _refine_max, _refine_root

    ex = exceedances(seed, xi)
    f = fit(ex)
    grid_ll, _ = profile_neg(ex, _S_GRID)
    i = int(np.argmax(grid_ll))
    if 0 < i < _S_GRID.size - 1:
        res = optimize.minimize_scalar(lambda v: -float(profile_neg(ex, v)[0]), bounds=(_S_GRID[i - 1], _S_GRID[i + 1]),
                                       method="bounded", options={"xatol": 1e-12})
        mine, at = _refine_max(lambda v: profile_neg(ex, v)[0], _S_GRID[i - 1], _S_GRID[i + 1])
        # at a maximum the profile is flat to machine precision over ~sqrt(eps): the place
        # agrees to that, the height to rounding
        assert mine == pytest.approx(res.x, abs=1e-6)
        assert at >= -res.fun - 1e-9 * abs(res.fun)
    for end in (f.upb_ci_low, f.upb_ci_high):
        if end is None or not np.isfinite(end) or end <= ex.xmax:
            continue
        s_end = ex.s_of_upb(end)
        g = lambda v: profile_neg(ex, v)[0] - f.cut  # noqa: E731
        lo, hi = s_end - 0.3, s_end + 0.3
        ref = optimize.brentq(lambda v: float(g(v)), lo, hi, xtol=1e-13)
        assert _refine_root(g, lo, hi) == pytest.approx(ref, abs=1e-10)
        assert end == pytest.approx(ex.upb_of_s(ref), rel=1e-12)  # on the data scale (s_of_upb rounds)


def test_chi2_quantile_without_scipy() -> None:
    from assign.evt.profile import chi2_1_quantile

    for p in (0.5, 0.9, 0.95, 0.99, 0.999):
        assert chi2_1_quantile(p) == pytest.approx(stats.chi2.ppf(p, 1), rel=1e-12)
