"""The results database: failures kept with their reason and never counted,
stored measurements never changed."""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import pytest

from assign.backends.base import MeasureRequest, Result
from assign.session import SampleError, Session
from assign.store import SCHEMA_VERSION, Store
from assign.topology import get_machine
from assign.workloads import Workload


class FlakyBackend:
    """Fails every draw whose index is divisible by `every`."""

    name = "flaky"
    kind = "measured"
    batch_size = 1

    def __init__(self, every: int):
        self.every = every
        self.calls = 0

    def describe(self) -> dict:
        return {"every": self.every}

    def measure(self, requests: Sequence[MeasureRequest]) -> list[Result]:
        self.calls += len(requests)
        return [Result.failed(f"link down at draw {r.idx}") if r.idx % self.every == 0
                else Result(1000.0 + r.idx, extra={"pps": r.idx}) for r in requests]


@pytest.fixture
def setup(tmp_path):
    topo = get_machine(topology="core:4 pu:2")
    return Store(str(tmp_path / "r.db")), topo, Workload("stateful", 2)


def test_failures_are_stored_with_reason_and_never_counted(setup):
    store, topo, wl = setup
    session, created = Session.open(store, topo, wl, FlakyBackend(3), seed=1, allow_colocate=False)
    assert created
    session.sample_until(10, show_progress=False)
    nxt, ok, failed, best = store.progress(session.run.id)
    assert ok == 10 and failed == 5 and nxt == 15  # draws 0, 3, 6, 9, 12 failed
    assert store.failures(session.run.id)[0] == (0, "link down at draw 0")
    assert len(store.values(session.run.id)) == 10
    assert min(store.values(session.run.id)) == 1001.0


def test_a_backend_that_always_fails_stops_with_its_reason(setup):
    store, topo, wl = setup
    session, _ = Session.open(store, topo, wl, FlakyBackend(1), seed=1, allow_colocate=False)
    with pytest.raises(SampleError, match="link down at draw 19"):
        session.sample_until(5, show_progress=False)
    assert store.progress(session.run.id)[2] == 20  # every failure kept


def test_stored_measurements_cannot_be_changed_or_deleted(setup, tmp_path):
    store, topo, wl = setup
    session, _ = Session.open(store, topo, wl, FlakyBackend(100), seed=1, allow_colocate=False)
    session.sample_until(3, show_progress=False)
    store.close()
    db = sqlite3.connect(tmp_path / "r.db")
    with pytest.raises(sqlite3.DatabaseError, match="never changed"):
        db.execute("UPDATE measurements SET value = 0")
    with pytest.raises(sqlite3.DatabaseError, match="never deleted"):
        db.execute("DELETE FROM measurements")
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO measurements (run_id, idx, assignment, value, status, measured_at) "
                    "VALUES (1, 1, '[]', 5, 'ok', 'now')")


def test_same_options_continue_the_run_other_options_start_another(setup):
    store, topo, wl = setup
    a, created_a = Session.open(store, topo, wl, FlakyBackend(100), seed=1, allow_colocate=False)
    b, created_b = Session.open(store, topo, wl, FlakyBackend(100), seed=1, allow_colocate=False)
    c, created_c = Session.open(store, topo, wl, FlakyBackend(100), seed=2, allow_colocate=False)
    assert created_a and not created_b and created_c
    assert a.run.id == b.run.id != c.run.id
    with pytest.raises(SampleError, match="does not match"):
        Session.open(store, topo, wl, FlakyBackend(100), seed=3, allow_colocate=False, run_id=a.run.id)


# schema 1 (before `sample --cluster`'s machine check), as assign wrote it: what old stores hold
SCHEMA_1 = """
CREATE TABLE runs (id INTEGER PRIMARY KEY, workload TEXT NOT NULL, instances INTEGER NOT NULL,
    machine TEXT NOT NULL, topology TEXT NOT NULL, backend TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('measured', 'modelled')), seed INTEGER NOT NULL,
    allow_colocate INTEGER NOT NULL, params TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE measurements (run_id INTEGER NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL,
    assignment TEXT NOT NULL, value REAL, status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), reason TEXT,
    extra TEXT, measured_at TEXT NOT NULL, PRIMARY KEY (run_id, idx), CHECK ((status = 'ok') = (value IS NOT NULL)));
CREATE TABLE estimates (run_id INTEGER NOT NULL REFERENCES runs(id), n INTEGER NOT NULL, result TEXT NOT NULL,
    created TEXT NOT NULL, PRIMARY KEY (run_id, n));
CREATE TRIGGER measurements_keep_update BEFORE UPDATE ON measurements
BEGIN SELECT RAISE(ABORT, 'stored measurements are never changed'); END;
CREATE TRIGGER measurements_keep_delete BEFORE DELETE ON measurements
BEGIN SELECT RAISE(ABORT, 'stored measurements are never deleted'); END;
PRAGMA user_version = 1;
INSERT INTO runs VALUES (1, 'stateful', 2, 'm', '{}', 'model', 'modelled', 1, 0, '{}', 'then');
INSERT INTO measurements VALUES (1, 0, '[0,1]', 10.0, 'ok', NULL, '{}', 'then'),
    (1, 1, '[1,2]', NULL, 'failed', 'link down', '{}', 'then'), (1, 2, '[2,3]', 30.0, 'ok', NULL, '{}', 'then');
INSERT INTO estimates VALUES (1, 2, '{"upb": 31}', 'then');
"""


def test_a_schema_1_store_is_read_as_it_is_and_migrated_keeping_everything(tmp_path) -> None:
    from cli_helpers import digest

    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA_1)
    con.close()
    before = digest(path)
    with Store(str(path), readonly=True) as st:  # read-only: nothing flagged, nothing changed
        assert st.values(1) == [10.0, 30.0] and st.progress(1) == (3, 2, 1, 30.0)
        assert st.excluded_count(1) == 0 and st.workers(1) == [] and st.references(1) == {}
    assert digest(path) == before
    with Store(str(path)) as st:  # opened to write: migrated
        assert st.values(1) == [10.0, 30.0] and st.estimates(1) == [(2, {"upb": 31})]
        assert st.failures(1) == [(1, "link down")]
        st.add_worker(1, "tcp://h:1", "0", "h")
        st.add_rows(1, [(3, "[3,4]", 99.0, "ok", None, "{}")], worker="tcp://h:1")
        st.add_references(1, "tcp://h:1", [(0, 3, 0, "[0,1]", 11.0, "ok", None)])
        assert st.values(1) == [10.0, 30.0, 99.0] and st.references(1) == {"tcp://h:1": [11.0]}
        st.flag_worker(1, "tcp://h:1", "its reference differs")
        assert st.values(1) == [10.0, 30.0] and st.excluded_count(1) == 1 and st.best(1).value == 30.0
        assert st.progress(1) == (4, 2, 1, 30.0) and st.workers(1)[0][3] == "its reference differs"
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
    assert con.execute("SELECT idx, assignment, value, status, reason, extra, measured_at, worker FROM measurements "
                       "WHERE idx < 3 ORDER BY idx").fetchall() == [
        (0, "[0,1]", 10.0, "ok", None, "{}", "then", None),
        (1, "[1,2]", None, "failed", "link down", "{}", "then", None),
        (2, "[2,3]", 30.0, "ok", None, "{}", "then", None)]
    for sql in ("UPDATE measurements SET value = 0", "DELETE FROM reference_measurements"):
        with pytest.raises(sqlite3.DatabaseError, match="never"):
            con.execute(sql)
    con.close()
