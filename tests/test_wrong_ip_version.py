"""Frames whose EtherType says IPv4 but whose version nibble is not 4
(harness/frames.py: versions 0, 5, 6 and 15, an IPv4-shaped or an IPv6
header behind, tagged, cut short) through every app that reads IP headers:
each frame received, accounted for and counted under the app's reason for
a header that is not the IPv4 it claims (or for a header cut short), none
taken for IPv4 or IPv6, no crash or sanitizer report (the suite runs the
ASan+UBSan build).  The analyzer's decoder records are checked field by
field in apps/analyzer/tests."""
from __future__ import annotations

import struct
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from harness import app_binary, placement, run_app, write_pcap
from harness.frames import ipv4_ethertype, l3_bytes, wrong_ipv4_version_frames, with_version
from harness.process import Result, read_stats, sanitizer_env

FRAMES = wrong_ipv4_version_frames()


def tgen_signed() -> dict[str, bytes]:
    """pp-tgen's signature (traffic-gen/tg_signature.h) behind a UDP header
    in an IPv6 header sent as IPv4: still foreign to the sink."""
    from scapy.layers.inet import UDP
    from scapy.layers.inet6 import IPv6
    from scapy.packet import Raw
    sig = struct.pack("<IHIQ", 0x67745050, 0, 0, 0) + bytes(4)
    l3 = bytes(IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=2) / Raw(sig))
    return {f"v{v}_signed": ipv4_ethertype(with_version(l3, v)) for v in (6, 0)}


def expected(frames: list[bytes], full: str, short: str) -> Counter[str]:
    """Reason full for the frames with a whole 20-byte header after the
    tags, short for the others."""
    return Counter(full if l3_bytes(f) >= 20 else short for f in frames)


def check_runtime_app(r: Result, n: int) -> dict[str, Any]:
    r.require_stats = True
    r.assert_clean()
    s = r.stats
    assert s is not None and s["accounting_ok"] is True
    t = s["total"]
    assert t["rx_packets"] == n
    assert t["rx_packets"] == t["tx_packets"] + t["dropped_packets"] + t["queued_packets"]
    return s


def nonzero(d: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in d.items() if v}


def ipfwd(s: dict[str, Any], frames: list[bytes]) -> None:
    # ipfwd reads no VLAN tag (README: not_ip) and wants the whole 34 bytes of
    # Ethernet and IPv4 before it looks at the version
    want = Counter("not_ip" if f[12:14] != b"\x08\x00" else "bad_version_or_ihl" if len(f) >= 34
                   else "truncated" for f in frames)
    assert s["total"]["tx_packets"] == 0
    assert nonzero(s["total"]["dropped_by_reason"]) == want


def ahocorasick(s: dict[str, Any], frames: list[bytes]) -> None:
    a = s["app_stats"]
    assert a["packets_scanned"] == a["packets_scanned_whole_frame"] == 0
    assert nonzero(a["packets_unscanned"]) == expected(frames, "not_ipv4", "truncated")


def stateful(s: dict[str, Any], frames: list[bytes]) -> None:
    a = s["app_stats"]
    assert (a["lookups"], a["non_ip_packets"], a["malformed_packets"]) == (0, 0, len(frames))


def analyzer(s: dict[str, Any], frames: list[bytes]) -> None:
    a = s["app_stats"]
    assert nonzero(a["decode_status"]) == expected(frames, "ipv4_bad_version", "ipv4_truncated")
    assert nonzero(a["by_l3"]) == {"ipv4": len(frames)} and nonzero(a["by_tunnel"]) == {"none": len(frames)}


APPS: dict[str, tuple[list[str], Callable[[dict[str, Any], list[bytes]], None]]] = {
    "ipfwd": ([], ipfwd),
    "ahocorasick": (["--mode", "keywords"], ahocorasick),
    "stateful": ([], stateful),
    "analyzer": ([], analyzer),
}


@pytest.mark.parametrize("app", APPS)
def test_runtime_app_counts_wrong_ipv4_version_by_reason(build_dir: Path, file_prefix: str, tmp_path: Path,
                                                          app: str) -> None:
    frames = list(FRAMES.values())
    cap = tmp_path / "wrong_version.pcap"
    write_pcap(cap, frames)
    args, check = APPS[app]
    r = run_app(app_binary(build_dir, app), file_prefix, tmp_path, [f"net_pcap0,rx_pcap={cap}", "net_null0"],
                placement(app, 1, "l1" if app == "ipfwd" else None),
                ["--packets", str(len(frames)), *args], timeout=120, no_huge_mb=256)
    check(check_runtime_app(r, len(frames)), frames)


def test_traffic_gen_sink_counts_wrong_ipv4_version_as_foreign(build_dir: Path, file_prefix: str,
                                                               tmp_path: Path) -> None:
    frames = [*FRAMES.values(), *tgen_signed().values()]
    cap = tmp_path / "wrong_version.pcap"
    write_pcap(cap, frames)
    stats = tmp_path / "tgen.json"
    exe = build_dir / "traffic-gen" / "pp-tgen"
    cmd = [str(exe), "--no-pci", "--file-prefix", file_prefix, "--no-huge", "-m", "256", "-l", "0,1",
           "--vdev", f"net_pcap0,rx_pcap={cap}", "--", "--stats", str(stats),
           "--tx-port", "none", "--rx-port", "0", "--duration", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=sanitizer_env())
    r = Result(p.returncode, read_stats(stats), p.stdout, p.stderr, True, tuple(cmd))
    r.assert_clean()
    rx = r.stats["rx"]
    assert rx["packets"] == rx["foreign_packets"] == len(frames)
    assert nonzero(rx["foreign_by_reason"]) == expected(frames, "bad_ip_header", "truncated_l3")
    assert all(st["unique"] == 0 for st in r.stats["streams"])
