"""IPv6, 802.1Q and QinQ templates, written by pp-tgen into a tx_pcap
capture and read back by tshark (an independent decoder): tags and their
varying VLAN ids, IPv6 addresses varied in their low 64 bits, hop limit,
UDP/TCP checksums tshark verifies, and the signature where RX finds it."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tgen_harness import run_tgen


def tshark(cap: Path, fields: list[str]) -> list[list[str]]:
    out = subprocess.run(["tshark", "-r", str(cap), "-o", "udp.check_checksum:TRUE",
                          "-o", "ip.check_checksum:TRUE",
                          "-o", "tcp.check_checksum:TRUE", "-T", "fields", "-E", "separator=|",
                          *[a for f in fields for a in ("-e", f)]],
                         capture_output=True, text=True, check=True).stdout
    return [line.split("|") for line in out.splitlines()]


def test_ipv6_udp_with_a_varying_vlan_id(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    out = tmp_path / "v6.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--packets", "8", "--size", "100", "--vlan", "100-103", "--ttl", "33",
                  "--src-ip", "2001:db8::1-2001:db8::2", "--dst-ip", "2001:db8:1::ff", "--dport", "4789"])
    r.assert_clean()
    rows = tshark(out, ["vlan.id", "eth.type", "ipv6.src", "ipv6.dst", "ipv6.hlim", "udp.dstport",
                        "udp.checksum.status", "udp.length", "frame.len"])
    assert len(rows) == 8
    assert [x[0] for x in rows] == ["100", "101", "102", "103"] * 2
    assert [x[2] for x in rows] == ["2001:db8::1", "2001:db8::2"] * 4
    for x in rows:
        assert x[3] == "2001:db8:1::ff" and x[4] == "33" and x[5] == "4789"
        assert x[6] == "1", x  # tshark's checksum status: 1 = good
        assert x[7] == str(96 - 14 - 4 - 40) and x[8] == "96"
    assert r.stats["config"]["streams"][0]["vlan"] == "100-103/inc"
    assert r.stats["config"]["streams"][0]["src_ip"] == "2001:db8::1-2001:db8::2/inc"


def test_qinq_ipv6_tcp_and_ipv4_under_one_tag(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    out = tmp_path / "qinq.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--packets", "6", "--size", "120", "--svlan", "7", "--vlan", "1-3", "--proto", "tcp",
                  "--flows", "3", "--src-ip", "2001:db8::a", "--dst-ip", "2001:db8::10-2001:db8::12"])
    r.assert_clean()
    rows = tshark(out, ["ieee8021ad.id", "vlan.id", "ipv6.dst", "tcp.checksum.status", "tcp.flags.ack"])
    assert len(rows) == 6
    for i, x in enumerate(rows):
        assert x[0] == "7" and x[1] == str(1 + i % 3), x  # outer 802.1ad S-tag, inner 802.1Q C-tag
        assert x[2] == f"2001:db8::{0x10 + i % 3:x}" and x[3] == "1" and x[4] == "1", x
    assert bytes.fromhex("88a8") in out.read_bytes()
    out4 = tmp_path / "v4.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out4}"],
                 ["--packets", "3", "--vlan", "4094", "--size", "68"])
    r.assert_clean()
    rows = tshark(out4, ["vlan.id", "ip.dst", "ip.checksum.status", "frame.len"])
    assert rows == [["4094", "10.1.0.1", "1", "64"]] * 3


@pytest.mark.parametrize("args, why", [
    (["--src-ip", "2001:db8::1"], "give both IPv4 or both IPv6"),
    (["--src-ip", "2001:db8::1-2001:db9::1", "--dst-ip", "2001:db8::2"], "same first 64 bits"),
    (["--vlan", "4096"], "is not a VLAN id"),
    (["--svlan", "5"], "svlan (QinQ's outer tag) needs vlan"),
    (["--vlan", "1", "--src-ip", "2001:db8::1", "--dst-ip", "2001:db8::2", "--size", "80"],
     "below 88 bytes"),
])
def test_bad_templates_are_refused(build_dir: Path, file_prefix: str, tmp_path: Path, args, why) -> None:
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], ["--packets", "1", *args])
    assert r.rc == 2 and why in r.stderr, r.stderr


def test_tagged_ipv6_loop_is_measured_packet_by_packet(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """RX decodes what TX builds: QinQ IPv6 UDP over a net_ring loop, no
    loss, no reordering, a latency sample per packet, nothing foreign."""
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_ring0"],
                 ["--tx-port", "0", "--rx-port", "0", "--packets", "1000", "--rate", "20k",
                  "--svlan", "10", "--vlan", "1-4094/random", "--size", "92:7,570:4,1518:1",
                  "--src-ip", "2001:db8::1", "--dst-ip", "2001:db8::2-2001:db8::ffff/random"])
    r.assert_clean()
    rx = r.stats["rx"]
    assert rx["unique_packets"] == 1000 and rx["lost"] == 0 and rx["reordered"] == 0, rx
    assert rx["foreign_packets"] == 0 and rx["latency_ns"]["samples"] == 1000
