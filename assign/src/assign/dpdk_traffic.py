"""The embedded default traffic of the dpdk backend: one capture per instance
queue, replayed from memory by net_pcap (infinite_rx=1) into R, and a
net_null sink behind T.  Replay from memory costs R one copy-free dequeue
per burst, so the source is never the bottleneck and holds no context.

Captures come from the app's own generator (apps/ipfwd/gen_traffic.py, the
one the ipfwd tests use), found through the Meson build's source directory;
they are written once into a cache directory and reused.
"""
from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .workloads import Workload

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


def _generator(build_dir: Path, app: str) -> ModuleType:
    path = source_dir(build_dir) / "apps" / app / "gen_traffic.py"
    if not path.is_file():
        raise TrafficError(f"no embedded default traffic for app {app!r}: {path} does not exist "
                           f"(the dpdk backend's default traffic is defined for ipfwd so far)")
    spec = importlib.util.spec_from_file_location(f"pipeplace_gen_traffic_{app}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def default_capture_packets(workload: Workload) -> int:
    # l1: the generator's default (locality is in the addresses, not the count);
    # mem: enough distinct destinations that the table lines touched exceed
    # any last-level cache, as in the generator's own default.
    return 4096 if workload.variant == "l1" else 262144


def build_traffic(build_dir: Path, workload: Workload, cache_dir: Path,
                  capture_packets: int | None = None) -> Traffic:
    """Captures for each instance (cached) and the vdev strings that replay them."""
    if workload.app != "ipfwd":
        raise TrafficError(f"no embedded default traffic for app {workload.app!r} yet (ipfwd only); "
                           f"the dpdk backend cannot measure workload {workload.name}")
    gen = _generator(build_dir, workload.app)
    n = capture_packets or default_capture_packets(workload)
    cache_dir.mkdir(parents=True, exist_ok=True)
    caps = []
    for i in range(workload.instances):
        # a different seed per queue: instances forward different flows, as NIC queues would
        path = cache_dir / f"{workload.app}-{workload.variant}-{n}p-{PACKET_SIZE}B-seed{i + 1}.pcap"
        if not path.exists():
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            gen.write_pcap(tmp, gen.generate(workload.variant, n, 16, PACKET_SIZE, 0.0, i + 1))
            os.replace(tmp, path)  # atomic: a concurrent backend never reads half a capture
        caps.append(path)
    rx = ",".join(f"rx_pcap={c}" for c in caps)
    vdevs = (f"net_pcap0,{rx},infinite_rx=1", "net_null0")
    working = workload.instances * (2 * PP_RING_SIZE + 3 * PP_BURST) + 4096
    mbufs = max(8191, working + n * workload.instances)
    return Traffic(vdevs, tuple(caps), n, mbufs, 128)
