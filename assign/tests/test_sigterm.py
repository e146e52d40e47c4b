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


def test_sigterm_stops_the_app_and_keeps_the_measurements(build_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    p = subprocess.Popen([sys.executable, "-m", "assign.cli", "sample", "--workload", "ipfwd-l1",
                          "--instances", "1", "--allow-colocate", "--backend", "dpdk", "--machine", "local",
                          "--n", "100000", "--duration", "0.2", "--warmup", "0.05", "--runner", "serve",
                          "--build", str(build_dir), "--db", str(db), "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
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
