"""Reviewed disagreements between the analyzer's decoder and tshark 4.0,
as rules on a property of the packet, never on a capture's name.  Each rule
says which packets it covers (a predicate on the frame's bytes and the
decoder's record), which sets of fields may then differ, and why.  The
agreement test fails on any disagreement no rule explains, and on a rule
that explains none (the test builds a frame for each rule, so that holds
whatever captures are around).  Fields: mac, vlan, l3, ttl, addr, l4_proto,
ports (outer or only headers); tunnel, tunnel_id, inner_mac, inner_vlan,
inner_l3, inner_ttl, inner_addr, inner_l4_proto, inner_ports."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


def outer_ipv6_payload_length_zero(frame: bytes, ours: dict[str, str]) -> bool:
    """The outer IPv6 header's payload length is 0 (no jumbo option)."""
    if ours["l3"] != "ipv6" or ours["ethertype"] != "0x86dd":
        return False
    l3 = 14 + 4 * (len(ours["vlan"].split(".")) if ours["vlan"] else 0)
    return len(frame) >= l3 + 6 and frame[l3 + 4:l3 + 6] == b"\0\0"


def outer_ipv4_udp_length_zero(frame: bytes, ours: dict[str, str]) -> bool:
    """The outer header is IPv4 carrying UDP whose length field is 0."""
    if ours["l3"] != "ipv4" or ours["ethertype"] != "0x0800" or ours["l4_proto"] != "17":
        return False
    l3 = 14 + 4 * (len(ours["vlan"].split(".")) if ours["vlan"] else 0)
    l4 = l3 + 4 * (frame[l3] & 0x0F)
    return len(frame) >= l4 + 6 and frame[l4 + 4:l4 + 6] == b"\0\0"


def _ip_payload(frame: bytes, at: int) -> tuple[int | None, int, int]:
    """The IPv4 or IPv6 header at `at`: (its protocol or last next header,
    where its payload starts, where it ends: its length field, or the
    captured bytes when the field is 0 or runs past them); protocol None
    when no complete header is there."""
    if len(frame) - at < 1:
        return None, at, at
    if frame[at] >> 4 == 4 and len(frame) - at >= 20 and (ihl := 4 * (frame[at] & 0x0F)) >= 20:
        tot = int.from_bytes(frame[at + 2:at + 4], "big")
        end = at + tot if 0 < tot and at + tot <= len(frame) else len(frame)
        return frame[at + 9], min(at + ihl, end), end
    if frame[at] >> 4 == 6 and len(frame) - at >= 40:
        plen = int.from_bytes(frame[at + 4:at + 6], "big")
        end = at + 40 + plen if 0 < plen and at + 40 + plen <= len(frame) else len(frame)
        return frame[at + 6], at + 40, end  # no extension header: an IP-in-IP chain here has none
    return None, at, at


def ip_in_ip_without_its_ip_header(frame: bytes, ours: dict[str, str]) -> bool:
    """Only IP-in-IP tunnels (IPv4 protocol / IPv6 next header 4 or 41),
    the last of which holds no byte, or bytes whose version nibble is not
    the version it declares (4: IPv4, 41: IPv6)."""
    chain = ours["tunnel"].split(".") if ours["tunnel"] else []
    if not chain or set(chain) != {"ipip"} or ours["ethertype"] not in ("0x0800", "0x86dd"):
        return False
    at = 14 + 4 * (len(ours["vlan"].split(".")) if ours["vlan"] else 0)
    for depth in range(len(chain)):
        proto, start, end = _ip_payload(frame, at)
        if proto not in (4, 41):
            return False
        if depth == len(chain) - 1:
            return start >= end or frame[start] >> 4 != (4 if proto == 4 else 6)
        at = start
    return False


