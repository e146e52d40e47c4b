#!/usr/bin/env python3
"""traffic-gen/tests/soak_memif.py: N placements in a row (default 1,000) with the
traffic from pp-tgen over net_memif (`assign sample --backend dpdk --traffic
tgen`: one generator for the whole sample, the app the memif client, its
ports and the link kept up from placement to placement), on the ASan+UBSan
build by default, where DPDK 22.11's memif peer-disconnect race showed.
Passes when every placement was measured (status ok), no process crashed,
no sanitizer report appeared, and the link's accounting closed exactly at
the end (every packet the generator sent is in some placement's rx or in
what the app drained at its end: assign's "generator link" line); prints
the counts (measured), the failure reasons and the time per placement.

  .venv/bin/python traffic-gen/tests/soak_memif.py [--build DIR] [--placements N]
        [--packets P] [--workload ipfwd-l1|ipfwd-mem] [--seed S]

Needs the dpdk backend's prerequisites (ipfwd and pp-tgen built in DIR,
/run/pipeplace writable).  Exit status 0: all clean; 1 otherwise.
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import harness  # noqa: E402  (tests/harness: sanitizer settings and reports)


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build-asan")))
    ap.add_argument("--placements", type=int, default=1000)
    ap.add_argument("--packets", type=int, default=20_000, help="window packets per instance (20000)")
    ap.add_argument("--workload", default="ipfwd-l1")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    assign = Path(os.environ.get("ASSIGN", REPO / ".venv" / "bin" / "assign"))
    if not os.access(assign, os.X_OK):
        sys.exit(f"soak_memif.py: {assign} not found: tools/setup.sh makes it (or set ASSIGN)")
    with tempfile.TemporaryDirectory(prefix="soaktg") as d:
        db = Path(d) / "soak.db"
        cmd = [str(assign), "sample", "--backend", "dpdk", "--traffic", "tgen", "--workload", a.workload,
               "--instances", "1", "--allow-colocate", "--n", str(a.placements), "--packets", str(a.packets),
               "--warmup", "0",  # 20,000 packets pass in tens of ms with the link up: a warm-up would eat them
               "--build", str(a.build), "--seed", str(a.seed), "--db", str(db), "--quiet"]
        print(f"{' '.join(cmd)}", flush=True)
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=harness.sanitizer_env())
        wall = time.monotonic() - t0
        rows: list[tuple[str, str | None]] = []
        if db.exists():
            with sqlite3.connect(db) as c:
                rows = c.execute("SELECT status, reason FROM measurements ORDER BY idx").fetchall()
    ok = sum(1 for s, _r in rows if s == "ok")
    failed = [(r or "") for s, r in rows if s != "ok"]
    reports = harness.sanitizer_reports(p.stderr) + [r for r in failed if harness.sanitizer_reports(r)]
    print(f"placements measured ok: {ok} of {a.placements} asked; failed: {len(failed)}; "
          f"assign exit status {p.returncode}; sanitizer report lines: {len(reports)} (measured)")
    print(f"wall time {wall:.0f} s, {wall / max(1, len(rows)):.2f} s per placement (measured)")
    for reason, n in Counter(r.splitlines()[0][:200] if r else "?" for r in failed).most_common(10):
        print(f"  {n} x {reason}")
    links = [ln for ln in p.stderr.splitlines() if ln.startswith("assign: generator link")]
    for ln in links:
        print(ln)
    closed = bool(links) and all("closed exactly" in ln for ln in links)
    if p.returncode != 0 or failed or reports or ok < a.placements or not closed:
        print(p.stderr[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
