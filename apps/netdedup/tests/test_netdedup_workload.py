"""netdedup as the packaged workload (assign/src/assign/data/workloads/
netdedup.toml): `pipeplace run -a netdedup -i test --json` restores the
test tier exactly and says so, and `assign sample --workload netdedup
--backend dpdk --n 5` stores five measured MB/s values.  Needs root."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, DPDK)")


def env(build_dir: Path) -> dict[str, str]:
    return {**os.environ, "PIPEPLACE_BUILD": str(build_dir)}


def test_pipeplace_run_restores_the_test_tier(repo_dir: Path, build_dir: Path) -> None:
    p = subprocess.run([str(repo_dir / ".venv" / "bin" / "pipeplace"), "run", "-a", "netdedup",
                        "-i", "test", "--json"], capture_output=True, text=True, timeout=300,
                       env=env(build_dir))
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    assert doc["app"] == "netdedup" and doc["tier"] == "test"
    r = doc["result"]
    assert r["restored_identical"] is True and r["input_bytes"] == 1 << 20
    assert r["mb_per_s"] > 0 and r["kind"] == "measured" and r["accounting_ok"] is True


def test_assign_sample_stores_five_values(repo_dir: Path, build_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "dd.db"
    p = subprocess.run([str(repo_dir / ".venv" / "bin" / "assign"), "sample", "--workload",
                        "netdedup", "--backend", "dpdk", "--n", "5", "--instances", "1",
                        "--allow-colocate", "--db", str(db)],
                       capture_output=True, text=True, timeout=600, env=env(build_dir))
    assert p.returncode == 0, p.stderr[-3000:]
    with sqlite3.connect(db) as c:
        rows = c.execute("select value, status, extra from measurements").fetchall()
    assert len(rows) == 5 and all(s == "ok" and v > 0 for v, s, _ in rows), rows
    assert all(json.loads(e)["kind"] == "measured" for _, _, e in rows)
    # the figure is named in the workload's own unit, never as packets
    assert "best single value" in p.stdout and " MB/s (measured)" in p.stdout and "packets/s" not in p.stdout, \
        p.stdout
    # baselines of the stored run name the same unit (the optimum's estimate needs 400 values: absent)
    p = subprocess.run([str(repo_dir / ".venv" / "bin" / "assign"), "baselines", "--db", str(db)],
                       capture_output=True, text=True, timeout=120, env=env(build_dir))
    assert p.returncode == 0, p.stderr[-3000:]
    assert " MB/s (" in p.stdout and "packets/s" not in p.stdout, p.stdout
