"""`assign sample --cluster`: one sample on dask.distributed workers, the same
store and guarantees as a local run (issue 14)."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from importlib import resources
from pathlib import Path

import psutil
import pytest

from assign.cluster import WORKER_MODEL_PARAMS_ENV
from assign.machine_check import REFERENCES_AT_START
from assign.store import Store
from cli_helpers import ASSIGN, run_assign
from kill_soak import count, rows

T2 = ["sample", "--workload", "ipfwd-mem", "--machine", "ultrasparc-t2", "--backend", "model", "--quiet"]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("cluster") / "local.db"
    r = run_assign(*T2, "--n", "60000", "--seed", "4", "--db", str(db))
    assert r.returncode == 0, r.stderr
    return db


def test_two_workers_store_exactly_what_one_process_does(local_run: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    r = run_assign(*T2, "--n", "60000", "--seed", "4", "--db", str(db), "--cluster", "local:2", timeout=300)
    assert r.returncode == 0, r.stderr
    assert rows(db) == rows(local_run)
    with Store(str(db), readonly=True) as st:  # identical workers: checked, none flagged
        workers, refs = st.workers(1), st.references(1)
        assert len(workers) == 2 and not any(w[3] for w in workers) and st.excluded_count(1) == 0
        assert all(len(refs[w[0]]) >= REFERENCES_AT_START for w in workers)
    assert "FLAGGED" not in r.stdout and "Anderson-Darling" in r.stdout and "modelled values of 2 workers" in r.stdout


def test_a_worker_on_a_different_machine_is_stopped_named_and_its_values_flagged(local_run: Path,
                                                                                 tmp_path: Path,
                                                                                 monkeypatch) -> None:
    """Worker "1" of local:3 models a machine 10% slower (its base costs), through the
    real path: its references and its values come from that model."""
    params = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    for role in params["workloads"]["ipfwd-mem"]["roles"].values():
        role["base_ns"] *= 1.1
    (tmp_path / "slower.json").write_text(json.dumps(params))
    monkeypatch.setenv(WORKER_MODEL_PARAMS_ENV, f"1={tmp_path / 'slower.json'}")
    db = tmp_path / "odd.db"
    r = run_assign(*T2, "--n", "20000", "--seed", "4", "--db", str(db), "--cluster", "local:3", timeout=300)
    assert r.returncode == 0, r.stderr
    with Store(str(db), readonly=True) as st:
        workers = st.workers(1)
        flagged = [w for w in workers if w[3]]
        assert [w[1] for w in flagged] == ["1"], workers  # that one, named
        odd = flagged[0][0]
        by_worker = st.values_by_worker(1)
        excluded = st.excluded_count(1)
        assert excluded == len(by_worker[odd]) > 0  # its values kept, left out
        assert len(st.values(1)) == 20000  # --n values of the unflagged workers
    assert f"worker 1 ({odd}) differs from the others, stopped" in r.stderr
    assert f"{excluded} values of flagged workers" in r.stdout and "FLAGGED" in r.stdout
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    kept = con.execute("SELECT idx, assignment, value, status, reason, extra FROM measurements WHERE worker != ? "
                       "ORDER BY idx", (odd,)).fetchall()
    slower = con.execute("SELECT idx, value FROM measurements WHERE worker = ?", (odd,)).fetchall()
    con.close()
    local = {row[0]: row for row in rows(local_run)}
    assert all(local[row[0]] == row for row in kept if row[0] in local)  # the others measured as one process
    assert all(v < local[i][2] for i, v in slower if i in local)  # the slower machine's values are lower
    est = run_assign("estimate", "--db", str(db))
    assert est.returncode == 0 and f"{excluded} values of cluster workers flagged" in est.stdout


def test_reference_every_goes_with_cluster(tmp_path: Path) -> None:
    r = run_assign(*T2, "--n", "10", "--db", str(tmp_path / "x.db"), "--reference-every", "20")
    assert r.returncode == 2 and "--reference-every 20" in r.stderr and "--cluster" in r.stderr, r.stderr
    r = run_assign(*T2, "--n", "10", "--db", str(tmp_path / "x.db"), "--cluster", "local:1", "--reference-every", "-1")
    assert r.returncode == 2 and "'-1'" in r.stderr, r.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(local_run: Path, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    proc = subprocess.Popen([str(ASSIGN), *T2, "--n", "60000", "--seed", "4", "--db", str(db), "--cluster",
                             "local:2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 120
    while proc.poll() is None and count(db) == 0 and time.monotonic() < end:
        time.sleep(0.01)
    workers = [p for p in psutil.Process(proc.pid).children(recursive=True)
               if "spawn_main" in " ".join(p.cmdline())]
    assert workers and proc.poll() is None, "the run ended before a worker could be killed"
    os.kill(workers[0].pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert rows(db) == rows(local_run)  # every draw once, the same values


def test_a_bad_cluster_address_is_refused_before_the_database(tmp_path: Path) -> None:
    for address in ("local:0", "local:x", "http://host:8786"):
        r = run_assign(*T2, "--n", "10", "--db", str(tmp_path / "x.db"), "--cluster", address)
        assert r.returncode == 2 and address in r.stderr, r.stderr
    assert not (tmp_path / "x.db").exists()


def test_dpdk_backend_through_one_worker(build_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PIPEPLACE_BUILD", str(build_dir))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = tmp_path / "d.db"
    r = run_assign("sample", "--n", "3", "--workload", "ipfwd-l1", "--instances", "1", "--allow-colocate",
                   "--duration", "0.2", "--warmup", "0.05", "--backend", "dpdk", "--quiet", "--db", str(db),
                   "--cluster", "local:1", timeout=300)
    assert r.returncode == 0, r.stderr
    got = rows(db)
    assert [g[0] for g in got if g[3] == "ok"] and len([g for g in got if g[3] == "ok"]) == 3
    assert all(g[2] > 0 for g in got if g[3] == "ok") and "measured" in r.stdout
