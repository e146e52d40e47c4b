"""`assign sample --cluster`: one sample on dask.distributed workers, the same
store and guarantees as a local run (issue 14)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

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
