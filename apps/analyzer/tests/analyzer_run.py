"""Running the analyzer app (net_pcap in, net_null out) for the end-to-end
tests and the benchmark, and building their inputs."""
from __future__ import annotations

import json
import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from scapy.utils import RawPcapReader

# What a sanitizer prints when it finds something.
SANITIZER_MARKERS = ("runtime error:", "AddressSanitizer", "LeakSanitizer",
                     "UndefinedBehaviorSanitizer")
PCAP_SNAPLEN = 262144


@dataclass
class AppRun:
    returncode: int
    stdout: str
    stderr: str
    stats: dict[str, Any] | None


def app_binary(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "analyzer" / "analyzer"
    assert exe.is_file(), f"{exe} not built (meson -Dparts must include runtime,analyzer)"
    return exe


def decode_tool(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "analyzer" / "an-pcap-decode"
    assert exe.is_file(), f"{exe} not built"
    return exe


def placement(tmp: Path) -> Path:
    """One instance; P on its own context when the machine lets us have two."""
    cpus = sorted(os.sched_getaffinity(0))
    rt = cpus[0]
    p = cpus[1] if len(cpus) > 1 else cpus[0]
    path = tmp / "placement.json"
    path.write_text(json.dumps({
        "app": "analyzer", "allow_colocate": True,
        "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0},
                       "tasks": {"R": rt, "P": p, "T": rt}}]}))
    return path


def run_app(build_dir: Path, tmp: Path, file_prefix: str, pcap: Path,
            app_args: Iterable[str] = (), duration_s: float = 1.0,
            infinite: bool = False, timeout_s: float = 120,
            packets: int | None = None) -> AppRun:
    """Replay pcap (once, or in a loop with infinite_rx), stop after
    duration_s, or after `packets` packets when given (a stop that does
    not depend on how fast a loaded machine runs), return the statistics."""
    stats_path = tmp / "stats.json"
    stats_path.unlink(missing_ok=True)
    rx = f"net_pcap0,rx_pcap={pcap}" + (",infinite_rx=1" if infinite else "")
    cmd = [str(app_binary(build_dir)), "--no-pci", f"--file-prefix={file_prefix}",
           f"--vdev={rx}", "--vdev=net_null0", "--",
           "--placement", str(placement(tmp)),
           *(["--packets", str(packets)] if packets is not None
             else ["--duration", str(duration_s)]),
           "--stats", str(stats_path), *app_args]
    env = dict(os.environ)
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else None
    return AppRun(proc.returncode, proc.stdout, proc.stderr, stats)


def sanitizer_reports(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in SANITIZER_MARKERS)]


def write_pcap(path: Path, frames: Iterable[bytes]) -> int:
    """Classic pcap, Ethernet link type, every frame whole.  Returns the count."""
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, PCAP_SNAPLEN, 1))
        for frame in frames:
            frame = frame[:PCAP_SNAPLEN]
            f.write(struct.pack("<IIII", n // 1000000, n % 1000000, len(frame), len(frame)))
            f.write(frame)
            n += 1
    return n


def capture_frames(captures: Iterable[Path]) -> list[bytes]:
    """Every frame scapy can read from the captures, whatever their link
    type: fed to an Ethernet decoder, the non-Ethernet ones are garbage
    input, which is what a robustness run wants."""
    frames: list[bytes] = []
    for p in captures:
        try:
            for data, _meta in RawPcapReader(str(p)):
                frames.append(bytes(data))
        except Exception:  # a capture that breaks off: keep what was read
            pass
    return frames


def read_pcap(path: Path) -> list[bytes]:
    return [bytes(d) for d, _m in RawPcapReader(str(path))]
