"""netstreamcluster as the packaged workload (assign/src/assign/data/
workloads/netstreamcluster.toml): `pipeplace run -a netstreamcluster -i
test --json` clusters the test tier, finds it equal to the reference and
says so with its measured points/s.  (`assign sample --workload
netstreamcluster --backend dpdk --n 5` runs the same measurement five
times; netdedup's workload test covers that path.)  Needs root."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, DPDK)")


def test_pipeplace_run_matches_the_reference(repo_dir: Path, build_dir: Path) -> None:
    p = subprocess.run([str(repo_dir / ".venv" / "bin" / "pipeplace"), "run", "-a", "netstreamcluster",
                        "-i", "test", "--json"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PIPEPLACE_BUILD": str(build_dir)})
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    assert doc["app"] == "netstreamcluster" and doc["tier"] == "test"
    r = doc["result"]
    assert r["matches_reference"] is True and r["points"] == 2048 and r["input_bytes"] == 32 + 2048 * 32
    assert r["unit"] == "points/s" and r["value"] == r["points_per_s"] > 0 and r["kind"] == "measured"
    assert r["accounting_ok"] is True
