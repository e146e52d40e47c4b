"""The searchers (assign/src/assign/search/) and the certificate that holds the
optimum of means against every placement measured (evt/certificate.py)."""
from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import ASSIGN, run_assign

from assign.backends.model import ModelBackend, load_params
from assign.evt.certificate import Found, certify
from assign.evt.noise import Noise
from assign.evt.optimum import OptimumMean
from assign.search import Ledger, Space, make, run as run_search
from assign.search import lehmer
from assign.topology import get_machine
from assign.workloads import Workload

T2 = ["--machine", "ultrasparc-t2", "--workload", "ipfwd-mem", "--backend", "model"]


def local_optimum(be: ModelBackend, space: Space, seed: int) -> float:
    """A noise-free best-improvement local search from a random placement: on the T2's model every
    start ends on the same value (the optimum the tests hold answers against)."""
    x = space.random(seed, 0, 1)[0]
    fx = float(be.predict(x[None, :])[0][0])
    while True:
        m = space.moves(x)
        p = be.predict(m)[0]
        j = int(np.argmax(p))
        if p[j] <= fx * (1 + 1e-12):
            return fx
        x, fx = m[j], float(p[j])


@pytest.fixture(scope="module")
def t2_stateful():
    topo = get_machine("ultrasparc-t2")
    be = ModelBackend(topo, Workload("stateful", 8), load_params("stateful"), noise_rel_sd=0.0)
    space = Space.of_pipelines(topo, 8)
    return be, space, max(local_optimum(be, space, s) for s in range(3))


def test_the_neighbourhood_holds_every_move_and_swap_once_and_never_the_placement_itself() -> None:
    topo = get_machine(None, "pack:1 core:2 pu:2")
    space = Space(topo, 3)
    x = np.array([0, 1, 2])
    moves = space.moves(x)
    # 3 tasks to the one free context, 3 swaps
    assert len(moves) == 6 and all(len(set(r)) == 3 for r in moves.tolist())
    nb, keys = space.neighbours(x)
    own = space.keys(x[None, :])[0]
    assert own not in keys and len(set(keys)) == len(keys) == len(nb)
    # every move's placement is one of the neighbours (under the machine's symmetry)
    assert set(space.keys(moves)) - {own} == set(keys)


def test_a_lehmer_code_is_a_placement_and_back() -> None:
    rng = np.random.default_rng(1)
    for colocate in (False, True):
        for _ in range(50):
            ctx = rng.choice(12, 5, replace=colocate)
            code = lehmer.encode(ctx, 12, colocate)
            hi = lehmer.bounds(5, 12, colocate)
            assert all(0 <= c <= h for c, h in zip(code, hi))
            assert lehmer.decode(code, 12, colocate).tolist() == ctx.tolist()


def test_the_ledger_refuses_what_the_budget_cannot_pay_and_counts_failures() -> None:
    topo = get_machine(None, "pack:1 core:2 pu:2")
    space = Space(topo, 2)
    ledger = Ledger(space, lambda ctx: [None if c[0] == 0 else 1.0 for c in ctx], budget=3)
    rows = np.array([[0, 1], [1, 2], [2, 3]])
    keys = space.keys(rows)
    assert ledger.measure(keys[:2], rows[:2]) == [None, 1.0]
    e = ledger.entries[keys[0]]
    assert e.n == 0 and e.failures == 1 and e.spent == 1 and ledger.remaining == 1
    from assign.search import Spent

    with pytest.raises(Spent):
        ledger.measure(keys, rows)
    assert ledger.spent == 2  # nothing measured of a request it cannot pay for


@pytest.mark.parametrize("noise", [0.0, 0.02])
def test_the_surrogate_search_reaches_the_top_of_the_t2_where_random_draws_do_not(t2_stateful, noise) -> None:
    """The issue's case: on the T2's model the best of thousands of random draws lies 10% below the
    optimum; the default searcher, started from them, ends within 1% of it and says it converged."""
    be, space, opt = t2_stateful
    rng = np.random.default_rng(7)

    def measure(ctx):
        mu = be.predict(ctx)[0]
        return (mu * (1 + noise * np.clip(rng.standard_normal(len(mu)), -3, 3))).tolist()

    draws = space.random(7, 0, 2000)
    values = np.array(measure(draws))
    ledger = Ledger(space, measure, budget=3000, cv_hint=noise)
    ledger.prior_ctx, ledger.prior_values = draws, values
    lead = np.argsort(-values)[:10]
    for k, i in zip(space.keys(draws[lead]), lead):
        ledger.know(k, draws[i], [values[i]])
    assert float(be.predict(draws)[0].max()) < 0.97 * opt
    report = run_search(make("surrogate"), ledger, rng, [draws[i] for i in lead])
    final = ledger.entries[report.final]
    assert float(be.predict(final.ctx[None, :])[0][0]) >= 0.99 * opt
    assert report.converged and report.resolution is not None and ledger.spent <= 3000
    if noise == 0:
        assert report.resolution == 0.0


