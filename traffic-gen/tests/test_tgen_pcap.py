"""pcap and pcapng replay: what goes out (tx_pcap) is byte for byte what came
in, looped; broken captures are refused with the file and the reason."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

import harness
from harness import read_pcap
from tgen_harness import run_tgen


def capture(path: Path) -> list[bytes]:
    pkts = []
    for i in range(25):
        kind = i % 4
        if kind == 0:
            p = Ether() / IP(dst=f"10.0.0.{i}") / UDP(dport=i) / Raw(bytes([i]) * (i * 50 % 1400))
        elif kind == 1:
            p = Ether() / IP() / TCP(sport=i, flags="S")
        elif kind == 2:
            p = Ether() / IPv6() / UDP() / Raw(b"v6" * i)
        else:
            p = Ether() / ARP(pdst=f"192.168.0.{i}")
        pkts.append(p)
    wrpcap(str(path), pkts)
    return [bytes(p) for p in pkts]


frames = read_pcap


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_replay_is_byte_for_byte(build_dir: Path, file_prefix: str, tmp_path: Path, fmt: str) -> None:
    src = tmp_path / "in.pcap"
    want = capture(src)
    if fmt == "pcapng":
        ng = tmp_path / "in.pcapng"
        subprocess.run(["editcap", "-F", "pcapng", str(src), str(ng)], check=True)
        assert ng.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"  # pcapng section header
        src = ng
    out = tmp_path / "out.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--pcap", str(src), "--loops", "3"])
    r.assert_clean()
    assert frames(out) == want * 3
    assert r.stats["tx"]["packets"] == 75
    assert r.stats["tx"]["bytes"] == sum(len(p) + 4 for p in want) * 3


def test_replay_at_a_set_rate(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    src = tmp_path / "in.pcap"
    capture(src)
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"],
                 ["--pcap", str(src), "--rate", "20k", "--duration", "1"])
    r.assert_clean()
    assert abs(r.stats["tx"]["packets"] - 20_000) <= 200


def pcap_header(snaplen: int = 65535) -> bytes:
    return harness.pcap_header(snaplen)


record = harness.pcap_record


BAD = {
    "not_a_capture": (b"this is not a capture file at all\n" * 4, "pcap"),
    "truncated": (pcap_header() + record(bytes(60)) + record(bytes(100))[:50], "after packet 1"),
    "no_packets": (pcap_header(), "no packets"),
    "cut_by_snaplen": (pcap_header(64) + record(bytes(64), orig_len=1000), "snap length"),
    "too_short": (pcap_header() + record(bytes(8)), "outside 14"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_capture_is_refused(build_dir: Path, file_prefix: str, tmp_path: Path, name: str) -> None:
    data, reason = BAD[name]
    path = tmp_path / f"{name}.pcap"
    path.write_bytes(data)
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], ["--pcap", str(path)])
    assert r.rc != 0 and r.stats is None
    assert str(path) in r.stderr and reason in r.stderr, r.stderr


def test_missing_capture_is_refused(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    path = tmp_path / "absent.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], ["--pcap", str(path)])
    assert r.rc != 0 and str(path) in r.stderr and "No such file" in r.stderr, r.stderr


def test_replay_in_the_captures_own_time(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """--pcap-timing: 101 packets 10 ms apart (1 s), in their own time and
    twice as fast; never early (a replay cannot end before the capture's
    span), each gap measured; bad values refused."""
    pkts = [Ether() / IP(dst="10.0.0.1") / UDP() / Raw(b"x" * 18) for _ in range(101)]
    for i, p in enumerate(pkts):
        p.time = 1_700_000_000 + i * 0.01
    src = tmp_path / "gaps.pcap"
    wrpcap(str(src), pkts)
    spans = {}
    for timing, span in (("original", 1.0), ("2", 0.5)):
        r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"],
                     ["--pcap", str(src), "--pcap-timing", timing, "--loops", "1"])
        r.assert_clean()
        assert r.stats["tx"]["packets"] == 101
        t = r.stats["streams"][0]["timing"]
        assert t["kind"] == "measured" and t["gap_error_ns"]["samples"] == 100
        assert t["lateness_ns"]["samples"] == 101
        # the last packet is due at `span`: never sent before it; late by at most the lateness seen
        assert span * 0.999 <= r.stats["duration_s"] <= span + t["lateness_ns"]["max"] / 1e9 + 0.05
        spans[timing] = r.stats["duration_s"]
    for bad, why in ((["--pcap-timing", "0"], "is not none, original or a speed factor"),
                     (["--pcap-timing", "original", "--rate", "1k"], "give one"),
                     (["--pcap-timing", "original"], "--pcap-timing needs --pcap")):
        args = (["--pcap", str(src)] if "--rate" in bad else []) + bad
        r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], args)
        assert r.rc == 2 and why in r.stderr, r.stderr
