"""Frames of a class every app must account for, built here so that the
tests of every part hold whatever captures are shared.

wrong_ipv4_version_frames: EtherType 0x0800 (IPv4) but a version nibble that
is not 4 (0, 5, 6, 15), with an IPv4-shaped header behind it or a plausible
IPv6 header (version 6 and an IPv6 header: IPv6 sent with the wrong
EtherType, which tshark decodes as IPv6 after flagging "Bogus IPv4
version"), one behind an 802.1Q tag, one holding IPv4 in that IPv6 header,
and one cut 10 bytes into its header."""
from __future__ import annotations

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Packet, Raw

WRONG_VERSIONS = (0, 5, 6, 15)
_ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _v4_shaped() -> Packet:
    return IP(src="198.18.0.1", dst="198.18.0.2", ttl=64) / TCP(sport=1024, dport=80) / Raw(b"x" * 8)


def _v6_shaped(nh_payload: Packet | None = None) -> Packet:
    ip6 = IPv6(src="2001:db8::1", dst="2001:db8::2", hlim=9)
    return ip6 / (nh_payload if nh_payload is not None else UDP(sport=53, dport=5353) / Raw(b"q" * 8))


def with_version(l3: bytes, version: int) -> bytes:
    """l3 with its first nibble (the IP version) replaced."""
    return bytes([(version << 4) | (l3[0] & 0x0F)]) + l3[1:]


def ipv4_ethertype(l3: bytes, vlan: int | None = None) -> bytes:
    """l3 behind an Ethernet header (and an 802.1Q tag) whose type says IPv4."""
    if vlan is None:
        return bytes(_ETH)[:12] + b"\x08\x00" + l3
    return bytes(_ETH / Dot1Q(vlan=vlan, type=0x0800))[:18] + l3


def wrong_ipv4_version_frames() -> dict[str, bytes]:
    """name -> frame; every frame's EtherType (after any tag) is 0x0800 and
    its L3 version nibble is not 4."""
    v4 = bytes(_v4_shaped())
    v6 = bytes(_v6_shaped())
    f: dict[str, bytes] = {}
    for v in WRONG_VERSIONS:
        f[f"v{v}_ipv4_header"] = ipv4_ethertype(with_version(v4, v))
        f[f"v{v}_ipv6_header"] = ipv4_ethertype(with_version(v6, v))
    f["v6_ipv6_header_vlan"] = ipv4_ethertype(v6, vlan=7)
    f["v6_ipv6_header_ipv4_inside"] = ipv4_ethertype(bytes(_v6_shaped(_v4_shaped())))
    f["v6_ipv6_header_cut_at_10"] = ipv4_ethertype(v6[:10])
    return f


def l3_bytes(frame: bytes) -> int:
    """Bytes after the Ethernet header and its 802.1Q tags."""
    off = 14
    while frame[off - 2:off] in (b"\x81\x00", b"\x88\xa8") and len(frame) >= off + 4:
        off += 4
    return len(frame) - off