def _iid(ci_low, ci_high, estimate=None, status="ok", method="deconvolution-pot") -> OptimumMean:
    return OptimumMean(estimate if estimate is not None else ci_low, ci_low, ci_high, Noise(0.02, 200, 40, 400),
                       method, status, 0.95, 5000, 400)


def test_a_placement_above_the_interval_refutes_it_and_the_gap_becomes_a_measured_lower_bound() -> None:
    """The sample says [90, 100]; a placement measured 50 times at 110 (se 0.3) lies above beyond its
    noise: with no converged search the status is refuted, the estimate the measured lower bound, and
    no upper end is stated."""
    found = [Found((1, 2), [110.0] * 50, "search"), Found((3, 4), [95.0, 96.0], "draw")]
    out = certify(_iid(90.0, 100.0, 95.0), found, [], 0.95)
    assert out.status == "refuted" and math.isinf(out.ci_high) and out.to_dict()["ci_high"] is None
    assert 100.0 < out.ci_low < 110.0 and out.estimate == pytest.approx(110.0)
    assert any("refuted" in m for m in out.messages)


def test_a_placement_within_its_noise_of_the_upper_end_does_not_refute() -> None:
    found = [Found((1, 2), [101.0, 100.5, 101.5], "search")]
    out = certify(_iid(90.0, 100.0, 95.0), found, [], 0.95)
    assert out.status == "ok" and out.ci_high >= 100.0


def test_a_converged_search_certifies_the_top_from_the_measured_lower_bound() -> None:
    """The interval runs from the best placement's simultaneous lower bound to its final placement's
    upper bound times 1 + its resolution; the refuted sample interval is said and left."""
    final = Found((1, 2), [110.0 + d for d in (-1.0, 0.0, 1.0)] * 20, "search")
    found = [final, Found((3, 4), [100.0, 101.0], "draw")]
    search = {"sampler": "surrogate", "converged": True, "resolution": 0.01, "final": {"contexts": [1, 2]}}
    out = certify(_iid(90.0, 100.0, 95.0), found, [search], 0.95)
    assert out.status == "ok" and out.method == "search"
    assert out.ci_low < 110.0 < out.ci_high
    assert out.ci_high == pytest.approx(110.0 * (1 + out.diagnostics["z_simultaneous_found"] * 0.02 / math.sqrt(60))
                                        * 1.01)
    assert any("sample's interval" in m and "refuted" in m for m in out.messages)


def test_a_search_that_did_not_converge_certifies_nothing() -> None:
    found = [Found((1, 2), [99.0] * 30, "search")]
    search = {"sampler": "surrogate", "converged": False, "resolution": None, "final": {"contexts": [1, 2]}}
    out = certify(_iid(90.0, 100.0, 95.0), found, [search], 0.95)
    assert out.method == "deconvolution-pot" and out.status == "ok"
    # a plain local search's convergence is local: it certifies nothing either
    local = {"sampler": "local", "converged": True, "resolution": 0.01, "final": {"contexts": [1, 2]}}
    assert certify(_iid(90.0, 100.0, 95.0), found, [local], 0.95).method == "deconvolution-pot"


