"""Running the stateful app on a capture (net_pcap in, net_null out) for the
end-to-end tests, and reading what it wrote."""
from __future__ import annotations

import json
import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

# What a sanitizer prints when it finds something.
SANITIZER_MARKERS = ("runtime error:", "AddressSanitizer", "LeakSanitizer",
                     "UndefinedBehaviorSanitizer")


@dataclass
class AppRun:
    returncode: int
    stdout: str
    stderr: str
    stats: dict[str, Any] | None
    flows: list[dict[str, Any]] | None


def app_binary(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "stateful" / "stateful"
    assert exe.is_file(), f"{exe} not built (meson -Dparts must include runtime,stateful)"
    return exe


def placement(tmp: Path) -> Path:
    """One instance; P on its own context when the machine lets us have two."""
    cpus = sorted(os.sched_getaffinity(0))
    rt = cpus[0]
    p = cpus[1] if len(cpus) > 1 else cpus[0]
    path = tmp / "placement.json"
    path.write_text(json.dumps({
        "app": "stateful", "allow_colocate": True,
        "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0},
                       "tasks": {"R": rt, "P": p, "T": rt}}]}))
    return path


def run_app(build_dir: Path, tmp: Path, file_prefix: str, pcap: Path,
            app_args: Iterable[str] = (), duration_s: float = 1.5,
            timeout_s: float = 120) -> AppRun:
    """Replay pcap once (no infinite_rx: every frame exactly once), stop after
    duration_s, return the statistics and the flow dump."""
    stats_path = tmp / "stats.json"
    flows_path = tmp / "flows.json"
    for p in (stats_path, flows_path):
        p.unlink(missing_ok=True)
    cmd = [str(app_binary(build_dir)), "--no-pci", f"--file-prefix={file_prefix}",
           f"--vdev=net_pcap0,rx_pcap={pcap}", "--vdev=net_null0", "--",
           "--placement", str(placement(tmp)), "--duration", str(duration_s),
           "--stats", str(stats_path), "--dump-flows", str(flows_path), *app_args]
    env = dict(os.environ)
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else None
    flows = None
    if flows_path.exists() and flows_path.stat().st_size > 0:
        flows = json.loads(flows_path.read_text())["flows"]
    return AppRun(proc.returncode, proc.stdout, proc.stderr, stats, flows)


def sanitizer_reports(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in SANITIZER_MARKERS)]


def write_pcap(path: Path, frames: Iterable[bytes]) -> int:
    """Classic pcap, Ethernet link type, every frame whole.  Returns the count."""
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        for i, frame in enumerate(frames):
            f.write(struct.pack("<IIII", i // 1000, (i % 1000) * 1000, len(frame), len(frame)))
            f.write(frame)
            n += 1
    return n
