"""The stateful app's flow records against an independent count.

A capture with known flows (TCP conversations ending in every state, UDP,
ICMP, a VLAN twin of a TCP flow, IPv6, IPv4 fragments, a pair of flows that
collide under nProbe's hash, non-IP and malformed frames) goes through the
app once; the JSON flow dump must equal what scapy counts, flow by flow.
Also: the table-full path and bad command-line values."""
from __future__ import annotations

import ipaddress
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Packet, Raw

from stateful_run import app_binary, placement, run_app, sanitizer_reports, write_pcap

ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def tcp_conv(ip_cls: type, cli: str, srv: str, cport: int, sport: int,
             steps: list[tuple[str, str, bytes]], vlan: int | None = None) -> list[Packet]:
    """steps: (direction 'c' or 's', TCP flags, payload)."""
    out = []
    for direction, flags, payload in steps:
        src, dst, sp, dp = (cli, srv, cport, sport) if direction == "c" else (srv, cli, sport, cport)
        l2 = Ether(**ETH) / Dot1Q(vlan=vlan) if vlan is not None else Ether(**ETH)
        out.append(l2 / ip_cls(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags) / Raw(payload))
    return out


HANDSHAKE = [("c", "S", b""), ("s", "SA", b""), ("c", "A", b"")]

# flow name -> (packets, expected TCP state of the flow)
def known_flows() -> dict[str, tuple[list[Packet], str]]:
    udp = [Ether(**ETH) / IP(src=a, dst=b) / UDP(sport=sp, dport=dp) / Raw(b"q" * n)
           for a, b, sp, dp, n in [("192.168.1.10", "8.8.8.8", 5353, 53, 30),
                                   ("8.8.8.8", "192.168.1.10", 53, 5353, 120)] * 3]
    icmp = [Ether(**ETH) / IP(src="10.0.0.1", dst="10.0.0.9") / ICMP(type=8) / Raw(b"p" * 56),
            Ether(**ETH) / IP(src="10.0.0.9", dst="10.0.0.1") / ICMP(type=0) / Raw(b"p" * 56)]
    frags = [Ether(**ETH) / f for f in
             fragment(IP(src="172.16.0.1", dst="172.16.0.2") / UDP(sport=7000, dport=7001)
                      / Raw(b"x" * 3000), fragsize=1000)]
    udp6 = [Ether(**ETH) / IPv6(src="2001:db8::1", dst="2001:db8::53") / UDP(sport=40000, dport=53)
            / Raw(b"z" * 40)]
    # 10.1.0.1:1000 and 10.1.0.0:1001 -> 10.1.9.9:80 have the same nProbe sum.
    collide = tcp_conv(IP, "10.1.0.1", "10.1.9.9", 1000, 80, [("c", "S", b"")]) + \
        tcp_conv(IP, "10.1.0.0", "10.1.9.9", 1001, 80, [("c", "S", b"")])
    return {
        "closed_fin": (tcp_conv(IP, "10.0.0.1", "10.0.0.2", 40000, 80, HANDSHAKE + [
            ("c", "PA", b"GET / HTTP/1.0\r\n\r\n"), ("s", "PA", b"H" * 500), ("c", "A", b""),
            ("c", "FA", b""), ("s", "FA", b""), ("c", "A", b"")]), "closed"),
        "established": (tcp_conv(IP, "10.0.0.3", "10.0.0.2", 40001, 443, HANDSHAKE + [
            ("c", "PA", b"\x16\x03\x01" + b"c" * 200)]), "established"),
        "new": (tcp_conv(IP, "10.0.0.4", "10.0.0.2", 40002, 22, [("c", "S", b"")] * 2), "new"),
        "closed_rst": (tcp_conv(IP, "10.0.0.5", "10.0.0.2", 40003, 25,
                                [("c", "S", b""), ("s", "RA", b"")]), "closed"),
        "closing": (tcp_conv(IP, "10.0.0.6", "10.0.0.2", 40004, 8080, HANDSHAKE + [
            ("c", "FA", b"")]), "closing"),
        "vlan_twin": (tcp_conv(IP, "10.0.0.1", "10.0.0.2", 40000, 80, [("c", "S", b"")], vlan=100),
                      "new"),
        "ipv6_tcp": (tcp_conv(IPv6, "2001:db8::1", "2001:db8::2", 50000, 80, HANDSHAKE), "established"),
        "udp": (udp, "none"),
        "icmp": (icmp, "none"),
        "fragments": (frags, "none"),
        "udp6": (udp6, "none"),
        "collide": (collide, "new"),
    }


def interleave(flows: list[list[Packet]]) -> list[Packet]:
    """Round-robin across flows, each flow's own order kept."""
    out, i = [], 0
    while any(i < len(f) for f in flows):
        out.extend(f[i] for f in flows if i < len(f))
        i += 1
    return out