def ipv4_declared_not_version_4(frame: bytes, ours: dict[str, str]) -> bool:
    """A header that an EtherType or a tunnel's protocol type declares IPv4
    (0x0800) whose version nibble is not 4: the frame's own (its bytes
    after the Ethernet header and its tags), or the innermost one of a
    tunnel other than IP in IP (which ip_in_ip_without_its_ip_header
    covers), which the decoder reports with status ipv4_bad_version."""
    if ours["ethertype"] == "0x0800":
        l3 = 14 + 4 * (len(ours["vlan"].split(".")) if ours["vlan"] else 0)
        if len(frame) > l3 and frame[l3] >> 4 != 4:
            return True
    chain = ours["tunnel"].split(".") if ours["tunnel"] else []
    return (bool(chain) and chain[-1] != "ipip" and ours["inner_l3"] == "ipv4"
            and ours["inner_status"] == "ipv4_bad_version")


@dataclass(frozen=True)
class Rule:
    name: str
    applies: Callable[[bytes, dict[str, str]], bool]
    diffs: tuple[frozenset[str], ...]  # the sets of differing fields allowed
    reason: str


RULES: list[Rule] = [
    Rule("big_tcp_ipv6", outer_ipv6_payload_length_zero,
         (frozenset({"ports"}), frozenset({"ports", "tunnel"})),
         "IPv6 payload length 0 with no jumbo option (Linux BIG TCP / TSO "
         "capture): tshark gives its TCP/UDP dissector a zero-length payload "
         "and reports 'Malformed Packet' with no ports, and so no tunnel in "
         "it; the analyzer, like tcpdump, takes the L4 header (and a tunnel "
         "header after UDP) from the captured bytes"),
    Rule("big_tcp_udp_length_zero", outer_ipv4_udp_length_zero,
         (frozenset({"tunnel"}),),
         "UDP length 0 (a BIG TCP / GSO super-packet over 64 KiB in a UDP "
         "tunnel, whose length does not fit the field): tshark reports 'Bad "
         "length value 0 < 8' and dissects nothing after UDP; the analyzer "
         "takes the tunnel and the inner headers from the captured bytes, as "
         "it does for IPv4 total length 0"),
    Rule("ipv4_total_length_below_header",
         lambda frame, ours: ours["status"] == "ipv4_bad_total_length",
         (frozenset({"ttl", "addr", "l4_proto"}),),
         "IPv4 total length below the 20-byte header: tshark stops "
         "dissecting at the length field (no TTL, addresses, protocol); the "
         "analyzer reports the complete header's TTL, addresses and protocol "
         "with status ipv4_bad_total_length and no ports"),
    Rule("ip_in_ip_without_its_ip_header", ip_in_ip_without_its_ip_header,
         (frozenset({"tunnel"}),),
         "IP in IP (protocol 4 or 41) whose payload is empty or does not begin "
         "with the IP version the protocol field declares: tshark adds no "
         "layer for an empty payload, shows 'data' where an IPv6 header is "
         "declared and the version nibble is not 6, and follows the nibble "
         "where IPv4 is declared; the analyzer names the tunnel the header "
         "declares (tunnel ipip) and reports what it found there as the "
         "inner header's status (ipv6_bad_version, ipv4_truncated, ...), so "
         "that a malformed tunnel still shows as one"),
    Rule("ipv4_declared_not_version_4", ipv4_declared_not_version_4,
         (frozenset({"tunnel"}),),
         "EtherType (or GRE/Geneve protocol type) IPv4 over a version nibble "
         "that is not 4: tshark flags 'Bogus IPv4 version' and, for version "
         "6, dissects the bytes as IPv6, so its layers read as IPv6 in IPv4 "
         "(tunnel ipip and what follows); the analyzer, like tcpdump ('IP6, "
         "wrong link-layer encapsulation') and a receiving host, takes the "
         "type field at its word: an IPv4 header with status "
         "ipv4_bad_version (ipv4_truncated when fewer than 20 bytes follow), "
         "no tunnel, nothing decoded behind it"),
]
