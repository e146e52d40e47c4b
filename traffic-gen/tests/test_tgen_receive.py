"""pp-tgen receive side: sequence accounting against a crafted capture with
known drops, swaps and duplicates; latency through a delay line of known
delay (a second process over net_memif)."""
from __future__ import annotations

import struct
import time
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from tgen_harness import finish, memif_socket, memif_vdev, run_tgen, start_tgen, wait_written

SIG = struct.Struct("<IHIQ")  # traffic-gen/tg_signature.h
MAGIC = 0x67745050


def signed(stream: int, seq: int, tsc: int = 0, size: int = 80) -> Ether:
    sig = SIG.pack(MAGIC, stream, seq, tsc)
    pad = bytes(size - 42 - len(sig))
    return Ether() / IP(src="10.0.0.1", dst="10.1.0.1") / UDP(sport=1, dport=2) / Raw(sig + pad)


def test_sink_counts_loss_reordering_duplicates(build_dir: Path, file_prefix: str,
                                                tmp_path: Path) -> None:
    # stream 0: 7 lost, 3/4 swapped, 5 twice; stream 1 clean; stream 2: 1 lost,
    # 3 arrives after 4 and 5 (late by two); three foreign packets.
    plan = {0: [0, 1, 2, 4, 3, 5, 5, 6, 8, 9], 1: list(range(10)), 2: [0, 2, 4, 5, 3]}
    pkts = []
    for k in range(10):
        for s, seqs in plan.items():
            if k < len(seqs):
                pkts.append(signed(s, seqs[k]))
    pkts += [Ether() / ARP(), Ether() / IP() / UDP() / Raw(b"x" * 30),
             Ether() / IP() / UDP() / Raw(b"PPtX" + bytes(40))]
    cap = tmp_path / "crafted.pcap"
    wrpcap(str(cap), pkts)
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,rx_pcap={cap}"],
                 ["--tx-port", "none", "--rx-port", "0", "--duration", "1"])
    r.assert_clean()
    rx = r.stats["rx"]
    st = {s["id"]: s for s in r.stats["streams"]}
    assert rx["packets"] == len(pkts) and rx["foreign_packets"] == 3
    assert rx["no_timestamp"] == len(pkts) - 3  # tsc 0: no latency sample
    assert rx["latency_ns"]["samples"] == 0
    assert (st[0]["lost"], st[0]["reordered"], st[0]["duplicates"], st[0]["unique"]) == (1, 1, 1, 9)
    assert (st[1]["lost"], st[1]["reordered"], st[1]["duplicates"], st[1]["unique"]) == (0, 0, 0, 10)
    assert (st[2]["lost"], st[2]["reordered"], st[2]["duplicates"], st[2]["unique"]) == (1, 1, 0, 5)
    assert all(s["expected_from"] == "highest sequence + 1" for s in st.values())
    assert rx["lost"] == 2 and rx["duplicates"] == 1 and rx["reordered"] == 2