def flow_key_of(pkt: Packet) -> tuple[Any, ...] | None:
    """Independent flow key from scapy's decode: (vlan, proto, (src, sport),
    (dst, dport)) or None for non-IP."""
    vlan = pkt[Dot1Q].vlan if Dot1Q in pkt else 0
    if IP in pkt:
        ip = pkt[IP]
        proto = ip.proto
        fragmented = bool(ip.flags.MF) or ip.frag != 0
    elif IPv6 in pkt:
        ip = pkt[IPv6]
        proto = ip.nh
        fragmented = False
    else:
        return None
    sport = dport = 0
    if not fragmented and (TCP in pkt or UDP in pkt):
        l4 = pkt[TCP] if TCP in pkt else pkt[UDP]
        sport, dport = l4.sport, l4.dport
    return (vlan, proto, (ipaddress.ip_address(ip.src), sport), (ipaddress.ip_address(ip.dst), dport))


def python_flow_count(frames: list[bytes]) -> dict[tuple[Any, ...], dict[str, int]]:
    flows: dict[tuple[Any, ...], dict[str, int]] = {}
    for raw in frames:
        pkt = Ether(raw)
        k = flow_key_of(pkt)
        if k is None:
            continue
        vlan, proto, a, b = k
        canon = (vlan, proto, min(a, b), max(a, b))
        if canon not in flows:  # the first packet's sender is the source
            flows[canon] = defaultdict(int, src=a, dst=b)
        f = flows[canon]
        d = "src_to_dst" if a == f["src"] else "dst_to_src"
        f["packets"] += 1
        f["bytes"] += len(raw)
        f["packets_" + d] += 1
        f["bytes_" + d] += len(raw)
        if TCP in pkt and proto == 6:
            f["tcp_flags"] |= int(pkt[TCP].flags)
    return {(k[0], k[1], f["src"], f["dst"]): f for k, f in flows.items()}


def dump_by_key(flows: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {(f["vlan"], f["proto"], (ipaddress.ip_address(f["src"]), f["sport"]),
             (ipaddress.ip_address(f["dst"]), f["dport"])): f for f in flows}


@pytest.fixture(scope="module")
def known_capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes], dict[str, Any]]:
    flows = known_flows()
    pkts = interleave([p for p, _ in flows.values()])
    frames = [bytes(p) for p in pkts]
    frames.insert(3, bytes(Ether(**ETH) / ARP(pdst="10.0.0.2")))              # non-IP
    frames.insert(7, bytes(Ether(**ETH, type=0x0800) / Raw(b"\x45\x00\x00")))  # cut IPv4
    path = tmp_path_factory.mktemp("known") / "known.pcap"
    write_pcap(path, frames)
    return path, frames, flows


@pytest.mark.parametrize("hash_args", [[], ["--hash", "keyed"],
                                        ["--hash", "keyed", "--hash-key", "00" * 16]])
def test_flow_records_equal_an_independent_count(build_dir: Path, tmp_path: Path, file_prefix: str,
                                                 known_capture: tuple[Path, list[bytes], dict[str, Any]],
                                                 hash_args: list[str]) -> None:
    pcap, frames, flows = known_capture
    run = run_app(build_dir, tmp_path, file_prefix, pcap, hash_args)
    assert run.returncode == 0, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr)
    assert run.stats is not None and run.flows is not None
    assert run.stats["accounting_ok"] is True
    assert run.stats["total"]["rx_packets"] == len(frames)
    app = run.stats["app_stats"]
    assert app["hash"] == ("keyed" if hash_args else "nprobe")
    assert app["non_ip_packets"] == 1 and app["malformed_packets"] == 1

    expected = python_flow_count(frames)
    got = dump_by_key(run.flows)
    assert len(expected) == len(flows) + 1  # the flows meant ("collide" is two)
    assert set(got) == set(expected)
    for key, e in expected.items():
        g = got[key]
        for field in ("packets", "bytes", "packets_src_to_dst", "packets_dst_to_src",
                      "bytes_src_to_dst", "bytes_dst_to_src", "tcp_flags"):
            assert g[field] == e[field], f"{key}: {field} {g[field]} != {e[field]}"
        assert g["first_seen_tsc"] <= g["last_seen_tsc"]
    assert app["flows_created"] == len(expected) == app["flows_active"]
    assert app["lookups"] == sum(e["packets"] for e in expected.values())

    # TCP states, named per flow by how its conversation was written.
    for name, (pkts, state) in flows.items():
        k = flow_key_of(pkts[0])
        assert k is not None
        assert got[k]["state"] == state, f"{name}: {got[k]['state']} != {state}"

    if not hash_args:
        # The two nProbe-colliding flows share a bucket: one chain of >= 2.
        assert app["longest_chain"] >= 2


