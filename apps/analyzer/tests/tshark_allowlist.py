"""Reviewed disagreements between the analyzer's decoder and tshark 4.0 on
the shared tcpdump captures, keyed by (file, frame).  Each entry names the
fields that differ and why; the agreement test fails on any disagreement not
listed here and on any entry here that no longer disagrees (so the list
cannot go stale).  Fields: mac, vlan, l3, ttl, addr, l4_proto, ports."""
from __future__ import annotations

BIG_TCP_IPV6 = (
    "IPv6 payload length 0 with no jumbo option (Linux BIG TCP / TSO "
    "capture): tshark gives its TCP/UDP dissector a zero-length payload and "
    "reports 'Malformed Packet' with no ports; the analyzer, like tcpdump, "
    "takes the L4 header from the captured bytes and reports the ports")

ALLOWLIST: dict[tuple[str, int], tuple[frozenset[str], str]] = {
    ("bigtcp-ipv6.pcap", 1): (frozenset({"ports"}), BIG_TCP_IPV6),
    ("bigtcp-ipv6-geneve-ipv4.pcap", 1): (frozenset({"ports"}), BIG_TCP_IPV6),
    ("bigtcp-ipv6-geneve-ipv6.pcap", 1): (frozenset({"ports"}), BIG_TCP_IPV6),
    ("ipv4_invalid_total_length_2.pcap", 1): (
        frozenset({"ttl", "addr", "l4_proto"}),
        "IPv4 total length 19 is below the 20-byte header: tshark stops "
        "dissecting at the length field (no TTL, addresses, protocol); the "
        "analyzer reports the complete header's TTL, addresses and protocol "
        "with status ipv4_bad_total_length and no ports"),
}
