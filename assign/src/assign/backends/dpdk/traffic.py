"""The embedded default traffic of the dpdk backend: one capture per instance
queue, replayed from memory by net_pcap (infinite_rx=1) into R, and a
net_null sink behind T.  Replay from memory costs R one copy-free dequeue
per burst, so the source is never the bottleneck and holds no context.

Captures come from the workload file's generator (traffic.capture.generator,
assign/WORKLOADS.md; or its one fixed traffic.capture.file); the packaged
workloads' is the app's own, apps/<app>/<app>_traffic.py (ipfwd: the one
its tests and benchmark use; ahocorasick: IMIX TCP/UDP
payloads with planted rule keywords; stateful: heavy-tailed flows that open
and close; analyzer: a campus link's Ethernet/VLAN/IPv4/IPv6/TCP/UDP/ICMP
mix), run through its command line and found through the Meson build's
source directory; they are written once into a cache directory and reused.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
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
    mbuf_size: int        # --mbuf-size: data room for the largest frame in one segment
    sizes: str = "fixed 64 B"

    def describe(self) -> dict:
        d = {"source": "net_pcap infinite_rx (pcap replay from memory), one queue per instance",
             "sink": "net_null", "capture_packets": self.capture_packets}
        if self.sizes == "fixed 64 B":
            d["packet_bytes"] = PACKET_SIZE  # as stored by earlier runs, so their identity still matches
        else:
            d["packet_sizes"] = self.sizes
        return d


def source_dir(build_dir: Path) -> Path:
    """The source tree a Meson build directory was configured from."""
    info = build_dir / "meson-info" / "meson-info.json"
    try:
        return Path(json.loads(info.read_text())["directories"]["source"])
    except (OSError, ValueError, KeyError) as e:
        raise TrafficError(f"{info}: cannot read the source directory of build {build_dir} ({e})") from None


def generator(build_dir: Path, app: str) -> Path:
    """The generator script of a packaged app, apps/<app>/<app>_traffic.py."""
    path = source_dir(build_dir) / "apps" / app / f"{app}_traffic.py"
    if not path.is_file():
        raise TrafficError(f"no embedded default traffic for app {app!r}: {path} does not exist")
    return path


def expand(template: tuple[str, ...], **values) -> list[str]:
    """A workload file's command template with its {placeholders} filled in."""
    return [a.format(**values) for a in template]


def generator_command(build_dir: Path, workload: Workload) -> tuple[list[str], Path]:
    """The workload's capture generator (its {output} left as a placeholder)
    and the file whose content identifies it: the script a {python} command
    runs, else the program."""
    spec = workload.spec
    tmpl = spec.capture.generator
    cmd = expand(tmpl, python=sys.executable, source=source_dir(build_dir), build=build_dir, output="{output}")
    script = Path(cmd[1]) if tmpl[0] == "{python}" and len(cmd) > 1 else Path(cmd[0])
    if not script.is_absolute():
        script = Path(shutil.which(str(script)) or script)
    if not script.is_file():
        if spec.builtin:
            raise TrafficError(f"no embedded default traffic for app {workload.app!r}: {script} does not exist")
        raise TrafficError(f"workload {spec.name} ({spec.file}): key 'traffic.capture.generator': {script} "
                           f"does not exist")
    return cmd, script


def capture_records(path: Path) -> tuple[int, int]:
    """(packets, largest frame) of a classic pcap, walking its record headers."""
    data = path.read_bytes()
    off, n, biggest = 24, 0, 0
    while off + 16 <= len(data):
        caplen = int.from_bytes(data[off + 8:off + 12], "little")
        off += 16 + caplen
        n += 1
        biggest = max(biggest, caplen)
    return n, biggest


def capture_packets_in(path: Path) -> int:
    return capture_records(path)[0]


