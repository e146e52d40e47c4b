"""Bad input to the estimator: a clear EstimateError naming the problem and value."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assign.evt import EstimateError, MIN_EXCEEDANCES, estimate, minimum_sample


def good_sample(n: int = 1000) -> np.ndarray:
    return np.random.default_rng(0).beta(2.0, 3.0, n) * 1e6


def test_estimate_error_is_a_value_error() -> None:
    assert issubclass(EstimateError, ValueError)


@pytest.mark.parametrize("values, pattern", [
    ([], r"empty sample"),
    (np.zeros(0), r"empty sample"),
    ([1.0, 2.0, 3.0], r"too few values: n=3, need at least 400"),
    (np.arange(1.0, 400.0), r"too few values: n=399"),
    ([7.5] * 1000, r"all 1000 values equal 7\.5"),
    ([1.0, 2.0, float("nan"), 4.0], r"value #3 is nan"),
    ([1.0, float("inf"), 3.0], r"value #2 is inf"),
    ([1.0, -float("inf"), 3.0], r"value #2 is -inf"),
    ([1.0, 2.0, -3.5], r"value #3 is -3\.5: throughput cannot be negative"),
    (["1.0", "abc"], r"values must be numbers"),
    ([[1.0, 2.0], [3.0, 4.0]], r"flat sequence"),
])
def test_bad_values(values, pattern: str) -> None:
    with pytest.raises(EstimateError, match=pattern):
        estimate(values)


def test_minimum_sample_is_documented_and_enforced() -> None:
    assert minimum_sample(0.05) == 400 == math.ceil(MIN_EXCEEDANCES / 0.05)
    x = good_sample(400)
    assert estimate(x, cross_checks=False).n == 400
    with pytest.raises(EstimateError, match="n=399"):
        estimate(x[:399])
    # A larger tail fraction lowers the minimum, and says so.
    with pytest.raises(EstimateError, match="need at least 200"):
        estimate(x[:150], max_tail_fraction=0.1)


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(confidence=1.0), r"confidence must lie strictly between 0 and 1, got 1\.0"),
    (dict(confidence=0.0), r"confidence .* got 0\.0"),
    (dict(confidence=float("nan")), r"confidence .* got nan"),
    (dict(max_tail_fraction=0.0), r"max_tail_fraction must lie in \(0, 0\.5\], got 0\.0"),
    (dict(max_tail_fraction=0.7), r"max_tail_fraction .* got 0\.7"),
    (dict(threshold=float("nan")), r"threshold must be a finite number, got nan"),
    (dict(threshold=1e9), r"threshold 1000000000\.0 leaves 0 value\(s\) above it"),
    (dict(threshold=0.0), r"threshold 0\.0 leaves 1000 of 1000 values above it"),
])
def test_bad_options(kwargs: dict, pattern: str) -> None:
    with pytest.raises(EstimateError, match=pattern):
        estimate(good_sample(), **kwargs)


def test_ties_at_the_top_leave_no_threshold() -> None:
    # 990 distinct low values, then 10 copies of the maximum: no threshold under
    # the 5% cap leaves 20 values strictly above it... except those below the ties.
    x = np.concatenate([np.linspace(1.0, 2.0, 500), np.full(500, 3.0)])
    with pytest.raises(EstimateError, match="too few distinct values at the top"):
        estimate(x)


def test_input_is_not_modified() -> None:
    x = good_sample()
    before = x.copy()
    estimate(x, cross_checks=False)
    assert np.array_equal(x, before)
