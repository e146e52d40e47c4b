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
