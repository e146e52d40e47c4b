"""netferret as the packaged workload (assign/src/assign/data/workloads/
netferret.toml): `pipeplace run -a netferret -i test --json` answers the
test tier, finds it equal to the reference and says so with its measured
queries/s and p99; `assign sample --workload netferret --backend dpdk --n
5` stores five measured queries/s values.  Needs root."""
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


def test_pipeplace_run_matches_the_reference(repo_dir: Path, build_dir: Path) -> None:
    p = subprocess.run([str(repo_dir / ".venv" / "bin" / "pipeplace"), "run", "-a", "netferret",
                        "-i", "test", "--json"], capture_output=True, text=True, timeout=300, env=env(build_dir))
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    assert doc["app"] == "netferret" and doc["tier"] == "test"
    r = doc["result"]
    assert r["matches_reference"] is True and r["queries"] == 1 and r["reference_checked"] == 1
    assert r["unit"] == "queries/s" and r["value"] == r["queries_per_s"] > 0 and r["kind"] == "measured"
    assert r["p99_ms"] >= r["p50_ms"] > 0 and r["accounting_ok"] is True


def test_assign_sample_stores_five_values(repo_dir: Path, build_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "nf.db"
    p = subprocess.run([str(repo_dir / ".venv" / "bin" / "assign"), "sample", "--workload", "netferret",
                        "--backend", "dpdk", "--n", "5", "--instances", "1", "--allow-colocate",
                        "--db", str(db)], capture_output=True, text=True, timeout=600, env=env(build_dir))
    assert p.returncode == 0, p.stderr[-3000:]
    with sqlite3.connect(db) as c:
        rows = c.execute("select value, status, extra from measurements").fetchall()
    assert len(rows) == 5 and all(s == "ok" and v > 0 for v, s, _ in rows), rows
    assert all(json.loads(e)["kind"] == "measured" for _, _, e in rows)
    assert " queries/s (measured)" in p.stdout and "packets/s" not in p.stdout, p.stdout