def mbuf_room(biggest_frame: int) -> int:
    """--mbuf-size for frames up to biggest_frame bytes: one segment each, in 64-byte steps."""
    return max(128, (biggest_frame + 63) // 64 * 64)


def build_traffic(build_dir: Path, workload: Workload, cache_dir: Path,
                  capture_packets: int | None = None, rules: tuple[Path, str] | None = None) -> Traffic:
    """Captures for each instance (cached) and the vdev strings that replay them.
    capture_packets None: the generator's default (l1: locality is in the
    addresses, few packets do; mem: enough distinct destinations that the
    table lines touched exceed any last-level cache).  rules: ahocorasick's
    rule file and its digest (None: the generator's default rule set)."""
    spec = workload.spec
    if spec.capture is None:
        raise TrafficError(f"workload {spec.name} makes its traffic with a client (traffic.source "
                           f"{spec.source!r}), not from captures")
    if spec.capture.file is not None:
        caps = [_fixed_capture(build_dir, workload, capture_packets)] * workload.instances
    else:
        caps = _generated_captures(build_dir, workload, cache_dir, capture_packets, rules)
    records = [capture_records(c) for c in caps]
    n = max(r[0] for r in records)
    rx = ",".join(f"rx_pcap={c}" for c in caps)
    vdevs = (f"net_pcap0,{rx},infinite_rx=1", "net_null0")
    working = workload.instances * (2 * PP_RING_SIZE + 3 * PP_BURST) + 4096
    mbufs = max(8191, working + sum(r[0] for r in records))
    return Traffic(vdevs, tuple(caps), n, mbufs, mbuf_room(max(r[1] for r in records)), spec.capture.sizes)


def _fixed_capture(build_dir: Path, workload: Workload, capture_packets: int | None) -> Path:
    spec = workload.spec
    if capture_packets is not None:
        raise TrafficError(f"--capture-packets {capture_packets}: workload {spec.name} replays one fixed capture "
                           f"({spec.capture.file}), it generates none")
    path = Path(expand((spec.capture.file,), source=source_dir(build_dir), build=build_dir)[0])
    if not path.is_file():
        raise TrafficError(f"workload {spec.name} ({spec.file}): key 'traffic.capture.file': {path} does not exist")
    return path


def _generated_captures(build_dir: Path, workload: Workload, cache_dir: Path, capture_packets: int | None,
                        rules: tuple[Path, str] | None) -> list[Path]:
    spec = workload.spec
    cmd, script = generator_command(build_dir, workload)
    gen_id = hashlib.sha256(script.read_bytes()).hexdigest()[:10]  # a changed generator makes new captures
    if not spec.builtin:  # a user's command line is part of what the captures are
        gen_id += "-" + hashlib.sha256(json.dumps(spec.capture.generator).encode()).hexdigest()[:8]
    if rules is not None:
        gen_id += f"-rules{rules[1]}"  # keywords planted from another rule set: other captures
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{workload.app}-{workload.variant}" if spec.builtin else spec.name
    size = f"{PACKET_SIZE}B" if spec.capture.sizes == f"fixed {PACKET_SIZE} B" else "mix"
    caps = []
    for i in range(workload.instances):
        # a different seed per queue: instances forward different flows, as NIC queues would
        n_name = capture_packets or "default"
        path = cache_dir / f"{stem}-{n_name}p-{size}-seed{i + 1}-{gen_id}.pcap"
        if not path.exists():
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            full = ([a.replace("{output}", str(tmp)) for a in cmd] + (["--rules", str(rules[0])] if rules else [])
                    + ["--seed", str(i + 1)] + (["--packets", str(capture_packets)] if capture_packets else []))
            p = subprocess.run(full, capture_output=True, text=True)
            if p.returncode != 0 or not tmp.is_file():
                tmp.unlink(missing_ok=True)
                why = p.stderr.strip()[-500:] or "no capture written"
                raise TrafficError(f"{script} failed ({p.returncode}): {why}")
            os.replace(tmp, path)  # atomic: a concurrent backend never reads half a capture
        caps.append(path)
    return caps
