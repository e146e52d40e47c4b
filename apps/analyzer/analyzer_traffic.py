#!/usr/bin/env python3
"""Default traffic for analyzer: the header mix of a campus uplink, so every
decoder path runs: Ethernet with 802.1Q tags on a share of frames (15%),
IPv4 (75%) and IPv6 (25%), TCP (80%), UDP (17%: DNS, QUIC on 443, NTP, ...)
and ICMP/ICMPv6 echo (3%), the simple IMIX sizes (64/594/1514, 7:4:1), the
service ports such a link carries, over many hosts.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import pcapgen  # noqa: E402

V6_PREFIX = bytes.fromhex("2001067c12340000")
TCP_PORTS = np.array([443, 80, 22, 993, 445, 3389, 8080, 25])
UDP_PORTS = np.array([53, 443, 123, 67, 5353, 1900, 500, 4500])


def generate(out: Path, n: int, seed: int, vlan_share: float, v6_share: float) -> int:
    rng = np.random.default_rng(seed)
    sizes = pcapgen.imix_sizes(rng, n)
    kind = rng.choice(3, size=n, p=[0.80, 0.17, 0.03])
    v6 = rng.random(n) < v6_share
    tagged = rng.random(n) < vlan_share
    frames = []
    for i in range(n):
        proto = (pcapgen.PROTO_TCP, pcapgen.PROTO_UDP, pcapgen.PROTO_ICMP)[kind[i]]
        host, server = int(rng.integers(1, 4096)), int(rng.integers(1, 256))
        if v6[i]:
            src, dst = pcapgen.ipv6(V6_PREFIX, host), pcapgen.ipv6(bytes.fromhex("2a00145040010800"), server)
        else:
            src, dst = pcapgen.ipv4(0x8D000000 + host), pcapgen.ipv4(0x5DB80000 + server)
        ports = TCP_PORTS if proto == pcapgen.PROTO_TCP else UDP_PORTS
        dport = int(ports[rng.integers(len(ports))]) if proto != pcapgen.PROTO_ICMP else 0
        sport = int(rng.integers(32768, 61000)) if proto != pcapgen.PROTO_ICMP else 0
        flow = pcapgen.Flow(src, dst, proto, sport, dport, int(rng.integers(2, 400)) if tagged[i] else None)
        size = int(sizes[i]) if proto != pcapgen.PROTO_ICMP else 98
        frames.append(pcapgen.frame(flow, tcp_flags=pcapgen.TCP_ACK | pcapgen.TCP_PSH, seq=i, ident=i,
                                    ttl=int(rng.choice([64, 128, 255, 57])), frame_len=size))
    return pcapgen.write_pcap(out, frames)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", type=Path, help="pcap file to write")
    ap.add_argument("--packets", type=int, default=16384, help="packets in the capture (16384)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vlan-share", type=float, default=0.15, help="fraction of 802.1Q-tagged frames (0.15)")
    ap.add_argument("--ipv6-share", type=float, default=0.25, help="fraction of IPv6 packets (0.25)")
    a = ap.parse_args(argv)
    if a.packets < 1:
        ap.error(f"--packets {a.packets}: expected at least 1")
    for flag, v in (("--vlan-share", a.vlan_share), ("--ipv6-share", a.ipv6_share)):
        if not 0.0 <= v <= 1.0:
            ap.error(f"{flag} {v}: expected a fraction 0..1")
    generate(a.output, a.packets, a.seed, a.vlan_share, a.ipv6_share)
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "analyzer_traffic.py"))
