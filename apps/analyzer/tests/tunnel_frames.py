"""Tunnelled frames built with scapy, for the tshark agreement test and the
fuzzer's seed corpus: VXLAN, Geneve (Ethernet and IP inside, options),
GRE (key, checksum, sequence, Ethernet or IP inside), ERSPAN I, II and III,
GTP-U (with an extension header), IPv4/IPv6 in IPv4/IPv6, WCCP redirection
in GRE (with and without its redirect header), tunnels in tunnels, and the
cases where the decoder and tshark are known to differ (BIG TCP: an IPv6
payload length or a UDP length of 0 under a tunnel; an IPv4 total length
below its header; IP in IP whose payload is empty or not the IP version its
protocol field declares; a GRE or Ethernet type IPv4 over an IPv6 header)."""
from __future__ import annotations

from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III, ERSPAN_PlatformSpecific
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrDestOpt
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Packet, Raw

OUTER_ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
INNER_ETH = Ether(src="0a:00:00:00:00:0a", dst="0a:00:00:00:00:0b")


def _inner_v4(sport: int = 1111, dport: int = 80) -> Packet:
    return IP(src="10.1.0.1", dst="10.1.0.2", ttl=33) / TCP(sport=sport, dport=dport) / Raw(b"x" * 8)


def _inner_v6() -> Packet:
    return IPv6(src="2001:db8:1::1", dst="2001:db8:1::2", hlim=9) / UDP(sport=53, dport=5353) / Raw(b"q" * 8)


def _outer_v4(proto_payload: Packet) -> Packet:
    return OUTER_ETH / IP(src="192.0.2.1", dst="192.0.2.2", ttl=64) / proto_payload


def _outer_v6(proto_payload: Packet) -> Packet:
    return OUTER_ETH / IPv6(src="2001:db8::1", dst="2001:db8::2", hlim=60) / proto_payload


