"""The embedded default traffic of the dpdk backend: one capture per instance
queue, replayed from memory by net_pcap (infinite_rx=1) into R, and a
net_null sink behind T.  Replay from memory costs R one copy-free dequeue
per burst, so the source is never the bottleneck and holds no context.

Captures come from the app's own generator (apps/ipfwd/ipfwd_traffic.py, the
one the ipfwd tests and benchmark use), run through its command line and
found through the Meson build's source directory; they are written once
into a cache directory and reused.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ...workloads import Workload

PACKET_SIZE = 64  # bytes on the wire without FCS: the paper's worst case for a forwarding path
PP_RING_SIZE = 1024  # the runtime's default R->P and P->T ring slots (runtime/pp_main.c)
PP_BURST = 32


class TrafficError(ValueError):
    """No default traffic for this app, or its generator is missing."""


@dataclass(frozen=True)
class Traffic:
    """Ports for EAL (--vdev) and the pool size the captures need."""

    vdevs: tuple[str, ...]
    captures: tuple[Path, ...]
    capture_packets: int  # packets per capture
    mbufs: int            # --mbufs: the replayed captures live in mbufs, plus the rings' working set
    mbuf_size: int        # --mbuf-size: data room for PACKET_SIZE frames

    def describe(self) -> dict:
        return {"source": "net_pcap infinite_rx (pcap replay from memory), one queue per instance",
                "sink": "net_null", "capture_packets": self.capture_packets, "packet_bytes": PACKET_SIZE}


def source_dir(build_dir: Path) -> Path:
    """The source tree a Meson build directory was configured from."""
    info = build_dir / "meson-info" / "meson-info.json"
    try:
        return Path(json.loads(info.read_text())["directories"]["source"])
    except (OSError, ValueError, KeyError) as e:
        raise TrafficError(f"{info}: cannot read the source directory of build {build_dir} ({e})") from None


def generator(build_dir: Path, app: str) -> Path:
    path = source_dir(build_dir) / "apps" / app / f"{app}_traffic.py"
    if not path.is_file():
        raise TrafficError(f"no embedded default traffic for app {app!r}: {path} does not exist "
                           f"(the dpdk backend's default traffic is defined for ipfwd so far)")
    return path


def capture_packets_in(path: Path, size: int = PACKET_SIZE) -> int:
    """Packets in a capture of equal-sized frames (24-byte file header, 16 per record)."""
    return (path.stat().st_size - 24) // (16 + size)


def build_traffic(build_dir: Path, workload: Workload, cache_dir: Path,
                  capture_packets: int | None = None) -> Traffic:
    """Captures for each instance (cached) and the vdev strings that replay them.
    capture_packets None: the generator's default (l1: locality is in the
    addresses, few packets do; mem: enough distinct destinations that the
    table lines touched exceed any last-level cache)."""
    if workload.app != "ipfwd":
        raise TrafficError(f"no embedded default traffic for app {workload.app!r} yet (ipfwd only); "
                           f"the dpdk backend cannot measure workload {workload.name}")
    gen = generator(build_dir, workload.app)
    gen_id = hashlib.sha256(gen.read_bytes()).hexdigest()[:10]  # a changed generator makes new captures
    cache_dir.mkdir(parents=True, exist_ok=True)
    caps = []
    for i in range(workload.instances):
        # a different seed per queue: instances forward different flows, as NIC queues would
        n_name = capture_packets or "default"
        path = cache_dir / f"{workload.app}-{workload.variant}-{n_name}p-{PACKET_SIZE}B-seed{i + 1}-{gen_id}.pcap"
        if not path.exists():
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            cmd = [sys.executable, str(gen), str(workload.variant), str(tmp), "--size", str(PACKET_SIZE),
                   "--seed", str(i + 1)] + (["--packets", str(capture_packets)] if capture_packets else [])
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise TrafficError(f"{gen} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
            os.replace(tmp, path)  # atomic: a concurrent backend never reads half a capture
        caps.append(path)
    n = capture_packets_in(caps[0])
    rx = ",".join(f"rx_pcap={c}" for c in caps)
    vdevs = (f"net_pcap0,{rx},infinite_rx=1", "net_null0")
    working = workload.instances * (2 * PP_RING_SIZE + 3 * PP_BURST) + 4096
    mbufs = max(8191, working + n * workload.instances)
    return Traffic(vdevs, tuple(caps), n, mbufs, 128)