def test_flow_records_that_cannot_be_written_are_kept_in_a_file_of_their_own(
        build_dir: Path, tmp_path: Path, file_prefix: str,
        known_capture: tuple[Path, list[bytes], dict[str, Any]]) -> None:
    # --dump-flows is checked at set-up and written at the end; /dev/full passes the check and fails
    # the write (a disk that filled during the run): the measured records go to $TMPDIR, named,
    # and the exit status is 1 (the dump is not where it was asked for), the statistics written
    import json
    import os
    import re

    from harness import run_app as harness_run_app
    from harness import placement as harness_placement

    pcap, frames, flows = known_capture
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    run = harness_run_app(app_binary(build_dir), file_prefix, tmp_path, [f"net_pcap0,rx_pcap={pcap}", "net_null0"],
                          harness_placement("stateful", 1), ["--dump-flows", "/dev/full"], duration=1.5,
                          stats=tmp_path / "stats.json", env=dict(os.environ, TMPDIR=str(tmpdir)))
    assert run.returncode == 1, run.stderr[-3000:]
    assert run.stats is not None and run.stats["accounting_ok"] is True
    assert not sanitizer_reports(run.stderr)
    m = re.search(r"--dump-flows '/dev/full': cannot write: No space left on device; the (\d+) flow records "
                  r"are in (\S+)", run.stderr)
    assert m, run.stderr[-3000:]
    kept = Path(m.group(2))
    assert kept.parent == tmpdir
    records = json.loads(kept.read_text())["flows"]
    assert len(records) == int(m.group(1)) == run.stats["app_stats"]["flows_created"] > 0


def test_an_earlier_flow_dump_is_kept_until_the_run_writes_its_own(
        build_dir: Path, tmp_path: Path, file_prefix: str) -> None:
    # the path is checked at set-up without truncating it: a run whose set-up fails after that
    # check (here: its IPFIX file cannot be created) leaves the dump of an earlier run as it was
    dump = tmp_path / "flows.json"
    dump.write_text('{"flows": []}\n')
    cmd = [str(app_binary(build_dir)), "--no-pci", "--no-huge", "-m", "64", f"--file-prefix={file_prefix}",
           "--vdev=net_null0", "--vdev=net_null1", "--", "--placement", str(placement(tmp_path)),
           "--duration", "0.2", "--dump-flows", str(dump), "--ipfix-file", str(tmp_path / "no" / "x.ipfix")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "x.ipfix" in proc.stderr, proc.stderr[-2000:]
    assert dump.read_text() == '{"flows": []}\n'


def test_table_full_is_counted_and_packets_still_forwarded(
        build_dir: Path, tmp_path: Path, file_prefix: str,
        known_capture: tuple[Path, list[bytes], dict[str, Any]]) -> None:
    pcap, frames, flows = known_capture
    run = run_app(build_dir, tmp_path, file_prefix, pcap, ["--max-flows", "3"])
    assert run.returncode == 0, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr)
    app = run.stats["app_stats"]
    total = run.stats["total"]
    assert app["table_capacity"] == 3
    assert app["flows_created"] == 3 == len(run.flows)
    assert app["flows_dropped_table_full"] > 0
    # untracked packets: one per lookup that found neither its flow nor room
    assert app["lookup_hits"] + app["flows_created"] + app["flows_dropped_table_full"] == app["lookups"]
    assert total["tx_packets"] == total["rx_packets"] == len(frames)
    assert total["dropped_packets"] == 0 and run.stats["accounting_ok"] is True


@pytest.mark.parametrize("args,named", [
    (["--hash", "murmur"], "murmur"),
    (["--hash", "keyed", "--hash-key", "abc"], "abc"),
    (["--hash-key", "00" * 16], "--hash-key"),
    (["--idle-timeout", "-1"], "-1"),
    (["--idle-timeout", "soon"], "soon"),
    (["--max-flows", "0"], "0"),
    (["--dump-flows", "/nonexistent-dir/flows.json"], "/nonexistent-dir/flows.json"),
])
def test_bad_values_are_refused_by_name(build_dir: Path, tmp_path: Path, file_prefix: str,
                                        args: list[str], named: str) -> None:
    cmd = [str(app_binary(build_dir)), "--no-pci", "--no-huge", "-m", "64",
           f"--file-prefix={file_prefix}", "--vdev=net_null0", "--vdev=net_null1", "--",
           "--placement", str(placement(tmp_path)), "--duration", "0.2", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert named in proc.stderr, proc.stderr[-2000:]
