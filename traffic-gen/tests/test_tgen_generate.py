"""pp-tgen transmit side: paced rate accuracy, % of link, several TX queues
and cores, and the bytes of template packets (checked in a tx_pcap capture)."""
from __future__ import annotations

import json
import struct
import subprocess
from collections import Counter
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from harness import read_pcap
from tgen_harness import run_tgen, sanitizer_env, tgen_binary

SIG = struct.Struct("<IHIQ")  # magic, stream, seq, tsc: see traffic-gen/tg_signature.h
MAGIC = 0x67745050


frames = read_pcap


def test_rate_100kpps_within_1pct(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"],
                 ["--rate", "100k", "--duration", "2", "--live"])
    r.assert_clean()
    tx = r.stats["tx"]
    assert r.stats["kind"] == "measured" and tx["kind"] == "measured"
    assert abs(tx["packets"] - 200_000) <= 2_000, tx
    assert abs(tx["pps"] - 100_000) <= 1_000, tx
    assert 1.99 <= r.stats["duration_s"] <= 2.01
    assert tx["link_full"] == 0 and tx["alloc_fail"] == 0
    assert r.stats["streams"][0]["asked_pps"] == 100_000
    live = [l for l in r.stderr.splitlines() if l.startswith("[measured]")]
    assert len(live) >= 1, r.stderr


def test_rate_split_over_queues_and_cores(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """Two TX queues on two worker lcores (lcores 1 and 2 share CPU 1 here)."""
    stats = tmp_path / "s.json"
    cmd = [str(tgen_binary(build_dir)), "--lcores", "0@0,1@1,2@1", "--no-pci", "--file-prefix",
           file_prefix, "--log-level", "lib.eal:warning", "--vdev", "net_null0", "--",
           "--rate", "60k", "--tx-queues", "2", "--duration", "1", "--stats", str(stats)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=sanitizer_env())
    assert p.returncode == 0, p.stderr
    s = json.loads(stats.read_text())
    assert abs(s["tx"]["packets"] - 60_000) <= 600, s["tx"]
    per_queue = sorted(st["queue"] for st in s["streams"])
    assert per_queue == [0, 1]
    for st in s["streams"]:
        assert abs(st["tx_packets"] - 30_000) <= 300, st
        assert st["asked_pps"] == 30_000


def test_rate_percent_of_link_counts_preamble_and_gap(build_dir: Path, file_prefix: str,
                                                      tmp_path: Path) -> None:
    # 1% of 1 Gb/s at 64-byte frames: 1e7 / ((64 + 20) * 8) = 14880.95 pps
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"],
                 ["--rate", "1%", "--link-gbps", "1", "--duration", "1"])
    r.assert_clean()
    want = 1e7 / (84 * 8)
    assert abs(r.stats["config"]["streams"][0]["rate_pps"] - want) < 0.01
    assert abs(r.stats["tx"]["packets"] - want) <= want * 0.01
    assert abs(r.stats["tx"]["link_util_pct"] - 1.0) < 0.01


def test_udp_template_fields_imix_payload(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    out = tmp_path / "out.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--packets", "120", "--size", "imix", "--src-ip", "10.0.0.1-10.0.0.5",
                  "--sport", "1000-1001", "--dport", "53", "--ttl", "9",
                  "--dst-mac", "02:aa:00:00:00:01", "--payload", "/bin/sh\\x00\\x90", "--fill", "65"])
    r.assert_clean()
    pk = frames(out)
    assert len(pk) == 120 and r.stats["tx"]["packets"] == 120
    # IMIX 7:4:1, frame sizes counting the FCS the capture does not hold
    assert Counter(len(p) + 4 for p in pk) == {64: 70, 570: 40, 1518: 10}
    for i, raw in enumerate(pk):
        e = Ether(raw)
        assert e.dst == "02:aa:00:00:00:01"
        ip, udp = e[IP], e[UDP]
        assert ip.src == f"10.0.0.{i % 5 + 1}" and ip.ttl == 9 and ip.proto == 17
        assert udp.sport == 1000 + i % 2 and udp.dport == 53
        assert ip.len == len(raw) - 14 and udp.len == len(raw) - 34
        check = IP(bytes(ip))
        del check.chksum
        assert IP(bytes(check)).chksum == ip.chksum, f"packet {i}: bad IP checksum"
        magic, stream, seq, tsc = SIG.unpack_from(raw, 42)
        assert (magic, stream, seq) == (MAGIC, 0, i) and tsc > 0
        payload = raw[60:]
        assert payload.startswith(b"/bin/sh\x00\x90"[:len(payload)])
        assert set(payload[9:]) <= {65}


