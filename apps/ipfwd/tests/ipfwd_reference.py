"""What ipfwd must do to each packet, written again from the specification
(apps/ipfwd/README.md) in plain Python: full checksum recomputation, not
the incremental update the C code uses."""
from __future__ import annotations

from typing import Callable

HASH_MUL = 0x9E3779B1


def checksum(data: bytes) -> int:
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def forward(pkt: bytes, n_entries: int,
            lpm: Callable[[int], int | None] | None = None) -> bytes | str:
    """The packet ipfwd sends, or the name of the reason it drops it.
    lpm: --lookup lpm, the next hop of a destination (None: no route), which
    then picks the entry instead of the hash (n_entries unused)."""
    if len(pkt) < 14:
        return "truncated"
    if pkt[12:14] != b"\x08\x00":
        return "not_ipv4"
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
    if lpm is None:
        idx = (((dst * HASH_MUL) & 0xFFFFFFFF) * n_entries) >> 32
    else:
        hop = lpm(dst)
        if hop is None:
            return "no_route"
        idx = hop
    ip = bytearray(pkt[14:14 + hl])
    ip[8] -= 1
    ip[10:12] = b"\0\0"
    ip[10:12] = checksum(bytes(ip)).to_bytes(2, "big")
    macs = b"\x02\x00" + idx.to_bytes(4, "big") + b"\x02\x01" + idx.to_bytes(4, "big")
    return macs + pkt[12:14] + bytes(ip) + pkt[14 + hl:]
