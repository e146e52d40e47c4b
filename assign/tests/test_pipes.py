"""Every `assign` command behaves like a Unix tool when its reader goes away
(issue 13): no traceback, exit status 0, under `set -o pipefail` too."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import ASSIGN, run_assign


def run_into_closed_pipe(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run with stdout a pipe whose reader is already gone: the first write
    fails, every time (deterministic, unlike `| head`)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([str(ASSIGN), *args], stdout=w, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              timeout=120)
    finally:
        os.close(w)


def test_count_piped_into_head_20_times_under_pipefail() -> None:
    script = f"set -o pipefail; for i in $(seq 20); do {ASSIGN} count --machine ultrasparc-t2 --tasks 24 " \
             f"| head -1 > /dev/null || exit $?; done"
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stderr == "", p.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pipes") / "t2.db"
    r = run_assign("sample", "--n", "500", "--workload", "ipfwd-mem", "--machine", "ultrasparc-t2",
                   "--backend", "model", "--db", str(path), "--quiet")
    assert r.returncode == 0, r.stderr
    return path


@pytest.mark.parametrize("argv", [
    ["--help"], ["count", "--help"], ["count", "--machine", "ultrasparc-t2", "--tasks", "24"],
    ["topology", "--machine", "ultrasparc-t2"],
    ["enumerate", "--workload", "ipfwd-l1", "--instances", "1", "--topology", "pack:1 core:2 pu:2"],
    ["estimate", "--db", "{db}"], ["estimate", "--db", "{db}", "--json"], ["baselines", "--db", "{db}"],
    ["sample", "--n", "600", "--workload", "ipfwd-mem", "--machine", "ultrasparc-t2", "--backend", "model",
     "--db", "{db}", "--quiet"],
    ["best", "--db", "{db}", "--out", "{tmp}/best.json"],
], ids=lambda a: " ".join(a[:2]))
def test_a_reader_gone_is_no_error(argv: list[str], db: Path, tmp_path: Path) -> None:
    args = [a.format(db=db, tmp=tmp_path) for a in argv]
    p = run_into_closed_pipe(*args)
    assert p.returncode == 0 and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr
