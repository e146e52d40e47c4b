#!/usr/bin/env python3
"""bench/assign.py: times the main `assign` flow on the model of the
UltraSPARC T2, side by side: sample --n 5000 (ipfwd-mem, model backend),
estimate on that sample, report (all figures), and the model alone (5000
assignments of 24 tasks).  Every time is measured (wall clock).

Usage: .venv/bin/python bench/assign.py [N]   (env ASSIGN=path/to/assign)
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This script's folder holds bench/assign.py, which must not hide the assign package.
sys.path[:] = [d for d in sys.path if Path(d or ".").resolve() != REPO / "bench"]
sys.path.insert(0, str(REPO / "tests"))
import harness  # noqa: E402  (tests/harness: exit quietly in a pipe)


def timed(cmd: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE if stdout is None else stdout, text=True)
    if p.returncode != 0:
        sys.exit(f"bench/assign.py: {' '.join(cmd)} exited {p.returncode}")
    return time.perf_counter() - t, p.stdout or ""


def model_alone(n: int) -> tuple[float, float]:
    """(best of 5 model predictions of n assignments, n iid draws), in s."""
    from assign.model import ModelBackend
    from assign.sampling import draws
    from assign.topology import get_machine
    from assign.workloads import Workload

    t2 = get_machine("ultrasparc-t2")
    ctx = draws(1, 0, n, 24, 64)
    t = time.perf_counter()
    draws(2, 0, n, 24, 64)
    d = time.perf_counter() - t
    m = ModelBackend(t2, Workload("ipfwd-mem"))
    ts = []
    for _ in range(5):
        s = time.perf_counter()
        m.predict(ctx)
        ts.append(time.perf_counter() - s)
    return min(ts), d


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=5000, help="assignments to sample (5000)")
    a = ap.parse_args()
    assign = os.environ.get("ASSIGN", str(REPO / ".venv" / "bin" / "assign"))
    if not os.access(assign, os.X_OK):
        sys.exit(f"bench/assign.py: {assign} not found: pip install -e assign into .venv (or set ASSIGN)")
    n = a.n
    with tempfile.TemporaryDirectory() as work:
        db = str(Path(work) / "t2.db")
        t_sample, _ = timed([assign, "sample", "--n", str(n), "--workload", "ipfwd-mem", "--machine",
                             "ultrasparc-t2", "--backend", "model", "--db", db, "--quiet"])
        t_est, est = timed([assign, "estimate", "--db", db], stdout=None)
        t_rep, _ = timed([assign, "report", "--db", db, "--out", str(Path(work) / "report")])
    model_s, draw_s = model_alone(n)
    says = ";".join(re.sub(r"\s+", " ", line) for line in est.splitlines()
                    if re.search(r"UPB, optimum|status:", line))
    print(f"assign benchmark (model backend, UltraSPARC T2 model, ipfwd-mem x8 = 24 tasks, n={n}; "
          f"{os.cpu_count()} cores)")
    print(f"  sample --n {n} (draw + model + one commit each): {t_sample:.2f} s wall (measured)")
    print(f"  estimate on that sample:                       {t_est:.2f} s wall (measured)")
    print(f"  report (8 figures PNG+SVG, HTML):              {t_rep:.2f} s wall (measured)")
    print(f"  sample + estimate + report:                    {t_sample + t_est + t_rep:.2f} s wall "
          f"(measured; README target: < 60 s on 2 cores)")
    print(f"  model alone, {n} assignments of 24 tasks:      {model_s:.3f} s (measured, best of 5, in-process)")
    print(f"  iid draws alone, {n} assignments:              {draw_s:.3f} s (measured, in-process)")
    print(f"  estimate says: {says}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
