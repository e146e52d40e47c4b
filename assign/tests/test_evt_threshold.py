"""Mean excess, threshold candidates and the automatic rule, the semi-parametric
end point, the Anderson-Darling table, and the report texts."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from assign.evt import estimate
from assign.evt.endpoint_np import fraga_alves_neves
from assign.evt.gof import ad_critical, ad_pvalue, anderson_darling
from assign.evt.profile import Exceedances, fit
from assign.evt.threshold import MIN_EXCEEDANCES, candidate_thresholds, mean_excess


def test_mean_excess_by_hand() -> None:
    xs = np.array([1.0, 2.0, 4.0, 7.0])
    assert mean_excess(xs, np.array([2.0]))[0] == pytest.approx(((4 - 2) + (7 - 2)) / 2)
    assert mean_excess(xs, np.array([0.0]))[0] == pytest.approx((1 + 2 + 4 + 7) / 4)
    assert mean_excess(xs, np.array([3.0]))[0] == pytest.approx(((4 - 3) + (7 - 3)) / 2)
    assert np.isnan(mean_excess(xs, np.array([7.0]))[0])


def test_mean_excess_of_uniform_is_linear() -> None:
    # Uniform(0, 1): e(u) = (1 - u) / 2.
    xs = np.sort(np.random.default_rng(0).uniform(size=200_000))
    us = np.array([0.2, 0.5, 0.8])
    assert mean_excess(xs, us) == pytest.approx((1 - us) / 2, abs=3e-3)


def test_candidates_respect_the_cap() -> None:
    xs = np.sort(np.random.default_rng(1).normal(10.0, 1.0, 5000))
    cands = candidate_thresholds(xs, 0.05)
    counts = [int(np.count_nonzero(xs > u)) for u in cands]
    assert counts[0] == 250 and counts == sorted(counts, reverse=True)
    assert all(MIN_EXCEEDANCES <= c <= 250 for c in counts)
    assert cands == sorted(cands)


def test_given_threshold_is_used() -> None:
    x = stats.beta.rvs(2, 3, size=4000, random_state=np.random.default_rng(2))
    u = float(np.quantile(x, 0.97))
    est = estimate(x, threshold=u, cross_checks=False)
    assert est.threshold == u and est.exceedances == int(np.count_nonzero(x > u))
    assert est.diagnostics["threshold_rule"] == "given"
    wide = estimate(x, threshold=float(np.quantile(x, 0.8)), cross_checks=False)
    assert any("more than the 5% cap" in m for m in wide.messages)


def test_automatic_threshold_reports_neighbours() -> None:
    x = stats.beta.rvs(2, 3, size=5000, random_state=np.random.default_rng(3))
    est = estimate(x)
    d = est.diagnostics
    assert est.exceedances <= 250
    assert 1 <= len(d["neighbours"]) <= 2
    for c in d["neighbours"]:
        assert c["threshold"] != est.threshold and c["exceedances"] >= MIN_EXCEEDANCES
        assert c["upb"] is None or c["upb"] > est.best
    assert d["ad_pvalue"] >= 0.05 or est.status == "poor_fit"
    assert d["scipy_genpareto"]["converged"]
    assert d["support_ok"]


def test_fraga_alves_neves_on_known_end_points() -> None:
    # Built for the Gumbel domain, the estimator overshoots for xi < 0 by about
    # (1/log 2 - 1) * k/n for uniform data; with k = sqrt(n) (as estimate() uses)
    # that is 0.6% at n = 5000.
    rng = np.random.default_rng(4)
    for dist, tol in ((stats.uniform(0, 1), 0.01), (stats.beta(2, 2), 0.02)):
        errs = []
        for _ in range(30):
            xs = np.sort(dist.rvs(5000, random_state=rng))
            e = fraga_alves_neves(xs, 70)
            assert e >= xs[-1]
            errs.append(abs(e - 1.0))
        assert np.median(errs) < tol, dist.dist.name
    with pytest.raises(ValueError, match="k < n/2"):
        fraga_alves_neves(np.arange(10.0), 5)


def test_ad_table_is_calibrated_and_rejects_a_wrong_model() -> None:
    rng = np.random.default_rng(5)
    pvals = []
    for _ in range(200):
        y = stats.genpareto.rvs(-0.3, size=100, random_state=rng)
        f = fit(Exceedances.from_values(y, 0.0))
        pvals.append(ad_pvalue(anderson_darling(f), f.xi, 100))
    rejected = np.mean(np.array(pvals) < 0.05)
    print(f"\nAD at 5% on GPD(-0.3) data: rejected {rejected:.1%} of 200")
    assert 0.01 <= rejected <= 0.10
    # Half-normal body is no GPD at a threshold of 0.
    y = np.abs(rng.normal(size=250)) ** 3
    f = fit(Exceedances.from_values(y, 0.0))
    assert ad_pvalue(anderson_darling(f), f.xi, 250) < 0.05
    assert ad_critical(-0.3, 100) > ad_critical(-0.3, 100, alpha=0.5)


def test_text_labels_every_figure() -> None:
    x = stats.beta.rvs(2, 3, size=2000, random_state=np.random.default_rng(6)) * 1e6
    est = estimate(x)
    text = est.format_text()
    for line in text.splitlines()[1:]:
        if any(ch.isdigit() for ch in line) and not line.strip().startswith(("status", "note")):
            assert any(w in line for w in ("estimated", "measured", "observed", "threshold",
                                          "goodness", "cross-check")), line
    assert "UPB, optimum (estimated)" in text and "best observed (measured)" in text
    assert "(modelled)" in est.format_text(value_label="modelled")
    d = est.to_dict()
    json.dumps(d, allow_nan=False)
    for key in ("n", "best", "threshold", "exceedances", "xi", "sigma", "upb", "upb_ci_low",
                "upb_ci_high", "gap_pct", "confidence", "status", "messages", "diagnostics"):
        assert key in d
    assert d["gap_pct"] == pytest.approx(100 * (est.upb - est.best) / est.upb)
    assert math.isfinite(d["upb"])


def test_ties_at_the_best_value_are_reported() -> None:
    x = np.round(stats.beta.rvs(2, 3, size=3000, random_state=np.random.default_rng(7)), 2)
    est = estimate(x, cross_checks=False)
    ties = int(np.count_nonzero(x == x.max()))
    assert ties > 1 and est.diagnostics["ties_at_best"] == ties
    assert any(f"occurs {ties} times" in m for m in est.messages)
    clean = estimate(stats.beta.rvs(2, 3, size=3000, random_state=np.random.default_rng(7)), cross_checks=False)
    assert clean.diagnostics["ties_at_best"] == 1
    assert not any("occurs" in m for m in clean.messages)