def tunnel_frames() -> dict[str, bytes]:
    """name -> frame bytes."""
    f: dict[str, Packet] = {
        "vxlan_v4_tcp": _outer_v4(UDP(sport=49152, dport=4789) / VXLAN(vni=4242) / INNER_ETH / _inner_v4()),
        "vxlan_over_v6_vlan_inner_v6": _outer_v6(
            UDP(sport=50000, dport=4789) / VXLAN(vni=7) / INNER_ETH / Dot1Q(vlan=12) / _inner_v6()),
        "geneve_eth_opts": _outer_v4(
            UDP(sport=40000, dport=6081) / GENEVE(vni=0xabcd, proto=0x6558, optionlen=2)
            / Raw(bytes(8)) / INNER_ETH / _inner_v4()),
        "geneve_ip": _outer_v6(UDP(sport=40001, dport=6081) / GENEVE(vni=5, proto=0x0800) / _inner_v4(2, 3)),
        "gre_ip_key_seq_csum": _outer_v4(
            GRE(chksum_present=1, key_present=1, seqnum_present=1, key=0xcafe, sequence_number=9, proto=0x0800)
            / _inner_v4()),
        "gre_teb": _outer_v4(GRE(proto=0x6558) / INNER_ETH / _inner_v6()),
        "gre_over_v6_ip6": _outer_v6(GRE(proto=0x86dd) / _inner_v6()),
        "erspan_i": _outer_v4(GRE(proto=0x88be) / INNER_ETH / _inner_v4()),
        "erspan_ii": _outer_v4(GRE(seqnum_present=1, sequence_number=3, proto=0x88be)
                               / ERSPAN_II(session_id=0x155, vlan=9) / INNER_ETH / _inner_v4()),
        "erspan_iii": _outer_v4(GRE(seqnum_present=1, sequence_number=4, proto=0x22eb)
                                / ERSPAN_III(session_id=0x2a, o=0) / INNER_ETH / _inner_v6()),
        "erspan_iii_platform": _outer_v4(GRE(seqnum_present=1, sequence_number=5, proto=0x22eb)
                                         / ERSPAN_III(session_id=0x2b, o=1) / ERSPAN_PlatformSpecific(platf_id=1)
                                         / INNER_ETH / _inner_v4()),
        "gtpu_v4": _outer_v4(UDP(sport=2152, dport=2152) / GTP_U_Header(teid=0xdeadbeef) / _inner_v4()),
        "gtpu_ext_v6": _outer_v4(
            UDP(sport=2152, dport=2152)
            / GTP_U_Header(teid=77, E=1, next_ex=0x85) / GTPPDUSessionContainer(type=0, QFI=5)
            / _inner_v6()),
        "gtpu_echo": _outer_v4(UDP(sport=2152, dport=2152) / GTP_U_Header(teid=0, gtp_type=1) / Raw(bytes(4))),
        "ipip_4in4": _outer_v4(_inner_v4()),
        "ipip_6in4": _outer_v4(_inner_v6()),
        "ipip_4in6": _outer_v6(_inner_v4()),
        "ipip_6in6": _outer_v6(_inner_v6()),
        "ipip_6in6_dstopts": OUTER_ETH / IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrDestOpt() / _inner_v6(),
        "ipip_icmp": _outer_v4(IP(src="10.2.0.1", dst="10.2.0.2") / ICMP(type=8)),
        # WCCP (GRE 0x883e): WCCPv2's 4-byte redirect header (service 0x22, buckets 1 and 2), then
        # the redirected IPv4 packet; WCCPv1 has none
        "gre_wccp_v2": _outer_v4(GRE(proto=0x883E) / Raw(b"\x00\x22\x01\x02") / _inner_v4()),
        "gre_wccp_v1": _outer_v4(GRE(proto=0x883E) / _inner_v4(4444, 8080)),
        "nested_gre_vxlan": _outer_v4(
            GRE(key_present=1, key=1, proto=0x0800)
            / IP(src="172.16.0.1", dst="172.16.0.2", ttl=5) / UDP(sport=1000, dport=4789) / VXLAN(vni=99)
            / INNER_ETH / _inner_v4()),
        "nested_vxlan_gtpu": _outer_v4(
            UDP(sport=49153, dport=4789) / VXLAN(vni=3) / INNER_ETH
            / IP(src="172.16.1.1", dst="172.16.1.2") / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=5)
            / _inner_v4()),
    }
    frames = {name: bytes(p) for name, p in f.items()}
    # Known differences with tshark, built here so that every allowlist
    # rule is exercised whatever the shared captures hold.
    big = bytearray(bytes(_outer_v6(UDP(sport=40002, dport=6081) / GENEVE(vni=1, proto=0x6558) / INNER_ETH
                                    / _inner_v4())))
    big[14 + 4:14 + 6] = b"\0\0"   # IPv6 payload length 0 (BIG TCP)
    big[14 + 40 + 4:14 + 40 + 6] = b"\0\0"  # and the UDP length with it
    frames["bigtcp_v6_geneve"] = bytes(big)
    big4 = bytearray(bytes(_outer_v4(UDP(sport=40003, dport=4789) / VXLAN(vni=2) / INNER_ETH / _inner_v4())))
    big4[14 + 2:14 + 4] = b"\0\0"   # IPv4 total length 0 (BIG TCP)
    big4[14 + 20 + 4:14 + 20 + 6] = b"\0\0"  # UDP length 0
    frames["bigtcp_v4_vxlan"] = bytes(big4)
    bad = bytearray(bytes(_outer_v4(TCP(sport=1, dport=2))))
    bad[14 + 2:14 + 4] = (19).to_bytes(2, "big")  # total length below the header
    frames["ipv4_total_length_19"] = bytes(bad)
    # IP in IP that holds no IP header of the version it declares: protocol 41 with nothing after
    # the outer header (tshark adds no layer), protocol 41 over an IPv4 header (tshark: data), and
    # an IPv6 header declaring IPv6 next over 8 bytes that are not one (tshark: ip:ipv6:data)
    frames["ipip_6in4_empty"] = bytes(OUTER_ETH / IP(src="192.0.2.1", dst="192.0.2.2", proto=41))
    frames["ipip_6in4_not_ipv6"] = bytes(OUTER_ETH / IP(src="192.0.2.1", dst="192.0.2.2", proto=41) / _inner_v4())
    frames["ipip_6in6in4_short_not_ipv6"] = bytes(
        OUTER_ETH / IP(src="192.0.2.1", dst="192.0.2.2", proto=41)
        / IPv6(src="2001:db8:1::1", dst="2001:db8:1::2", nh=41, plen=8) / Raw(bytes(8)))
    # A tunnel's type field says IPv4 over an IPv6 header (version 6): tshark flags the version
    # and dissects IPv6 behind it (tests/harness/frames.py builds the frame-level ones)
    frames["gre_ipv4_type_over_ipv6"] = bytes(_outer_v4(GRE(proto=0x0800) / Raw(bytes(_inner_v6()))))
    frames["vxlan_eth_ipv4_type_over_ipv6"] = bytes(_outer_v4(
        UDP(sport=49154, dport=4789) / VXLAN(vni=11) / Ether(src="0a:00:00:00:00:0a", dst="0a:00:00:00:00:0b",
                                                             type=0x0800) / Raw(bytes(_inner_v6()))))
    return frames
