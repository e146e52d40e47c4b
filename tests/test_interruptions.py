"""tools/pp-interruptions, the floor under a busy thread's timing
(bench/tgen-timing.py prints it beside the timed replay's error)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest


def probe(build_dir: Path, *args: str) -> subprocess.CompletedProcess:
    exe = build_dir / "tools" / "pp-interruptions"
    assert exe.exists(), f"{exe} not built"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.offline  # one second of spinning on one context: no DPDK, no namespace
def test_one_second_on_context_0_adds_up(build_dir: Path) -> None:
    r = probe(build_dir, "0", "1", "2000")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["kind"] == "measured" and out["cpu"] == 0 and out["min_ns"] == 2000
    assert 0.9 < out["seconds"] < 1.5 and out["gaps_not_kept"] == 0
    n, g, late = out["interruptions"], out["gap_ns"], out["lateness_ns"]
    assert out["per_s"] == pytest.approx(n / out["seconds"], rel=1e-3, abs=0.1)
    assert 0 <= out["stalled_fraction"] < 1
    if n:
        assert 2000 <= g["p50"] <= g["p99"] <= g["max"]
        # a random instant is never later than the longest gap, and the rarer quantile is the later
        assert 0 <= late["p99"] <= late["p99_9"] <= g["max"]
        # the time spent in gaps is at least n times the shortest kept gap
        assert out["stalled_fraction"] * out["seconds"] * 1e9 >= n * 2000 * 0.999
    else:
        assert g == {"p50": 0, "p99": 0, "max": 0} and late == {"p99": 0, "p99_9": 0}


@pytest.mark.offline
@pytest.mark.parametrize("args, named", [(["x", "1"], "'x'"), (["0", "0"], "'0'"), (["0", "1", "10"], "'10'"),
                                         (["0"], "usage: pp-interruptions"), (["0", "1", "2", "3"], "usage:")])
def test_bad_arguments_are_refused_naming_the_value(build_dir: Path, args: list[str], named: str) -> None:
    r = probe(build_dir, *args)
    assert r.returncode == 2 and named in r.stderr and not r.stdout, r.stderr
