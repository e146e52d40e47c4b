#!/usr/bin/env python3
"""Make pcap captures for ipfwd tests and benchmarks.

  l1:    few destinations (--destinations, default 16) from one /24, visited
         in runs of the same address: lookups with locality.
  mem:   many destinations drawn uniformly from the whole unicast space:
         consecutive lookups land far apart in the table.
  --invalid F: a fraction F of packets is broken on purpose, equally spread
         over ipfwd's drop reasons (not IPv4, truncated, bad version/IHL, bad
         checksum, TTL expired), so tests can check every one.

Packets are Ethernet/IPv4/UDP, --size bytes on the wire (without FCS).
Written with numpy and the pcap file format directly: scapy would take
minutes for the million packets the mem variant wants (about 1 s here).
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

INVALID_KINDS = ("not_ipv4", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired")


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
    eth = bytes.fromhex("020000000001" "020000000002" "0800")
    return eth + hdr + udp + payload


def break_packet(p: bytes, kind: str, rng: np.random.Generator) -> bytes:
    b = bytearray(p)
    if kind == "not_ipv4":
        b[12:14] = rng.choice([b"\x86\xdd", b"\x08\x06", b"\x81\x00"])
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


def generate(variant: str, n_packets: int, n_dst: int, size: int, invalid: float,
             seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    pk = valid_packets(variant, n_packets, n_dst, size, rng)
    out = []
    for i in range(n_packets):
        p = pk[i].tobytes()
        if invalid > 0 and rng.random() < invalid:
            p = break_packet(p, INVALID_KINDS[i % len(INVALID_KINDS)], rng)
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
    if a.invalid > 0:
        write_pcap(a.output, generate(a.variant, n, a.destinations, a.size, a.invalid, a.seed))
    else:
        rng = np.random.default_rng(a.seed)
        write_pcap_array(a.output, valid_packets(a.variant, n, a.destinations, a.size, rng))
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "ipfwd_traffic.py"))
