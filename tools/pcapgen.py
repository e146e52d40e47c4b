"""Frame building for the apps' default traffic generators
(apps/<app>/<app>_traffic.py): Ethernet (optionally 802.1Q), IPv4 or IPv6,
TCP, UDP, ICMP/ICMPv6, with correct IPv4 header and L4 checksums, written
through the project's one pcap writer (tools/pcapfile.py).

Plain struct and numpy: tens of thousands of frames a second, so the
assign dpdk backend can make its captures on first use and cache them.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from pcapfile import count_records, write_pcap  # noqa: F401 (the generators write through pcapgen)

ETH_IPV4, ETH_IPV6, ETH_VLAN = 0x0800, 0x86DD, 0x8100
PROTO_ICMP, PROTO_TCP, PROTO_UDP, PROTO_ICMPV6 = 1, 6, 17, 58
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10
# Simple IMIX (frame bytes without FCS, weights 7:4:1): the size mix of a
# typical Internet link that traffic generators default to.
IMIX = ((64, 7), (594, 4), (1514, 1))


def checksum(data: bytes) -> int:
    """RFC 1071 Internet checksum."""
    if len(data) % 2:
        data += b"\0"
    s = int(np.frombuffer(data, dtype=">u2").sum(dtype=np.uint64))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


@dataclass(frozen=True)
class Flow:
    """One direction of a conversation: addresses are 4 (IPv4) or 16 (IPv6) bytes."""

    src: bytes
    dst: bytes
    proto: int
    sport: int = 0
    dport: int = 0
    vlan: int | None = None

    @property
    def v6(self) -> bool:
        return len(self.src) == 16


def frame(flow: Flow, payload: bytes = b"", tcp_flags: int = TCP_ACK, seq: int = 0, ack: int = 0,
          ttl: int = 64, ident: int = 0, frame_len: int | None = None) -> bytes:
    """An Ethernet frame of flow carrying payload; frame_len pads the payload
    (zero bytes) up to that many bytes on the wire without FCS."""
    if flow.proto == PROTO_TCP:
        l4_hdr_len = 20
    elif flow.proto == PROTO_UDP:
        l4_hdr_len = 8
    else:
        l4_hdr_len = 8  # ICMP echo
    l2_len = 14 + (4 if flow.vlan is not None else 0)
    l3_len = 40 if flow.v6 else 20
    if frame_len is not None:
        room = frame_len - l2_len - l3_len - l4_hdr_len
        payload = payload[:max(room, 0)] + bytes(max(room - len(payload), 0))
    l4_len = l4_hdr_len + len(payload)
    proto = PROTO_ICMPV6 if (flow.v6 and flow.proto == PROTO_ICMP) else flow.proto
    if flow.proto == PROTO_TCP:
        l4 = struct.pack(">HHIIBBHHH", flow.sport, flow.dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                         5 << 4, tcp_flags, 65535, 0, 0) + payload
    elif flow.proto == PROTO_UDP:
        l4 = struct.pack(">HHHH", flow.sport, flow.dport, l4_len, 0) + payload
    else:
        typ = 128 if flow.v6 else 8  # echo request
        l4 = struct.pack(">BBHHH", typ, 0, 0, ident & 0xFFFF, seq & 0xFFFF) + payload
    if flow.v6:
        pseudo = flow.src + flow.dst + struct.pack(">IxxxB", l4_len, proto)
    else:
        pseudo = flow.src + flow.dst + struct.pack(">xBH", proto, l4_len)
    csum_off = {PROTO_TCP: 16, PROTO_UDP: 6}.get(flow.proto, 2)
    cs = checksum((pseudo if (flow.proto != PROTO_ICMP or flow.v6) else b"") + l4)
    if flow.proto == PROTO_UDP and cs == 0:
        cs = 0xFFFF
    l4 = l4[:csum_off] + struct.pack(">H", cs) + l4[csum_off + 2:]
    if flow.v6:
        l3 = struct.pack(">IHBB", 0x60000000, l4_len, proto, ttl) + flow.src + flow.dst
        ethertype = ETH_IPV6
    else:
        hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + l4_len, ident & 0xFFFF, 0x4000, ttl, proto, 0,
                          flow.src, flow.dst)
        l3 = hdr[:10] + struct.pack(">H", checksum(hdr)) + hdr[12:]
        ethertype = ETH_IPV4
    macs = bytes.fromhex("020000000001" "020000000002")
    if flow.vlan is not None:
        l2 = macs + struct.pack(">HHH", ETH_VLAN, flow.vlan & 0x0FFF, ethertype)
    else:
        l2 = macs + struct.pack(">H", ethertype)
    return l2 + l3 + l4


def imix_sizes(rng: np.random.Generator, n: int, mix: Iterable[tuple[int, int]] = IMIX) -> np.ndarray:
    sizes, weights = zip(*mix)
    p = np.asarray(weights, dtype=float)
    return rng.choice(np.asarray(sizes), size=n, p=p / p.sum())


def ipv4(a: int) -> bytes:
    return struct.pack(">I", a & 0xFFFFFFFF)


def ipv6(prefix: bytes, host: int) -> bytes:
    """An address in an 8-byte prefix with a 64-bit host part."""
    return prefix[:8] + struct.pack(">Q", host & 0xFFFFFFFFFFFFFFFF)
