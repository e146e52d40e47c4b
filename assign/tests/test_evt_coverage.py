"""The estimator on samples with a known end point (the issue's correctness
criterion): over 200 replications per distribution and n the interval holds
the true end point in at least 90% of them, and the median relative error of
UPB shrinks as n grows. The table is printed (it is also in assign/EVT.md;
reproduce with `python -m assign.evt.coverage`)."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from assign.evt.coverage import Coverage, header, measure

REPS = 200
SIZES = (1000, 2000, 5000)
DISTS = ("uniform(0,1)", "beta(2,3)", "rev-weibull(c=2)")


@pytest.fixture(scope="module")
def table(pytestconfig) -> dict[tuple[str, int], Coverage]:
    # nine independent seeded tables, one per process a core (the same numbers as one after the other)
    cases = [(d, n) for d in DISTS for n in SIZES]
    with ProcessPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as ex:
        out = dict(zip(cases, ex.map(measure, [d for d, _ in cases], [n for _, n in cases],
                                     [REPS] * len(cases), [1] * len(cases))))
    capman = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        print("\n" + header(0.95))
        for c in out.values():
            print(c.row())
    return out


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("n", SIZES)
def test_interval_covers_true_end_point(table, dist: str, n: int) -> None:
    c = table[(dist, n)]
    assert c.reps >= 200
    assert c.coverage >= 0.90, c.row()


@pytest.mark.parametrize("dist", DISTS)
def test_error_shrinks_with_n(table, dist: str) -> None:
    errs = [table[(dist, n)].median_rel_error for n in SIZES]
    assert errs[0] > errs[1] > errs[2], errs