def test_search_stores_every_measurement_and_a_second_call_finds_it(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    out = tmp_path / "s.json"
    r = run_assign("sample", "--n", "500", *T2, "--noise", "0.02", "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    r = run_assign("search", "--sampler", "local", "--budget", "300", *T2, "--noise", "0.02", "--db", str(db),
                   "--quiet", "--json", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT COUNT(*) FROM search_values WHERE selection IS NULL").fetchone()[0]
        lead = [json.loads(a) for (a,) in c.execute("SELECT assignment FROM measurements ORDER BY value DESC LIMIT 20")]
        first = json.loads(c.execute("SELECT assignment FROM search_values ORDER BY seq LIMIT 1").fetchone()[0])
    assert rows == res["spent"] <= 300 and res["cost"]["search_measurements"] == rows
    assert first in lead  # it started from the run's leading draws
    r = run_assign("search", "--sampler", "local", "--budget", "300", *T2, "--noise", "0.02", "--db", str(db),
                   "--quiet")
    assert r.returncode == 0 and "stored earlier" in r.stdout, r.stdout
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM search_values").fetchone()[0] == rows


def test_a_search_resumed_after_a_kill_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    """Killed at once and then run again, the search replays what it stored and ends on the same
    placement with the same measurements as a search that was never interrupted."""
    import subprocess
    import sys
    import time

    def command(db: Path) -> list[str]:
        return [str(ASSIGN), "search", "--sampler", "surrogate", "--budget", "600", *T2,
                "--instances", "4", "--noise", "0.02", "--db", str(db), "--quiet", "--json", str(db) + ".json"]

    dbs = []
    for name, kill in (("whole", False), ("killed", True)):
        db = tmp_path / f"{name}.db"
        assert run_assign("sample", "--n", "400", *T2, "--instances", "4", "--noise", "0.02", "--db", str(db),
                          "--quiet").returncode == 0
        if kill:
            p = subprocess.Popen(command(db), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 120
            while time.time() < deadline:  # kill it once it has stored some of its measurements
                try:
                    with sqlite3.connect(db) as c:
                        if c.execute("SELECT COUNT(*) FROM search_values").fetchone()[0] >= 20:
                            break
                except sqlite3.OperationalError:
                    pass
                if p.poll() is not None:
                    break
                time.sleep(0.05)
            p.kill()
            p.wait()
        r = subprocess.run(command(db), capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        dbs.append(db)
    results = [json.loads(Path(str(d) + ".json").read_text()) for d in dbs]
    rows = []
    for d in dbs:
        with sqlite3.connect(d) as c:
            rows.append(c.execute("SELECT seq, assignment, value FROM search_values ORDER BY seq").fetchall())
    assert rows[0] == rows[1]
    assert results[0]["final"] == results[1]["final"] and results[0]["spent"] == results[1]["spent"]


def test_bad_search_options_are_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "b.db")
    r = run_assign("search", "--sampler", "nope", "--budget", "10", *T2, "--db", db)
    assert r.returncode == 2 and "nope" in r.stderr
    r = run_assign("search", "--budget", "0", *T2, "--db", db)
    assert r.returncode == 2 and "--budget" in r.stderr
    try:
        import torch  # noqa: F401
    except ImportError:
        r = run_assign("search", "--sampler", "gp", "--budget", "10", *T2, "--db", db)
        assert r.returncode == 2 and "PyTorch" in r.stderr


def test_iterate_searches_where_random_draws_stop_short_and_stops_certified(tmp_path: Path, t2_stateful) -> None:
    """On the T2's model the sample's extrapolation falls short of the optimum; iterate's rounds search,
    and it stops when the chosen placement is certified within 3% of the optimum of means: by then a
    search converged, its interval holds the optimum, and the placement is within 2% of it."""
    be, space, opt = t2_stateful
    db = tmp_path / "it.db"
    r = run_assign("iterate", "--target-gap", "3", "--n-init", "500", "--workload", "stateful", "--machine",
                   "ultrasparc-t2", "--backend", "model", "--noise", "0.02", "--db", str(db), "--quiet", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    with sqlite3.connect(db) as c:
        om = json.loads(c.execute("SELECT result FROM estimates ORDER BY n DESC").fetchone()[0])["optimum_mean"]
        chosen = json.loads(c.execute("SELECT result FROM selections WHERE result IS NOT NULL ORDER BY id DESC")
                            .fetchone()[0])["chosen"]["contexts"]
    assert om["method"] == "search" and om["status"] == "ok"
    assert om["ci_low"] <= opt <= om["ci_high"]
    assert float(be.predict(np.array([be.contexts_of(chosen)]))[0][0]) >= 0.98 * opt

    def counts() -> tuple:
        with sqlite3.connect(db) as c:
            return tuple(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                         for t in ("measurements", "repeats", "search_values", "searches", "selections"))

    # run again: it finds its finished rounds (the largest search and selection it holds) and measures nothing
    before = counts()
    r = run_assign("iterate", "--target-gap", "3", "--n-init", "500", "--workload", "stateful", "--machine",
                   "ultrasparc-t2", "--backend", "model", "--noise", "0.02", "--db", str(db), "--quiet", timeout=600)
    assert r.returncode == 0 and "continuing run 1" in r.stdout, r.stdout + r.stderr
    assert counts() == before


def test_the_surrogate_features_do_not_change_under_the_machines_symmetry() -> None:
    """Two placements that are one distinct placement (cores or pipelines swapped) have the same
    features, so the surrogate learns from every draw of the sample at once; a placement that differs
    (one task moved to another pipeline) has other features."""
    from assign.search.surrogate import Features

    topo = get_machine("ultrasparc-t2")
    space = Space.of_pipelines(topo, 4)
    f = Features(space)
    x = space.random(3, 0, 1)[0]
    # contexts 0-7 are core 0 (pipelines 0-3, 4-7), 8-15 core 1: swap the two cores, then the two
    # pipelines of core 2, and permute the strands inside one pipeline
    perm = np.arange(64)
    perm[0:8], perm[8:16] = np.arange(8, 16), np.arange(0, 8)
    perm[16:20], perm[20:24] = np.arange(20, 24), np.arange(16, 20)
    perm[24:28] = [27, 25, 24, 26]
    y = perm[x]
    assert space.keys(x[None, :]) == space.keys(y[None, :])
    assert (f(x[None, :]) == f(y[None, :])).all()
    z = x.copy()
    free = [c for c in range(64) if c not in x and c // 4 != x[0] // 4]
    z[0] = free[0]
    assert space.keys(z[None, :]) != space.keys(x[None, :])
    assert not (f(z[None, :]) == f(x[None, :])).all()
    # the surrogate's prediction is the features times its coefficients, without the matrix
    from assign.search.surrogate import Surrogate

    rows = space.random(4, 0, 200)
    vals = np.exp(np.random.default_rng(0).normal(size=200))
    sur = Surrogate.fit(f, rows, vals, np.ones(200))
    assert np.allclose(sur.predict(rows), f(rows) @ sur.coef + sur.offset)
