#!/usr/bin/env python3
"""bench/apps.py: the benchmarks of the three apps of issue 6, one after the
other in one run: each script prints its own P-task packets per second at
64, 512 and 1500 bytes (and ahocorasick each engine's Gb/s with the DoS
subset and the whole rule set; stateful the hash-flood comparison).  Every
figure is measured.

Usage: bench/apps.py [--build DIR] [extra arguments for every script, e.g. --repeat 5]
(default build: build/, the release build)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
import harness  # noqa: E402  (tests/harness: exit quietly in a pipe)


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=REPO / "build")
    a, extra = ap.parse_known_args()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average at start: {load} on {os.cpu_count()} CPUs", flush=True)
    for app in ("ahocorasick", "stateful", "analyzer"):
        print(f"\n=== {app} ===", flush=True)
        rc = subprocess.run([sys.executable, str(REPO / "bench" / f"apps-{app}.py"),
                             "--build", str(a.build.resolve()), *extra]).returncode
        if rc != 0:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
