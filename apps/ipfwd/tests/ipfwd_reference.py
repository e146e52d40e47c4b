"""What ipfwd must do to each packet, written again from the specification
(apps/ipfwd/README.md) in plain Python: full checksum recomputation, not
the incremental update the C code uses; IPv6 with its extension headers
walked one by one."""
from __future__ import annotations

from typing import Callable

HASH_MUL = 0x9E3779B1
HASH_MUL64 = 0x9E3779B97F4A7C15
M64 = (1 << 64) - 1
# Extension headers walked (README: IANA's IPv6 Extension Header Types).
EXTENSION_HEADERS = {0, 43, 44, 51, 60, 135, 139, 140, 253, 254}


def checksum(data: bytes) -> int:
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def macs(idx: int) -> bytes:
    return b"\x02\x00" + idx.to_bytes(4, "big") + b"\x02\x01" + idx.to_bytes(4, "big")


def hash6(dst: int, n_entries: int) -> int:
    hi, lo = dst >> 64, dst & M64
    h = (((hi * HASH_MUL64) & M64) ^ lo) * HASH_MUL64 & M64
    return ((h >> 32) * n_entries) >> 32


def forward6(pkt: bytes, n_entries: int, lpm_mode: bool,
             lpm6: Callable[[int], int | None] | None) -> bytes | str:
    if len(pkt) < 14 + 40:
        return "truncated"
    if pkt[14] >> 4 != 6:
        return "ipv6_bad_version"
    ip_len = 40 + int.from_bytes(pkt[18:20], "big")
    if ip_len > len(pkt) - 14:
        return "truncated"
    ip = pkt[14:14 + ip_len]
    nh, off = ip[6], 40
    while nh in EXTENSION_HEADERS:
        if nh == 0 and off != 40:
            return "ipv6_hop_by_hop_not_first"
        if off + 8 > ip_len:
            return "ipv6_ext_truncated"
        later_fragment = False
        if nh == 44:
            size = 8
            later_fragment = int.from_bytes(ip[off + 2:off + 4], "big") >> 3 != 0
        elif nh == 51:
            size = (ip[off + 1] + 2) * 4
        else:
            size = (ip[off + 1] + 1) * 8
        if off + size > ip_len:
            return "ipv6_ext_truncated"
        nh, off = ip[off], off + size
        if later_fragment:
            break
    if ip[7] <= 1:
        return "hop_limit_expired"
    dst = int.from_bytes(ip[24:40], "big")
    if not lpm_mode:
        idx = hash6(dst, n_entries)
    else:
        hop = lpm6(dst) if lpm6 is not None else None
        if hop is None:
            return "no_route"
        idx = hop
    return macs(idx) + pkt[12:14] + ip[:7] + bytes([ip[7] - 1]) + pkt[14 + 8:]


def forward(pkt: bytes, n_entries: int,
            lpm: Callable[[int], int | None] | None = None,
            lpm6: Callable[[int], int | None] | None = None) -> bytes | str:
    """The packet ipfwd sends, or the name of the reason it drops it.
    lpm, lpm6: --lookup lpm, the next hop of an IPv4 or an IPv6 destination
    (None: no route), which then picks the entry instead of the hash
    (n_entries unused); with lpm given and lpm6 not, IPv6 has no routes."""
    if len(pkt) < 14:
        return "truncated"
    if pkt[12:14] == b"\x86\xdd":
        return forward6(pkt, n_entries, lpm is not None or lpm6 is not None, lpm6)
    if pkt[12:14] != b"\x08\x00":
        return "not_ip"
    if len(pkt) < 34:
        return "truncated"
    version, hl = pkt[14] >> 4, (pkt[14] & 0x0F) * 4
    if version != 4 or hl < 20:
        return "bad_version_or_ihl"
    if len(pkt) < 14 + hl:
        return "truncated"
    total = int.from_bytes(pkt[16:18], "big")
    if total < hl:
        return "bad_version_or_ihl"
    if total > len(pkt) - 14:
        return "truncated"
    if checksum(pkt[14:14 + hl]) != 0:
        return "bad_checksum"
    if pkt[22] <= 1:
        return "ttl_expired"
    dst = int.from_bytes(pkt[30:34], "big")
    if lpm is None and lpm6 is None:
        idx = (((dst * HASH_MUL) & 0xFFFFFFFF) * n_entries) >> 32
    else:
        hop = lpm(dst) if lpm is not None else None
        if hop is None:
            return "no_route"
        idx = hop
    ip = bytearray(pkt[14:14 + hl])
    ip[8] -= 1
    ip[10:12] = b"\0\0"
    ip[10:12] = checksum(bytes(ip)).to_bytes(2, "big")
    return macs(idx) + pkt[12:14] + bytes(ip) + pkt[14 + hl:]
