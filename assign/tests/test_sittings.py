"""Sittings: what each `assign sample` of a measured run measured on, and
`assign estimate`'s test of whether the sittings' values come from one
distribution (a run resumed on another machine of the same topology measured
values whose median was a third higher: 3,341 then 1,659 ipfwd-l1 draws)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from assign.session import Session
from assign.sittings import split
from assign.store import SCHEMA_VERSION, Store
from assign.topology import get_machine
from cli_helpers import run_assign


def measured_run(db: Path, parts: list[tuple[dict | None, np.ndarray]]) -> None:
    """A measured run whose values come in parts, each part a sitting with that ground (None: values
    from before sittings were recorded, which must come first)."""
    with Store(str(db)) as store:
        run, _ = store.find_or_create_run(workload="ipfwd-l1", instances=1, machine="local",
                                          topology={"name": "t"}, backend="dpdk", kind="measured", seed=1,
                                          allow_colocate=True, params={})
        idx = 0
        for ground, values in parts:
            if ground is not None:
                store.add_sitting(run.id, idx, ground)
            store.add_many(run.id, [(idx + k, [0, 0, 0], float(v), "ok", None, {}) for k, v in enumerate(values)])
            idx += len(values) + 3  # a gap: draws that failed leave none


def test_sittings_that_differ_are_told_apart_and_one_can_be_estimated(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    db = tmp_path / "r.db"
    a, b = 31e6 + 3e6 * rng.weibull(3, 600), 41e6 + 6e6 * rng.weibull(3, 400)
    measured_run(db, [(None, a), ({"host": "vm1", "app_sha256": "a" * 64}, b)])
    r = run_assign("estimate", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "sitting 0 (before sittings were recorded): n 600" in r.stdout
    assert "sitting 1 (from " in r.stdout and " on vm1): n 400" in r.stdout
    assert "warning: the sittings' values differ" in r.stdout and "p <= 0.001" in r.stdout
    j = json.loads(run_assign("estimate", "--db", str(db), "--json").stdout)
    assert [s["n"] for s in j["sittings"]] == [600, 400] and j["sittings_test"]["one_distribution"] is False
    assert j["sittings"][1]["app_sha256"] == "a" * 64
    # the whole run's estimate holds exactly the sittings' values
    assert j["n"] == 1000 and j["best"] == max(max(a), max(b))
    one = json.loads(run_assign("estimate", "--db", str(db), "--json", "--sitting", "1").stdout)
    assert one["n"] == 400 and one["source"].endswith("sitting 1")
    assert one["best"] == max(b)
    bad = run_assign("estimate", "--db", str(db), "--sitting", "2")
    assert bad.returncode != 0 and "--sitting 2" in bad.stderr and "sittings 0, 1" in bad.stderr


def test_sittings_of_one_distribution_agree(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    db = tmp_path / "r.db"
    g = {"host": "h", "app_sha256": "b" * 64}
    measured_run(db, [(g, 30e6 + 4e6 * rng.weibull(3, 500)), (dict(g, boot_id="x"), 30e6 + 4e6 * rng.weibull(3, 500))])
    r = run_assign("estimate", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "the sittings' values agree" in r.stdout and "warning" not in r.stdout


def test_a_store_of_schema_2_gets_sittings_and_keeps_its_values(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    measured_run(db, [(None, np.linspace(1e6, 2e6, 60))])
    with sqlite3.connect(db) as c:  # as schema 2 wrote it: no sittings table
        c.execute("DROP TABLE sittings")
        c.execute("PRAGMA user_version = 2")
    with Store(str(db), readonly=True) as s:  # read as it is
        assert s.sittings(1) == [] and len(s.values(1)) == 60
    with Store(str(db)) as s:  # opened for writing: migrated
        assert s.add_sitting(1, 63, {"host": "h"}) == 0 and s.sittings(1)[0][:2] == (0, 63)
        assert len(s.values(1)) == 60


def test_sample_records_each_sitting_and_says_when_the_ground_changed(tmp_path: Path, capsys) -> None:
    # a measured backend stand-in: the ground comes from the host and the backend's provenance
    from assign.backends.base import Result
    from assign.workloads import Workload

    class Measured:
        name, kind, batch_size = "dpdk", "measured", 4
        sha = "c" * 64

        def describe(self) -> dict:
            return {}

        def provenance(self) -> dict:
            return {"app_sha256": self.sha}

        def measure(self, requests):
            return [Result(1e6 + r.idx) for r in requests]

    topo = get_machine()
    be = Measured()
    with Store(str(tmp_path / "s.db")) as store:
        s, _ = Session.open(store, topo, Workload("ipfwd-l1", 1), be, 1, True)
        s.sample_until(8, show_progress=False)
        assert "note:" not in capsys.readouterr().err
        s.sample_until(12, show_progress=False)  # same ground: recorded, nothing to say
        assert "note:" not in capsys.readouterr().err
        be.sha = "d" * 64  # the app rebuilt
        s.sample_until(16, show_progress=False)
        err = capsys.readouterr().err
        assert "continues on other ground than its last sitting (app_sha256: cccccccccccc -> dddddddddddd)" in err
        sits = store.sittings(s.run.id)
    assert [(q, first) for q, first, _, _ in sits] == [(0, 0), (1, 8), (2, 12)]
    assert all(g["host"] and g["kernel"] for *_, g in sits) and sits[2][3]["app_sha256"] == "d" * 64


def test_a_cluster_sitting_lists_the_grounds_its_workers_measured_on(tmp_path: Path) -> None:
    # a sitting on a cluster records the coordinator's ground; its values were measured on the workers,
    # each with its own ground (here one worker rebuilt with another app), listed with the sitting
    rng = np.random.default_rng(7)
    db = tmp_path / "c.db"
    coord = {"host": "coord", "kernel": "6.1", "app_sha256": "a" * 64}
    w1 = {"host": "w1", "boot_id": "1", "cpu": "c", "kernel": "6.1", "app": "/w1/ipfwd", "app_sha256": "a" * 64}
    w2 = dict(w1, host="w2", boot_id="2", app_sha256="b" * 64)
    with Store(str(db)) as store:
        run, _ = store.find_or_create_run(workload="ipfwd-l1", instances=1, machine="local", topology={"name": "t"},
                                          backend="dpdk", kind="measured", seed=1, allow_colocate=True, params={})
        store.add_sitting(run.id, 0, coord)
        store.add_many(run.id, [(k, [0, 0, 0], float(v), "ok", None, {})
                                for k, v in enumerate(30e6 + 4e6 * rng.weibull(3, 300))])
        store.add_sitting(run.id, 300, dict(coord, cluster="tcp://s:8786"))
        store.add_worker(run.id, "tcp://w1:1", "0", "w1", w1)
        store.add_worker(run.id, "tcp://w2:1", "1", "w2", w2)
        for k, v in enumerate(30e6 + 4e6 * rng.weibull(3, 300)):
            store.add_rows(run.id, [(300 + k, "[0, 0, 0]", float(v), "ok", None, "{}")],
                           worker=("tcp://w1:1", "tcp://w2:1")[k % 2])
    r = run_assign("estimate", "--db", str(db))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  sitting 2 ("))
    assert "on cluster tcp://s:8786, coordinated from coord): n 300" in lines[at]
    assert lines[at + 1] == ("    measured by cluster workers on: w1 (app aaaaaaaaaaaa, kernel 6.1); "
                             "w2 (app bbbbbbbbbbbb, kernel 6.1)")
    assert sum("measured by cluster workers" in x for x in lines) == 1  # sitting 1 was measured in one process
    j = json.loads(run_assign("estimate", "--db", str(db), "--json").stdout)
    assert [s["worker_grounds"] for s in j["sittings"]] == [[], [w1, w2]]
    assert [s["cluster"] for s in j["sittings"]] == [None, "tcp://s:8786"]


def test_a_worker_rebuilt_between_sittings_is_listed_with_each_sittings_ground(tmp_path: Path) -> None:
    # a tcp:// worker keeps its address when it is rebuilt: the worker row keeps the ground it was
    # first seen with, and each sitting lists what the worker measured on in it
    rng = np.random.default_rng(8)
    db = tmp_path / "r.db"
    coord = {"host": "coord", "kernel": "6.1", "app_sha256": "a" * 64, "cluster": "tcp://s:8786"}
    old = {"host": "w1", "boot_id": "1", "cpu": "c", "kernel": "6.1", "app": "/w1/ipfwd", "app_sha256": "a" * 64}
    new = dict(old, app_sha256="b" * 64)
    with Store(str(db)) as store:
        run, _ = store.find_or_create_run(workload="ipfwd-l1", instances=1, machine="local", topology={"name": "t"},
                                          backend="dpdk", kind="measured", seed=1, allow_colocate=True, params={})
        store.add_worker(run.id, "tcp://w1:1", "0", "w1", old)
        for seq, ground in ((0, old), (1, new)):
            store.add_sitting(run.id, 100 * seq, coord)
            store.add_sitting_worker(run.id, seq, "tcp://w1:1", ground)
            store.add_rows(run.id, [(100 * seq + k, "[0, 0, 0]", float(v), "ok", None, "{}")
                                    for k, v in enumerate(30e6 + 4e6 * rng.weibull(3, 100))], worker="tcp://w1:1")
    with Store(str(db), readonly=True) as store:
        assert store.worker_grounds(run.id) == {"tcp://w1:1": old}
        assert [g.worker_grounds for g in split(store, run.id)] == [[old], [new]]


def test_a_store_of_schema_3_gets_the_workers_ground_and_keeps_its_rows(tmp_path: Path) -> None:
    from cli_helpers import digest

    db = tmp_path / "old3.db"
    measured_run(db, [({"host": "h"}, np.linspace(1e6, 2e6, 60))])
    with sqlite3.connect(db) as c:  # as schema 3 wrote it: workers without ground
        c.executescript("""
            DROP TABLE workers;
            CREATE TABLE workers (run_id INTEGER NOT NULL REFERENCES runs(id), address TEXT NOT NULL,
                name TEXT NOT NULL, host TEXT NOT NULL, first_seen TEXT NOT NULL, flagged TEXT, flagged_at TEXT,
                PRIMARY KEY (run_id, address));
            INSERT INTO workers VALUES (1, 'tcp://h:1', '0', 'h', 'then', NULL, NULL);
            PRAGMA user_version = 3;""")
    before = digest(db)
    with Store(str(db), readonly=True) as s:  # read as it is: the worker's ground not recorded
        assert s.worker_grounds(1) == {"tcp://h:1": None} and s.workers(1) == [("tcp://h:1", "0", "h", None)]
        assert len(s.values(1)) == 60 and len(s.sittings(1)) == 1
    assert digest(db) == before
    with Store(str(db)) as s:  # opened for writing: the column added, the old row kept as it was
        s.add_worker(1, "tcp://h:2", "1", "h", {"host": "h"})
        assert s.worker_grounds(1) == {"tcp://h:1": None, "tcp://h:2": {"host": "h"}}
        assert len(s.values(1)) == 60 and len(s.sittings(1)) == 1
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("SELECT * FROM workers WHERE address='tcp://h:1'").fetchall() == [
        (1, "tcp://h:1", "0", "h", "then", None, None, None)]
    con.close()
