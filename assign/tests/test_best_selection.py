"""Planned repetitions, the KN selection of `assign best`, and `assign enumerate
--reps`, on models whose answer is known."""
from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest
from cli_helpers import run_assign

from assign.repeats import Plan, due
from assign.selection import KN, kn_h2, run as run_kn
from assign.store import Store

SMALL = ("--topology", "pack:1 core:4 pu:2", "--workload", "stateful", "--instances", "2", "--backend", "model")


def test_plan_remeasures_the_leading_draws_in_pairs_fewest_first():
    p = Plan(range(100), np.arange(100, dtype=float))  # draw i has value i
    first = p.next(54)
    assert set(first) <= set(range(75, 100))             # the top 25
    assert first[:6] == [99, 99, 98, 98, 97, 97]         # in pairs, the highest means first
    assert sorted(first[:50]) == sorted(2 * list(range(75, 100)))  # each a pair before any a third
    assert first[50:] == [99, 99, 98, 98]
    q = Plan(range(100), np.arange(100, dtype=float))
    q.add_repeat(90, 80.0)                               # still among the leaders: its pair first
    assert q.next(1) == [90]
    q.add_repeat(99, 0.0)                                # a repetition that finds 99 much lower
    assert 99 not in q.next(25)[:24]
    assert due(100, 20, 3) == 2 and due(100, 0, 0) == 0


