#!/usr/bin/env python3
"""Make pcap captures for ipfwd tests and benchmarks.

  l1:    few destinations (--destinations, default 16) from one /24 (IPv4)
         or one /64 (IPv6, 2001:db8:0:1::/64), visited in runs of the same
         address: lookups with locality.
  mem:   many destinations drawn uniformly from the whole unicast space
         (IPv4 1.0.0.0-223.255.255.255, IPv6 2000::/3): consecutive lookups
         land far apart in the table.
  --family ipv4|ipv6|mixed: Ethernet/IPv4/UDP, Ethernet/IPv6/UDP (with its
         mandatory UDP checksum), or each packet one or the other at random
         (half each).  Default ipv4.
  --ext-headers F: a fraction F of the valid IPv6 packets carries a chain
         of well-formed extension headers (Hop-by-Hop, Destination Options,
         Routing, Fragment, AH: ipfwd walks and forwards them).
  --invalid F: a fraction F of packets is broken on purpose, equally spread
         over ipfwd's drop reasons for the packet's family (IPv4: not IP,
         truncated, bad version/IHL, bad checksum, TTL expired; IPv6: not
         IP, truncated, bad version, hop limit expired, truncated extension
         chain, Hop-by-Hop not first), so tests can check every one.

Packets are --size bytes on the wire (without FCS).  Deterministic for a
--seed.  Written with numpy and the pcap file format directly: scapy would
take minutes for the million packets the mem variant wants (about 1 s here).
"""
from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

import numpy as np

# The one pcap writer of the project (tools/pcapfile.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from pcapfile import write_pcap, write_pcap_array  # noqa: E402,F401 (used by the tests and bench/ipfwd.py)

