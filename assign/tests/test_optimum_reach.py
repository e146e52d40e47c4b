"""An upper end beyond the reach of the data (evt/optimum.py, REACH): a thin,
nearly exponential tail on a discrete space puts the fit's upper end hundreds
of times the optimum away; it is reported as none, with the reason."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assign.evt import coverage_noise as cn
from assign.evt import optimum
from assign.evt.optimum import RunSample, optimum_of_means
from assign.repeats import Plan


def _discrete_exponential_tail(seed: int, n: int = 5000, noise: float = 0.005, step: float = 0.004
                               ) -> tuple[RunSample, float]:
    """Placement means on a grid of levels 1 + step * j with a nearly exponential tail (the levels of an
    exponential(0.02)), measured with relative noise, the planned repetitions made as a run makes them."""
    rng = np.random.default_rng(seed)
    level = np.floor(rng.exponential(0.02, n) / step).astype(np.int64)
    mu = 1.0 + step * level
    first = mu * (1.0 + noise * rng.standard_normal(n))
    plan, reps = Plan([], []), []
    for lo in range(0, n, 4096):
        hi = min(n, lo + 4096)
        plan.add_draws(range(lo, hi), first[lo:hi])
        for i in plan.next(hi // 20 - plan.attempted):
            v = float(mu[i] * (1.0 + noise * rng.standard_normal()))
            plan.add_repeat(i, v)
            reps.append((i, v))
    return RunSample(np.arange(n), first, reps, placements=lambda pos: level[np.asarray(pos)]), float(mu.max())


def test_an_upper_end_hundreds_of_times_the_optimum_is_reported_as_none(monkeypatch) -> None:
    sample, truth = _discrete_exponential_tail(4)
    o = optimum_of_means(sample)
    d = o.to_dict()
    assert o.method == "deconvolution-pot" and o.status == "extrapolated"
    assert math.isinf(o.ci_high) and d["ci_high"] is None and d["one_sided"] is True
    assert o.ci_low <= truth
    dg = d["diagnostics"]
    top, t = dg["highest_measurement"], dg["threshold"]
    assert dg["reach"] == pytest.approx(top + optimum.REACH * (top - t)) and dg["reach"] < 5 * truth
    assert any("beyond" in m and "one-sided" in m and "width of the measured tail" in m for m in o.messages)
    # without the rule: the same estimate and lower end, and an upper end hundreds of times the optimum
    monkeypatch.setattr(optimum, "REACH", math.inf)
    far = optimum_of_means(sample)
    assert (far.estimate, far.ci_low, far.status) == (o.estimate, o.ci_low, o.status)
    assert far.ci_high > 100 * truth


@pytest.mark.parametrize("dist, noise, seed", [("beta(3,2)", 0.02, 0), ("rev-weibull(c=2)", 0.01, 1)])
def test_an_upper_end_within_reach_is_left_as_it_was(monkeypatch, dist: str, noise: float, seed: int) -> None:
    sample, _ = cn.endpoint_sample(dist, noise, seed, n=3000)
    o = optimum_of_means(sample)
    assert math.isfinite(o.ci_high) and "reach" not in o.diagnostics
    monkeypatch.setattr(optimum, "REACH", math.inf)
    assert optimum_of_means(sample).to_dict() == o.to_dict()