def test_a_run_of_400_draws_measures_its_noise(tmp_path):
    """The 20 repetitions of 400 draws hold pairs: the noise is measured (it was
    not, with one repetition each for the 25 leading draws)."""
    db = tmp_path / "r.sqlite"
    r = run_assign("sample", "--n", "400", "--noise", "0.02", *SMALL, "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    with Store(db) as st:
        reps = st.repeats(st.runs()[0].id, "noise")
    per: dict[int, int] = {}
    for x in reps:
        per[x.idx] = per.get(x.idx, 0) + 1
    assert len(reps) == 20 and sorted(per.values()) == [2] * 10
    r = run_assign("estimate", "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    om = json.loads(r.stdout)["optimum_mean"]
    assert om["noise_sd"] is not None and om["estimate"] is not None


def test_kn_constant_matches_kim_and_nelson():
    # h^2 = (n0-1) ((2a/(k-1))^(-2/(n0-1)) - 1), e.g. k=10, n0=10, a=0.05: 15.47
    assert kn_h2(10, 10, 0.05) == pytest.approx(9 * ((0.1 / 9) ** (-2 / 9) - 1), rel=1e-12)
    assert kn_h2(10, 10, 0.05) == pytest.approx(15.47, abs=0.01)
    assert kn_h2(2, 10, 0.05) < kn_h2(10, 10, 0.05)


def test_kn_picks_the_best_when_it_leads_by_the_indifference_zone():
    """Means 1.00, 0.98, 0.97, ...; noise sd 0.02 plus a drift common to a round (cancelled
    by the paired differences); zone 0.02: the best is chosen in at least 95% of seeded runs."""
    means = np.array([1.0, 0.98, 0.975, 0.97, 0.96, 0.95])
    wins, rounds = 0, []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        drift = {}

        def measure(i: int, r: int) -> float:
            if r not in drift:
                drift[r] = 0.1 * rng.standard_normal()  # the machine moves between rounds
            return means[i] + drift[r] + 0.02 * rng.standard_normal()

        out = run_kn(KN(len(means), 10, 0.02, 0.05), measure, 500, lambda r: list(range(len(means))))
        wins += out.chosen == 0 and out.certified
        rounds.append(out.rounds)
    assert wins >= 57, wins
    assert max(rounds) < 500


def test_kn_within_the_zone_when_candidates_tie():
    means = np.array([1.0, 1.0, 0.999, 0.9])
    for seed in range(10):
        rng = np.random.default_rng(seed)
        out = run_kn(KN(4, 10, 0.02, 0.05), lambda i, r: means[i] + 0.02 * rng.standard_normal(), 400,
                     lambda r: [0, 1, 2, 3])
        assert out.certified and means[out.chosen] >= 1.0 - 0.02


@pytest.fixture(scope="module")
def noisy_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("best") / "n.db"
    r = run_assign("sample", "--n", "3000", *SMALL, "--noise", "0.02", "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    return db


def test_best_chooses_a_placement_whose_true_mean_is_within_the_zone(noisy_run, tmp_path):
    from assign.backends.model import ModelBackend
    from assign.evt.coverage_noise import exact_optimum
    from assign.topology import get_machine
    from assign.workloads import Workload

    out = tmp_path / "best.json"
    r = run_assign("best", "--db", str(noisy_run), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["certified"] and res["probability_correct_selection"] == 0.95
    assert res["indifference_source"].startswith("one noise sd")
    topo = get_machine(None, "pack:1 core:4 pu:2")
    clean = ModelBackend(topo, Workload("stateful", 2), noise_rel_sd=0.0)
    true = {c["draw"]: clean.predict(np.array([clean.contexts_of(c["contexts"])]))[0][0] for c in res["candidates"]}
    chosen = res["chosen"]
    assert true[chosen["draw"]] >= max(true.values()) - res["indifference_zone"]
    # the chosen placement is an optimal one of the space, within the zone
    assert true[chosen["draw"]] >= exact_optimum("pack:1 core:4 pu:2", "stateful", 2) - res["indifference_zone"]
    assert chosen["ci_low"] <= chosen["mean"] <= chosen["ci_high"]
    assert res["optimum_mean"]["method"] == "every-placement" and res["gap_pct"] is not None
    assert res["cost"]["share_pct"] <= 20.0
    doc = json.loads(out.read_text())
    flat = [doc["instances"][i]["tasks"][role] for i in range(2) for role in "RPT"]
    assert flat == chosen["contexts"]
    with sqlite3.connect(noisy_run) as c:
        n_sel = c.execute("SELECT COUNT(*) FROM repeats WHERE purpose='select'").fetchone()[0]
    assert n_sel == res["measurements"]
    # the same command again: the finished selection is reused, nothing measured
    r = run_assign("best", "--db", str(noisy_run), "--out", str(out))
    assert r.returncode == 0 and "stored earlier" in r.stdout
    with sqlite3.connect(noisy_run) as c:
        assert c.execute("SELECT COUNT(*) FROM repeats WHERE purpose='select'").fetchone()[0] == n_sel
    # and estimate now reports the chosen placement and its gap
    d = json.loads(run_assign("estimate", "--db", str(noisy_run), "--json").stdout)
    assert d["chosen"]["draw"] == chosen["draw"] and d["gap_pct"] is not None
    text = run_assign("estimate", "--db", str(noisy_run)).stdout
    assert "chosen placement (`assign best`" in text and "gap of the chosen placement" in text


def test_an_interrupted_selection_resumes_with_what_it_measured(tmp_path):
    from assign.choice import Settings, choose
    from assign.run_backend import backend_for_run

    db, copy = tmp_path / "r.db", tmp_path / "copy.db"
    assert run_assign("sample", "--n", "1000", *SMALL, "--noise", "0.02", "--db", str(db), "--quiet").returncode == 0
    with sqlite3.connect(db) as a, sqlite3.connect(copy) as b:
        a.backup(b)
    with Store(str(copy)) as st:
        run = st.run(None)
        whole = choose(st, run, lambda: backend_for_run(run), Settings(), quiet=True)

    class Stop(Exception):
        pass

    class Dying:
        """The run's backend, killed at its 26th measurement."""

        def __init__(self, be):
            self.be, self.calls = be, 0
            self.measure_array = be.measure_array

        def measure(self, reqs):
            self.calls += 1
            if self.calls > 25:
                raise Stop()
            return self.be.measure(reqs)

    with Store(str(db)) as st:
        run = st.run(None)
        with pytest.raises(Stop):
            choose(st, run, lambda: Dying(backend_for_run(run)), Settings(), quiet=True)
        assert st.selections(run.id)[0][2] is None and len(st.repeats(run.id, "select")) == 25
        again = choose(st, run, lambda: backend_for_run(run), Settings(), quiet=True)
    assert again["selection"] == 1 and again["chosen"]["draw"] == whole["chosen"]["draw"]
    assert (again["rounds"], again["measurements"]) == (whole["rounds"], whole["measurements"])
    assert again["chosen"]["mean"] == pytest.approx(whole["chosen"]["mean"], rel=1e-12)


def test_iterate_stops_on_the_chosen_placement_and_its_gap(tmp_path):
    db = tmp_path / "it.db"
    r = run_assign("iterate", "--target-gap", "10", "--n-init", "1000", "--n-delta", "500", "--max-n", "2000",
                   *SMALL, "--noise", "0.02", "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "optimum of means" in r.stdout and "chosen placement" in r.stdout and "target reached" in r.stdout
    assert "cost: " in r.stdout
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM selections WHERE result IS NOT NULL").fetchone()[0] >= 1
        stored = json.loads(c.execute("SELECT result FROM estimates ORDER BY n DESC").fetchone()[0])
    assert stored["optimum_mean"]["method"] == "every-placement"


def test_enumerate_reps_measures_every_placement_in_rounds_and_resumes(tmp_path):
    from assign.evt.coverage_noise import exact_optimum

    db = tmp_path / "e.db"
    args = ("enumerate", *SMALL, "--noise", "0.02", "--reps", "4", "--db", str(db), "--json")
    r = run_assign(*args)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    truth = exact_optimum("pack:1 core:4 pu:2", "stateful", 2)
    om = d["optimum_mean"]
    assert d["placements"] == 60 and d["reps"] == 4
    assert om["ci_low"] <= truth <= om["ci_high"] and abs(om["estimate"] - truth) < 0.02 * truth
    assert 0.015 < d["noise"]["cv"] < 0.025
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM truth_values").fetchone()[0] == 240
    r = run_assign("enumerate", *SMALL, "--noise", "0.02", "--reps", "5", "--db", str(db), "--json")
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM truth_values").fetchone()[0] == 300  # one round added
    assert json.loads(r.stdout)["optimum_mean"]["estimate"] != om["estimate"]


def test_enumerate_with_colocation_counts_every_distinct_map():
    r = run_assign("enumerate", "--topology", "pack:1 core:2 pu:1", "--workload", "ipfwd-l1", "--instances", "2",
                   "--backend", "model", "--allow-colocate", "--top", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("32 distinct assignments of 6 tasks") and "with co-location" in r.stdout
    assert "add up to 64 raw placements (expected 64; count 32)" in r.stdout


def test_a_certificate_within_a_wide_zone_is_said_to_say_little():
    from assign.commands.best import describe

    def res(pct: float) -> dict:
        return {"candidates": [{"draw": 1}, {"draw": 2}], "indifference_zone": pct * 1e4, "selection": 1,
                "procedure": "KN", "rounds": 10, "measurements": 20, "certified": True,
                "probability_correct_selection": 0.95, "indifference_zone_pct": pct,
                "indifference_source": "one noise sd of a measurement (measured)",
                "chosen": {"draw": 1, "mean": 1e6, "kind": "measured", "rounds": 10, "ci_low": 9e5, "ci_high": 1.1e6}}

    wide = "\n".join(describe(res(40.0), "measured"))
    assert "certified" in wide and "says little" in wide and "--indifference" in wide
    assert "says little" not in "\n".join(describe(res(2.0), "measured"))
