"""SIGTERM (a `timeout`, a batch scheduler) ends `assign sample` on the dpdk
backend without orphaning the app it started, and keeps what was stored."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def app_processes(build_dir: Path) -> list[str]:
    out = subprocess.run(["pgrep", "-af", str(build_dir / "apps")], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if ln.strip()]


def stored(db: Path) -> int:
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT count(*) FROM measurements").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def start_sample(build_dir: Path, tmp_path: Path, db: Path, *args: str) -> subprocess.Popen:
    """`assign sample` of ipfwd-l1 on this machine's dpdk backend, in the background."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.Popen([sys.executable, "-m", "assign.cli", "sample", "--workload", "ipfwd-l1",
                             "--instances", "1", "--allow-colocate", "--backend", "dpdk", "--machine", "local",
                             "--warmup", "0.05", "--build", str(build_dir), "--db", str(db), "--quiet", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)


def test_sigterm_stops_the_app_and_keeps_the_measurements(build_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    p = start_sample(build_dir, tmp_path, db, "--n", "100000", "--duration", "0.2", "--runner", "serve")
    try:
        end = time.monotonic() + 240
        while stored(db) < 2 and p.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        assert stored(db) >= 2, p.stderr.read() if p.poll() is not None else "no measurement in 240 s"
        assert app_processes(build_dir), "the serve process should be running mid-sample"
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 128 + signal.SIGTERM
    deadline = time.monotonic() + 10
    while app_processes(build_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert app_processes(build_dir) == [], "an app process outlived assign"
    n = stored(db)
    with sqlite3.connect(db) as c:
        idx = [r[0] for r in c.execute("SELECT idx FROM measurements ORDER BY idx")]
    assert n >= 2 and idx == list(range(n))


def test_sigkill_of_assign_ends_the_app_mid_window(build_dir: Path, tmp_path: Path) -> None:
    """SIGKILL runs no finalizer: the app still gets SIGTERM from the kernel
    (its parent-death signal) and ends its 60 s window at once."""
    db = tmp_path / "k.db"
    p = start_sample(build_dir, tmp_path, db, "--n", "3", "--duration", "60", "--runner", "process")
    try:
        end = time.monotonic() + 240
        while not app_processes(build_dir) and p.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        assert app_processes(build_dir), p.stderr.read() if p.poll() is not None else "no app started in 240 s"
        time.sleep(1)  # past setpriv's exec: the app itself is running its window
        p.kill()
        assert p.wait(timeout=30) == -signal.SIGKILL
    finally:
        if p.poll() is None:
            p.kill()
    deadline = time.monotonic() + 30  # well inside the 60 s window the app would otherwise finish
    while app_processes(build_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert app_processes(build_dir) == [], "an app process outlived a SIGKILL of assign"
