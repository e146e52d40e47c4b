"""The results database: failures kept with their reason and never counted,
stored measurements never changed."""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import pytest

from assign.backends.base import MeasureRequest, Result
from assign.session import SampleError, Session
from assign.store import Store
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