def test_latency_through_known_delay(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """The delay line holds every packet 20 ms, so no latency can be below
    20 ms; above it only the two processes' polling and this shared box's
    scheduling add (bounded loosely: the test machine runs other work)."""
    sock = memif_socket()
    gen_stats, dl_stats = tmp_path / "gen.json", tmp_path / "delay.json"
    gen = start_tgen(build_dir, file_prefix + "g", [memif_vdev(sock, "server", 13)],
                     ["--tx-port", "0", "--rx-port", "0", "--rate", "5k", "--duration", "1",
                      "--drain", "0.5", "--start-after", "0.5", "--peer-wait", "30", "--link-wait", "120"],
                     gen_stats)
    try:
        end = time.monotonic() + 120  # EAL start of an ASan build on a loaded box
        while not sock.exists():
            assert time.monotonic() < end, f"memif socket {sock} did not appear"
            time.sleep(0.05)
        # The delay line runs until the generator is done (it drains until
        # nothing more comes back), then is stopped; the generator, idle,
        # leaves once the delay line has.
        dl = start_tgen(build_dir, file_prefix + "d", [memif_vdev(sock, "client", 13)],
                        ["--mode", "delay", "--rx-port", "0", "--delay-us", "20000"], dl_stats)
        wait_written(gen_stats, gen)
        dl.terminate()
        g = finish(gen, gen_stats)
        d = finish(dl, dl_stats)
    finally:
        sock.unlink(missing_ok=True)
    g.assert_clean()
    d.assert_clean()
    tx, rx = g.stats["tx"], g.stats["rx"]
    assert tx["link_full"] == 0, tx
    assert d.stats["accounting_ok"] is True, d.stats
    assert tx["packets"] == d.stats["rx_packets"] == d.stats["tx_packets"] == rx["packets"], \
        (tx, d.stats, rx)
    assert rx["lost"] == 0 and rx["reordered"] == 0 and rx["duplicates"] == 0
    lat = rx["latency_ns"]
    assert lat["samples"] == rx["packets"] > 4000
    assert lat["min"] >= 20e6, lat
    assert 20e6 <= lat["p50"] <= 20e6 + 80e6, lat


def test_sink_decodes_tagged_and_ipv6_frames_and_counts_bad_ones_by_reason(
        build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """Signed frames behind 802.1Q, QinQ and in IPv6 (with extension
    headers) are counted against their streams; every malformed frame is
    dropped and counted by its reason, none crashes the sink (ASan build)."""
    from scapy.layers.inet import TCP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting
    from scapy.layers.l2 import Dot1AD, Dot1Q

    def sig(stream: int, seq: int) -> Raw:
        return Raw(SIG.pack(MAGIC, stream, seq, 0) + bytes(4))

    good = [Ether() / Dot1Q(vlan=10) / IP() / UDP() / sig(0, 0),
            Ether() / Dot1AD(vlan=20) / Dot1Q(vlan=10) / IP() / UDP() / sig(0, 1),
            Ether() / IPv6() / UDP() / sig(1, 0),
            Ether() / Dot1Q(vlan=4094) / IPv6() / TCP() / sig(1, 1),
            Ether() / IPv6() / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting() / IPv6ExtHdrFragment() / UDP()
            / sig(1, 2)]
    ext = bytes(Ether() / IPv6() / IPv6ExtHdrRouting() / UDP() / sig(2, 0))
    bad = {"vlan_no_payload": [bytes(Ether() / Dot1Q(vlan=5, type=0x0800)),
                               bytes(Ether() / Dot1AD(vlan=5) / Dot1Q(vlan=6, type=0x86dd))],
           "truncated_l3": [bytes(Ether() / Dot1Q(vlan=5) / IPv6())[:14 + 4 + 30]],
           "ipv6_ext_truncated": [ext[:14 + 40 + 4]],
           "bad_ip_header": [bytes(Ether(type=0x86dd) / IP() / UDP() / sig(3, 0))],
           "no_l4": [bytes(Ether() / IPv6() / IPv6ExtHdrFragment(offset=10) / UDP() / sig(3, 1)),
                     bytes(Ether() / IP(frag=5) / UDP() / sig(3, 2))],
           "truncated_l4": [bytes(Ether() / IPv6(nh=6) / Raw(bytes(10)))],
           "not_ip": [bytes(Ether() / ARP())],
           "no_signature": [bytes(Ether() / Dot1Q() / IPv6() / UDP() / Raw(b"x" * 30))]}
    frames = [bytes(p) for p in good] + [f for v in bad.values() for f in v]
    cap = tmp_path / "tagged.pcap"
    wrpcap(str(cap), [Ether(f) for f in frames])
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,rx_pcap={cap}"],
                 ["--tx-port", "none", "--rx-port", "0", "--duration", "1"])
    r.assert_clean()
    rx = r.stats["rx"]
    st = {s["id"]: s for s in r.stats["streams"]}
    assert rx["packets"] == len(frames)
    assert (st[0]["unique"], st[0]["lost"], st[1]["unique"], st[1]["lost"]) == (2, 0, 3, 0)
    assert rx["foreign_packets"] == sum(len(v) for v in bad.values())
    want = {k: len(v) for k, v in bad.items()}
    assert {k: v for k, v in rx["foreign_by_reason"].items() if v} == want
