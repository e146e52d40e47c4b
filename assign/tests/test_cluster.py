"""`assign sample --cluster`: one sample on dask.distributed workers, the same
store and guarantees as a local run (issue 14)."""
from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
from importlib import resources
from pathlib import Path

import psutil
import pytest

from assign.cluster import WORKER_MODEL_PARAMS_ENV, ChunkResult, _MachineCheck
from assign.ground import ground
from assign.machine_check import REFERENCES_AT_START, ground_lines
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
    cpu = ground(None)["cpu"]
    db = tmp_path / "c.db"
    r = run_assign(*T2, "--n", "60000", "--seed", "4", "--db", str(db), "--cluster", "local:2", timeout=300)
    assert r.returncode == 0, r.stderr
    assert rows(db) == rows(local_run)
    with Store(str(db), readonly=True) as st:  # identical workers: checked, none flagged
        workers, refs = st.workers(1), st.references(1)
        assert len(workers) == 2 and not any(w[3] for w in workers) and st.excluded_count(1) == 0
        assert all(len(refs[w[0]]) >= REFERENCES_AT_START for w in workers)
        # each worker's own ground, computed on the worker and stored with it
        grounds = st.worker_grounds(1)
        assert list(grounds) == [w[0] for w in workers]
        assert all(g["host"] == socket.gethostname() and g["kernel"] == os.uname().release and g["cpu"] == cpu
                   for g in grounds.values()), grounds
        assert st.sittings(1) == []  # modelled: no sittings
    assert "note:" not in r.stderr  # the same ground: nothing to say
    assert "FLAGGED" not in r.stdout and "Anderson-Darling" in r.stdout and "modelled values of 2 workers" in r.stdout
    assert f"ground: the 2 worker(s) alike (cpu {cpu}, kernel {os.uname().release}); host(s) " \
        f"{socket.gethostname()}" in r.stdout


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
    # the client's own refresh of its worker list, every 5 ms instead of 2 s: it once raced the
    # check's reading of that list and stopped the run as if every worker were flagged
    monkeypatch.setenv("DASK_DISTRIBUTED__CLIENT__SCHEDULER_INFO_INTERVAL", "5ms")
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


def test_the_workers_are_read_from_the_scheduler_not_from_a_cache_the_client_refreshes() -> None:
    import dask
    from distributed import Client, LocalCluster

    from assign.cluster import worker_addresses

    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2)
        expected = sorted(cluster.scheduler.workers)
        assert len(expected) == 2
        assert all(sorted(worker_addresses(client)) == expected for _ in range(300))


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


def test_a_worker_on_other_ground_is_noted_once_and_its_ground_stored(tmp_path: Path, capsys) -> None:
    # the client's side: workers report their ground with each chunk; one that differs from the run's
    # other workers (another app, another kernel) is said on stderr, once a ground; the host and boot
    # differ between identical machines and say nothing
    from types import SimpleNamespace

    g = {"host": "a", "boot_id": "1", "cpu": "c", "kernel": "6.1", "app": "/x/ipfwd", "app_sha256": "e" * 64}
    reports = [("tcp://a:1", g), ("tcp://b:1", dict(g, host="b", boot_id="2", app="/y/ipfwd")),
               ("tcp://c:1", dict(g, host="c", app_sha256="f" * 64)), ("tcp://c:1", dict(g, host="c")),
               ("tcp://d:1", dict(g, host="d", app_sha256="f" * 64))]
    with Store(str(tmp_path / "g.db")) as st:
        run, _ = st.find_or_create_run(workload="ipfwd-l1", instances=1, machine="m", topology={}, backend="dpdk",
                                       kind="measured", seed=1, allow_colocate=True, params={})
        check = _MachineCheck(SimpleNamespace(store=st, run=run), False, None)
        for address, gr in reports:
            check.add(ChunkResult(address, address[6], gr["host"], [], [], gr))
        err = capsys.readouterr().err
        assert err.count("note:") == 1, err
        assert ("worker c (tcp://c:1) on c measures on other ground than worker a (tcp://a:1) on a (app_sha256: "
                "eeeeeeeeeeee -> ffffffffffff)") in err
        assert st.worker_grounds(run.id) == {"tcp://a:1": reports[0][1], "tcp://b:1": reports[1][1],
                                             "tcp://c:1": reports[2][1], "tcp://d:1": reports[4][1]}
        # the per-worker table says it too: b is alike (host, boot and path aside), c and d are not
        lines = ground_lines(st.worker_grounds(run.id), {"tcp://a:1": "a", "tcp://c:1": "c", "tcp://d:1": "d"})
        assert lines == ["  grounds differ: worker a (tcp://a:1) on a (app eeeeeeeeeeee, kernel 6.1); against it:",
                         "    worker c (tcp://c:1): app_sha256: eeeeeeeeeeee -> ffffffffffff",
                         "    worker d (tcp://d:1): app_sha256: eeeeeeeeeeee -> ffffffffffff"], lines
        assert ground_lines({"tcp://a:1": g, "tcp://e:1": None}, {}) == [
            "  ground: the 1 worker(s) alike (cpu c, kernel 6.1, app sha256 eeeeeeeeeeee); host(s) a",
            "  ground not recorded (first seen by an assign that did not record it): tcp://e:1"]
        # the run resumed: a worker at a known address on other ground is said too; the worker keeps
        # the first, and each sitting keeps what the worker measured on in it
        check = _MachineCheck(SimpleNamespace(store=st, run=run), False, None, sitting=1)
        check.add(ChunkResult("tcp://a:1", "a", "a", [], [], dict(g, kernel="6.2")))
        err = capsys.readouterr().err
        assert "worker a (tcp://a:1) measures on other ground than when the run first saw its address (kernel: " \
               "6.1 -> 6.2)" in err
        assert st.worker_grounds(run.id)["tcp://a:1"] == g
        assert st.sitting_worker_grounds(run.id) == {(1, "tcp://a:1"): dict(g, kernel="6.2")}


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
    # a sitting with the coordinator's ground and the cluster's address; the worker's own ground, the
    # app by content included, stored with the worker and listed by estimate with the sitting
    # (three values are too few for `assign estimate`: the sittings it would list, read directly)
    from assign.sittings import split

    with Store(str(db), readonly=True) as st:
        [(seq, first, _, sitting)] = st.sittings(1)
        [(address, worker)] = st.worker_grounds(1).items()
        assert st.sitting_worker_grounds(1) == {(0, address): worker}
        [listed] = [g.to_dict() for g in split(st, 1)]
    assert (seq, first, sitting["cluster"]) == (0, 0, "local:1")
    assert worker["app_sha256"] == sitting["app_sha256"] and worker["host"] == socket.gethostname()
    assert listed["cluster"] == "local:1" and listed["worker_grounds"] == [worker]