INVALID_KINDS = ("not_ip", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired")
INVALID_KINDS6 = ("not_ip", "truncated", "ipv6_bad_version", "hop_limit_expired",
                  "ipv6_ext_truncated", "ipv6_hop_by_hop_not_first")
FAMILIES = ("ipv4", "ipv6", "mixed")
ETH_IPV4 = bytes.fromhex("020000000001" "020000000002" "0800")
ETH_IPV6 = bytes.fromhex("020000000001" "020000000002" "86dd")
L1_NET6 = 0x20010DB8_00000001 << 64  # 2001:db8:0:1::/64 (documentation space)
SRC_NET6 = 0x20010DB8_0000FFFF << 64  # sources: 2001:db8:0:ffff::/64
# Extension headers (Next Header values) the generator chains.
HOP_BY_HOP, ROUTING, FRAGMENT, AH, DEST_OPTS, UDP = 0, 43, 44, 51, 60, 17


def ipv4_checksum(header: bytes) -> int:
    words = np.frombuffer(header, dtype=">u2").astype(np.uint32)
    s = int(words.sum())
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def packet(dst: int, src: int, size: int, ttl: int, sport: int) -> bytes:
    ip_len = size - 14
    payload = bytes(ip_len - 28)
    hdr = struct.pack(">BBHHHBBHII", 0x45, 0, ip_len, 0, 0x4000, ttl, 17, 0, src, dst)
    hdr = hdr[:10] + struct.pack(">H", ipv4_checksum(hdr)) + hdr[12:]
    udp = struct.pack(">HHHH", sport, 9, ip_len - 20, 0)
    return ETH_IPV4 + hdr + udp + payload


def udp6_checksum(src: int, dst: int, udp: bytes) -> int:
    """RFC 8200 section 8.1: over the pseudo-header (addresses, upper-layer
    length, Next Header 17) and the UDP header and data; 0 sent as 0xffff."""
    pseudo = src.to_bytes(16, "big") + dst.to_bytes(16, "big") + struct.pack(">IxxxB", len(udp), UDP)
    data = pseudo + udp + (b"\0" if len(udp) % 2 else b"")
    s = sum(struct.unpack(f">{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s & 0xFFFF) or 0xFFFF


def packet6(dst: int, src: int, size: int, hop_limit: int, sport: int) -> bytes:
    """An Ethernet/IPv6/UDP frame of size bytes (at least 62)."""
    plen = size - 14 - 40
    udp = struct.pack(">HHHH", sport, 9, plen, 0) + bytes(plen - 8)
    udp = udp[:6] + struct.pack(">H", udp6_checksum(src, dst, udp)) + udp[8:]
    hdr = struct.pack(">IHBB", 6 << 28, plen, UDP, hop_limit) + src.to_bytes(16, "big") + dst.to_bytes(16, "big")
    return ETH_IPV6 + hdr + udp


def ext_header(kind: int, next_header: int, rng: np.random.Generator, later_fragment: bool = False) -> bytes:
    """One well-formed extension header: Hop-by-Hop and Destination Options
    padded with PadN (8 or 16 bytes), a Routing header (type 4, segments
    left 0), a Fragment header (first fragment, or a later one), AH (12 bytes
    of ICV, length in 4-byte units)."""
    if kind in (HOP_BY_HOP, DEST_OPTS):
        units = int(rng.integers(0, 2))
        pad = 6 + 8 * units
        return bytes([next_header, units, 1, pad - 2]) + bytes(pad - 2)
    if kind == ROUTING:
        return bytes([next_header, 2, 4, 0]) + bytes(4 + 16)
    if kind == FRAGMENT:
        offset = int(rng.integers(1, 8192)) if later_fragment else 0
        return struct.pack(">BBHI", next_header, 0, offset << 3 | 1, int(rng.integers(0, 2 ** 32)))
    if kind == AH:
        return bytes([next_header, 4, 0, 0]) + struct.pack(">II", 0x100, 1) + bytes(12)
    raise ValueError(f"extension header {kind}")


def with_extension_headers(p: bytes, kinds: list[int], rng: np.random.Generator,
                           later_fragment: bool = False) -> bytes:
    """The IPv6 frame p with extension headers of the given kinds (in that
    order) between its fixed header and its upper-layer header, the payload
    length grown to match.  later_fragment: a Fragment header in the chain
    is a later fragment's."""
    nh_upper = p[20]
    chain, nxt = b"", nh_upper
    for kind in reversed(kinds):
        chain = ext_header(kind, nxt, rng, later_fragment) + chain
        nxt = kind
    plen = int.from_bytes(p[18:20], "big") + len(chain)
    return p[:18] + plen.to_bytes(2, "big") + bytes([nxt]) + p[21:54] + chain + p[54:]


def extension_chain(rng: np.random.Generator) -> list[int]:
    """A chain in RFC 8200's recommended order, Hop-by-Hop first when there."""
    order = [HOP_BY_HOP, DEST_OPTS, ROUTING, FRAGMENT, AH, DEST_OPTS]
    kinds = [k for k in order if rng.random() < 0.4]
    return kinds or [int(rng.choice(order))]


def break_packet(p: bytes, kind: str, rng: np.random.Generator) -> bytes:
    if p[12:14] == b"\x86\xdd":
        return break_packet6(p, kind, rng)
    b = bytearray(p)
    if kind == "not_ip":
        b[12:14] = rng.choice([b"\x88\xb5", b"\x08\x06", b"\x81\x00"])
    elif kind == "truncated":
        return bytes(b[: int(rng.integers(0, 34))])
    elif kind == "bad_version_or_ihl":
        b[14] = int(rng.choice([0x65, 0x44, 0x40, 0x35]))
    elif kind == "bad_checksum":
        b[24] ^= 0x5A
    elif kind == "ttl_expired":
        b[22] = int(rng.integers(0, 2))
        b[24:26] = b"\0\0"
        b[24:26] = struct.pack(">H", ipv4_checksum(bytes(b[14:34])))
    return bytes(b)


def break_packet6(p: bytes, kind: str, rng: np.random.Generator) -> bytes:
    """An IPv6 frame broken so that ipfwd drops it for reason `kind`."""
    b = bytearray(p)
    if kind == "not_ip":
        b[12:14] = rng.choice([b"\x88\xb5", b"\x08\x06", b"\x81\x00"])
    elif kind == "truncated":
        if rng.random() < 0.5:
            return bytes(b[: int(rng.integers(0, 54))])  # not even the fixed header
        b[18:20] = (len(b) - 54 + int(rng.integers(1, 200))).to_bytes(2, "big")  # payload beyond the frame
    elif kind == "ipv6_bad_version":
        b[14] = (int(rng.choice([4, 0, 7, 15])) << 4) | (b[14] & 0x0F)
    elif kind == "hop_limit_expired":
        b[21] = int(rng.integers(0, 2))
    elif kind == "ipv6_ext_truncated":
        # A chain whose last header runs past the payload length: the
        # payload length cut inside it (the frame may go on: padding).
        q = with_extension_headers(p, extension_chain(rng), rng)
        chain_end = 54 + 8
        nh, off = q[20], 54
        while nh in (HOP_BY_HOP, ROUTING, FRAGMENT, AH, DEST_OPTS):
            hlen = 8 if nh == FRAGMENT else (q[off + 1] + 2) * 4 if nh == AH else (q[off + 1] + 1) * 8
            nh, off, chain_end = q[off], off + hlen, off + hlen
        cut = int(rng.integers(0, chain_end - 54))  # payload bytes kept: the chain no longer fits
        return q[:18] + cut.to_bytes(2, "big") + q[20:]
    elif kind == "ipv6_hop_by_hop_not_first":
        first = int(rng.choice([DEST_OPTS, ROUTING, FRAGMENT, AH]))
        return with_extension_headers(p, [first, HOP_BY_HOP], rng)
    else:
        raise ValueError(f"no IPv6 breakage {kind}")
    return bytes(b)


def destinations6(variant: str, n_packets: int, n_dst: int, rng: np.random.Generator) -> list[int]:
    """IPv6 destinations as ints: l1 few hosts of one /64 in runs, mem
    uniform over 2000::/3."""
    if variant == "l1":
        pool = [L1_NET6 + int(h) + 1 for h in rng.choice(254, size=n_dst, replace=n_dst > 254)]
        run = 8
        idx = np.repeat(rng.integers(0, n_dst, size=(n_packets + run - 1) // run), run)[:n_packets]
        return [pool[i] for i in idx.tolist()]
    hi = rng.integers(0, 2 ** 61, size=n_packets, dtype=np.uint64) | np.uint64(1 << 61)
    lo = rng.integers(0, 2 ** 64, size=n_packets, dtype=np.uint64)
    return [int(h) << 64 | int(low) for h, low in zip(hi.tolist(), lo.tolist())]


def destinations(variant: str, n_packets: int, n_dst: int, rng: np.random.Generator) -> np.ndarray:
    if variant == "l1":
        pool = 0x0A000000 + rng.choice(254, size=n_dst, replace=n_dst > 254) + 1
        run = 8  # a destination repeats for a few packets: locality
        idx = np.repeat(rng.integers(0, n_dst, size=(n_packets + run - 1) // run), run)[:n_packets]
        return pool[idx].astype(np.uint32)
    # Uniform over 1.0.0.0 - 223.255.255.255 (unicast), no repeats to speak of.
    return rng.integers(0x01000000, 0xE0000000, size=n_packets, dtype=np.uint64).astype(np.uint32)


def valid_packets(variant: str, n_packets: int, n_dst: int, size: int,
                  rng: np.random.Generator) -> np.ndarray:
    """n valid packets as rows of a uint8 array: the template of packet()
    with destination, source, TTL, source port and checksum filled in."""
    dsts = destinations(variant, n_packets, n_dst, rng).astype(np.uint64)
    srcs = rng.integers(0x0B000001, 0x0B00FFFF, size=n_packets).astype(np.uint64)
    ttls = rng.integers(2, 65, size=n_packets).astype(np.uint64)
    sports = (1024 + np.arange(n_packets) % 60000).astype(np.uint64)
    pk = np.tile(np.frombuffer(packet(0, 0, size, 0, 0), dtype=np.uint8), (n_packets, 1))
    for off, val, width in ((26, srcs, 4), (30, dsts, 4), (34, sports, 2)):
        for b in range(width):
            pk[:, off + b] = (val >> np.uint64(8 * (width - 1 - b))) & np.uint64(0xFF)
    pk[:, 22] = ttls.astype(np.uint8)
    pk[:, 24:26] = 0
    words = pk[:, 14:34].astype(np.uint32).reshape(n_packets, 10, 2)
    total = (words[:, :, 0] << 8 | words[:, :, 1]).sum(axis=1)
    while (total >> 16).any():
        total = (total & 0xFFFF) + (total >> 16)
    csum = ~total & 0xFFFF
    pk[:, 24] = (csum >> 8).astype(np.uint8)
    pk[:, 25] = (csum & 0xFF).astype(np.uint8)
    return pk


def valid_packets6(variant: str, n_packets: int, n_dst: int, size: int,
                   rng: np.random.Generator) -> list[bytes]:
    """n valid IPv6 packets (no extension headers)."""
    dsts = destinations6(variant, n_packets, n_dst, rng)
    srcs = [SRC_NET6 + h for h in rng.integers(1, 2 ** 16, size=n_packets).tolist()]
    hops = rng.integers(2, 65, size=n_packets).tolist()
    return [packet6(d, int(s), size, int(h), 1024 + i % 60000)
            for i, (d, s, h) in enumerate(zip(dsts, srcs, hops))]


def generate(variant: str, n_packets: int, n_dst: int, size: int, invalid: float,
             seed: int, family: str = "ipv4", ext_headers: float = 0.0) -> list[bytes]:
    """The capture's frames: family ipv4, ipv6 or mixed (each frame one or
    the other, half each), a fraction `invalid` broken over the family's
    drop reasons, a fraction `ext_headers` of valid IPv6 frames with
    extension headers."""
    if family not in FAMILIES:
        raise ValueError(f"family {family!r}: expected one of {', '.join(FAMILIES)}")
    rng = np.random.default_rng(seed)
    v4 = valid_packets(variant, n_packets, n_dst, size, rng) if family != "ipv6" else None
    v6 = valid_packets6(variant, n_packets, n_dst, size, rng) if family != "ipv4" else None
    out = []
    for i in range(n_packets):
        six = family == "ipv6" or (family == "mixed" and rng.random() < 0.5)
        p = v6[i] if six else v4[i].tobytes()
        kinds = INVALID_KINDS6 if six else INVALID_KINDS
        if invalid > 0 and rng.random() < invalid:
            p = break_packet(p, kinds[i % len(kinds)], rng)
        elif six and ext_headers > 0 and rng.random() < ext_headers:
            p = with_extension_headers(p, extension_chain(rng), rng, later_fragment=rng.random() < 0.2)
        out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variant", choices=("l1", "mem"))
    ap.add_argument("output", type=Path, help="pcap file to write")
    ap.add_argument("--packets", type=int, default=None,
                    help="packets in the capture (default: l1 4096, mem 1048576)")
    ap.add_argument("--destinations", type=int, default=16, help="l1: distinct destinations (16)")
    ap.add_argument("--size", type=int, default=64, help="bytes per packet, 64..1514 (64)")
    ap.add_argument("--invalid", type=float, default=0.0, help="fraction of broken packets (0)")
    ap.add_argument("--family", choices=FAMILIES, default="ipv4",
                    help="IPv4, IPv6, or each packet either at random (default ipv4)")
    ap.add_argument("--ext-headers", type=float, default=0.0,
                    help="fraction of valid IPv6 packets with extension headers (0)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    n = a.packets if a.packets is not None else (4096 if a.variant == "l1" else 1 << 20)
    if n < 1:
        ap.error(f"--packets {n}: expected at least 1")
    if not 64 <= a.size <= 1514:
        ap.error(f"--size {a.size}: expected 64..1514")
    if not 0.0 <= a.invalid <= 1.0:
        ap.error(f"--invalid {a.invalid}: expected a fraction 0..1")
    if a.destinations < 1:
        ap.error(f"--destinations {a.destinations}: expected at least 1")
    if not 0.0 <= a.ext_headers <= 1.0:
        ap.error(f"--ext-headers {a.ext_headers}: expected a fraction 0..1")
    if a.ext_headers > 0 and a.family == "ipv4":
        ap.error(f"--ext-headers {a.ext_headers}: IPv6 extension headers need --family ipv6 or mixed")
    if a.invalid > 0 or a.family != "ipv4":
        write_pcap(a.output, generate(a.variant, n, a.destinations, a.size, a.invalid, a.seed,
                                      a.family, a.ext_headers))
    else:
        rng = np.random.default_rng(a.seed)
        write_pcap_array(a.output, valid_packets(a.variant, n, a.destinations, a.size, rng))
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "ipfwd_traffic.py"))