def ip_checksum_ok(hdr: bytes) -> bool:
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def test_reused_buffers_leave_as_the_template_says(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """pp-tgen takes its buffers raw from the pool and sets only what a port
    may have changed (tg_tx.c fill): with a small pool every buffer goes
    out some 30 times, and every frame must still have its size from the
    IMIX pattern, right lengths and checksum, and its own sequence number."""
    out = tmp_path / "reuse.pcap"
    n = 30_000
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--packets", str(n), "--mbufs", "1023", "--size", "imix", "--src-ip", "10.0.0.1-10.0.0.7",
                  "--dst-mac", "02:aa:00:00:00:01", "--fill", "65"])
    r.assert_clean()
    pk = frames(out)
    assert len(pk) == n and r.stats["tx"]["packets"] == n
    sizes = Counter()
    for i, raw in enumerate(pk):
        sizes[len(raw) + 4] += 1
        assert raw[:6] == bytes.fromhex("02aa00000001") and raw[12:14] == b"\x08\x00", f"frame {i}"
        ip = raw[14:34]
        assert struct.unpack_from("!H", ip, 2)[0] == len(raw) - 14, f"frame {i}: IP total length"
        assert ip[12:16] == bytes([10, 0, 0, i % 7 + 1]) and ip_checksum_ok(ip), f"frame {i}: IP header"
        assert struct.unpack_from("!H", raw, 38)[0] == len(raw) - 34, f"frame {i}: UDP length"
        magic, stream, seq, tsc = SIG.unpack_from(raw, 42)
        assert (magic, stream, seq) == (MAGIC, 0, i) and tsc > 0, f"frame {i}: signature"
        assert set(raw[60:]) <= {65}, f"frame {i}: payload"
    assert sizes == {64: n * 7 // 12, 570: n * 4 // 12, 1518: n // 12}


def test_tcp_checksum_and_flows(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    out = tmp_path / "tcp.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--packets", "30", "--proto", "tcp", "--size", "128", "--flows", "3",
                  "--src-ip", "10.9.0.0-10.9.255.255/random", "--dport", "random"])
    r.assert_clean()
    pk = [Ether(p) for p in frames(out)]
    assert len(pk) == 30
    tuples = [(p[IP].src, p[TCP].dport) for p in pk]
    assert len(set(tuples)) <= 3 and tuples[:3] * 10 == tuples  # three flows, cycled
    for p in pk:
        t = p[TCP]
        assert t.flags == "A" and p[IP].src.startswith("10.9.")
        want = t.chksum
        del t.chksum
        assert Ether(bytes(p))[TCP].chksum == want, "bad TCP checksum"


def test_ring_loopback_counts_everything(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_ring0"],
                 ["--rx-port", "0", "--rate", "50k", "--duration", "1", "--size", "imix"])
    r.assert_clean()
    tx, rx = r.stats["tx"], r.stats["rx"]
    assert abs(tx["packets"] - 50_000) <= 500
    assert rx["packets"] == rx["unique_packets"] == tx["packets"]
    assert rx["bytes"] == tx["bytes"]
    assert rx["lost"] == rx["duplicates"] == rx["reordered"] == rx["foreign_packets"] == 0
    lat = rx["latency_ns"]
    assert lat["samples"] == rx["packets"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]


def test_unwritable_stats_file_keeps_the_figures(build_dir: Path, file_prefix: str,
                                                 tmp_path: Path) -> None:
    """A path refused up front is refused before sending (test_tgen_profiles); /dev/full
    passes that check and fails every write, as a disk that fills during the run."""
    bad = Path("/dev/full")
    assert bad.is_char_device(), "this test needs the /dev/full device"
    cmd = [str(tgen_binary(build_dir)), "-l", "0,1", "--no-pci", "--file-prefix", file_prefix,
           "--log-level", "lib.eal:warning", "--vdev", "net_null0", "--", "--packets", "7",
           "--stats", str(bad)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=sanitizer_env())
    assert p.returncode == 1 and str(bad) in p.stderr
    out = json.loads(p.stdout[p.stdout.index("{"):])
    assert out["tx"]["packets"] == 7 and out["kind"] == "measured"
    assert bad.is_char_device() and not Path("/dev/full.tmp").exists()  # written through, not replaced


def test_stats_to_a_link_is_written_through(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    link = tmp_path / "stats.json"
    link.symlink_to(target)
    cmd = [str(tgen_binary(build_dir)), "-l", "0,1", "--no-pci", "--file-prefix", file_prefix,
           "--log-level", "lib.eal:warning", "--vdev", "net_null0", "--", "--packets", "7",
           "--stats", str(link)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=sanitizer_env())
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and json.loads(target.read_text())["tx"]["packets"] == 7


def test_two_queue_loop_merges_receive_queues(build_dir: Path, file_prefix: str,
                                              tmp_path: Path) -> None:
    """net_ring loops TX queue k to RX queue k: two TX jobs and two RX jobs,
    each stream counted on its own queue, merged in the report."""
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_ring0"],
                 ["--rx-port", "0", "--tx-queues", "2", "--rx-queues", "2", "--rate", "40k",
                  "--duration", "1"])
    r.assert_clean()
    st = {s["queue"]: s for s in r.stats["streams"]}
    assert set(st) == {0, 1}
    for s in st.values():
        assert abs(s["tx_packets"] - 20_000) <= 200
        assert s["rx_packets"] == s["unique"] == s["tx_packets"] and s["lost"] == 0
    assert r.stats["rx"]["packets"] == r.stats["tx"]["packets"]
