"""The fast paths of `assign estimate` against the paths they replace:

* a store with its value index (store.py) gives, through the top of its
  values (evt/top.py, run_sample.sample_top and tail_sample), the estimate
  the command gives from every value of a store without it: the same JSON;
* the profile over bins of a large tail (profile.BinnedProfile, from
  K_BINNED exceedances on) against the profile over every exceedance: the
  same estimate to within floating-point noise of the maximum's place.
"""
from __future__ import annotations

import gc
import json
import shutil
import sqlite3

import numpy as np
import pytest
from scipy import stats

from assign.cli import main
from assign.evt import profile
from assign.evt.estimate import estimate
from assign.evt.profile import BinnedProfile, Exceedances, profile_neg, profile_pos
from assign.evt.top import SampleTop, top_size
from assign.store import VALUE_INDEX, Store


def _sample(db, n: int, noise: str, workload: str = "ipfwd-mem") -> None:
    assert main(["sample", "--n", str(n), "--workload", workload, "--machine", "ultrasparc-t2", "--backend",
                 "model", "--noise", noise, "--db", str(db), "--quiet"]) == 0
    gc.collect()  # the command leaves its store to be finished when collected (or at exit): the index then


def _estimate(capsys, db, *extra: str) -> dict:
    capsys.readouterr()
    assert main(["estimate", "--db", str(db), "--json", *extra]) == 0
    d = json.loads(capsys.readouterr().out)
    d.pop("source")
    return d


def _without_index(db, tmp_path):
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    with sqlite3.connect(copy) as c:
        c.execute(f"DROP INDEX {VALUE_INDEX}")
    return copy


@pytest.mark.parametrize("noise", ["0.02", "0"])
def test_the_top_of_a_store_gives_the_estimate_of_every_value(tmp_path, capsys, noise: str) -> None:
    db = tmp_path / "r.db"
    _sample(db, 3000, noise)
    with Store(str(db), readonly=True) as s:
        assert s.value_summary(1) is not None  # the sample created its index when it ended
    copy = _without_index(db, tmp_path)
    with Store(str(copy), readonly=True) as s:
        assert s.value_summary(1) is None
    for extra in ((), ("--threshold", "6400000")):
        fast, slow = _estimate(capsys, db, *extra), _estimate(capsys, copy, *extra)
        assert fast == slow
        assert fast["optimum_mean"]["method"] == ("deconvolution-pot" if noise != "0" else "paper-upb")
        assert fast["n"] == 3000


def test_a_store_keeps_its_index_through_bulk_writes_and_reads_the_same(tmp_path) -> None:
    """A sample into a store with the index drops it for the bulk of its inserts and builds it again
    when it ends; until then (a killed sample) the store is read without it, with the same values."""
    db = tmp_path / "r.db"
    _sample(db, 500, "0.02")
    _sample(db, 6000, "0.02")  # an insert bigger than an eighth of the table: the index is dropped, then rebuilt
    with Store(str(db), readonly=True) as s:
        assert s._value_index
        n, low, high = s.value_summary(1)
        values = np.array(s.values(1))
        assert (n, low, high) == (values.size, values.min(), values.max())
        top = s.top_values(1, 50)
        assert np.array_equal(top, np.sort(values)[::-1][:50])
        assert s.progress(1) == (6000, 6000, 0, float(values.max()))


def test_sample_top_covers_what_the_estimate_reads() -> None:
    x = np.sort(np.random.default_rng(2).beta(2, 3, 20000))
    for m in (top_size(x.size), top_size(x.size) + 7):
        top = SampleTop(x[-m:], x.size)
        a, b = estimate(x, cross_checks=False), estimate(top, cross_checks=False)
        assert a.to_dict() == b.to_dict()
    with pytest.raises(ValueError):
        estimate(SampleTop(x[-100:], x.size))


def _tails() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    n = 90_000  # a 5% tail of 4500 exceedances: the first candidate thresholds are binned
    return {"uniform": rng.uniform(0.0, 1.0, n), "beta(2,3)": rng.beta(2.0, 3.0, n),
            "rev-weibull(c=4)": stats.weibull_max.rvs(4, loc=1, scale=0.1, size=n, random_state=rng),
            "exponential": rng.exponential(1.0, n), "pareto": rng.pareto(3.0, n) + 1.0,
            "discrete": np.round(rng.beta(2.0, 3.0, n), 3)}


def test_binned_profile_is_the_profile_over_every_exceedance() -> None:
    for name, v in _tails().items():
        x = np.sort(v)
        ex = Exceedances.from_values(x, float(x[-4501]))
        b = BinnedProfile(ex)
        assert b.count.size < ex.k / 10, name
        ref = profile_neg(ex, profile._S_GRID)[0]
        assert np.all(np.abs(b.neg(profile._S_GRID) - ref) <= 1e-13 * np.abs(ref)), name
        ref = profile_pos(ex, profile._LOG_THETA_GRID)[0]
        assert np.all(np.abs(b.pos(profile._LOG_THETA_GRID) - ref) <= 1e-13 * np.abs(ref)), name
        for s in (-6.0, -1.0, 0.5, 4.0):  # the slope the Newton steps use
            h = 1e-6
            numeric = (float(b.neg(s + h)) - float(b.neg(s - h))) / (2.0 * h)
            assert b.neg_slope(s)[1] == pytest.approx(numeric, rel=1e-5, abs=1e-6 * abs(float(b.neg(s))))


def test_binned_estimate_agrees_with_the_estimate_over_every_exceedance(monkeypatch) -> None:
    def rel(a, b):
        if a is None or b is None or not np.isfinite(a) or not np.isfinite(b):
            return 0.0 if a == b else np.inf
        return abs(a - b) / abs(a)

    for name, v in _tails().items():
        fast = estimate(v, cross_checks=False)
        monkeypatch.setattr(profile, "K_BINNED", 10 ** 9)
        slow = estimate(v, cross_checks=False)
        monkeypatch.undo()
        assert (fast.status, fast.threshold, fast.exceedances) == (slow.status, slow.threshold, slow.exceedances)
        # the maximum's place: the profile is flat to within floating point over ~1e-8 of s (old: a grid
        # refined on the profile's values; new: the zero of its slope), over more where the shape is near 0
        # and UPB = u - sigma/xi moves far with it (an exponential tail); both are maxima to 1e-13
        assert rel(fast.fit.loglik, slow.fit.loglik) < 1e-13, name
        assert rel(fast.upb, slow.upb) < (1e-8 if fast.status == "ok" else 1e-5), name
        assert rel(fast.upb_ci_low, slow.upb_ci_low) < 1e-10, name
        assert rel(fast.upb_ci_high, slow.upb_ci_high) < 1e-10, name
        assert abs(fast.xi - slow.xi) < 1e-6, name
        assert rel(fast.sigma, slow.sigma) < 1e-6, name
        for c, d in zip(fast.diagnostics["candidates"], slow.diagnostics["candidates"]):
            assert rel(c["upb"], d["upb"]) < (1e-8 if fast.status == "ok" else 1e-5), name
            assert rel(c["upb_ci_high"], d["upb_ci_high"]) < 1e-10, name
            assert c["ad_p"] == pytest.approx(d["ad_p"], abs=1e-6), name
