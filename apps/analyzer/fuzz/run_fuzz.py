#!/usr/bin/env python3
"""Run the decoder fuzzer for a bounded time from a fresh corpus seeded with
a few well-formed frames (so it starts past the Ethernet header).

usage: run_fuzz.py FUZZER SECONDS"""
from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path


def seeds() -> dict[str, bytes]:
    eth = bytes(range(12))
    tcp = struct.pack("!HHIIBBHHH", 1234, 80, 1, 0, 0x50, 2, 1024, 0, 0)
    udp = struct.pack("!HHHH", 53, 53, 8, 0)
    v4 = lambda proto, l4, ihl=5: (struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 4 * ihl + len(l4), 1, 0, 64, proto, 0, b"\x0a\0\0\1", b"\x0a\0\0\2") + bytes(4 * ihl - 20) + l4)
    v6 = lambda nh, rest: struct.pack("!IHBB", 0x60000000, len(rest), nh, 64) + bytes(range(32)) + rest
    return {
        "ipv4_tcp": eth + b"\x08\x00" + v4(6, tcp),
        "vlan_ipv4opts_udp": eth + b"\x81\x00\x00\x64\x08\x00" + v4(17, udp, ihl=7),
        "qinq_ipv6_tcp": eth + b"\x88\xa8\x00\x01\x81\x00\x00\x02\x86\xdd" + v6(6, tcp),
        "ipv6_ext_udp": eth + b"\x86\xdd" + v6(0, b"\x2c\x00" + bytes(6) + b"\x11\x00\x00\x01" + bytes(4) + udp),
        "ipv4_icmp": eth + b"\x08\x00" + v4(1, b"\x08\x00" + bytes(6)),
    }


def main() -> int:
    fuzzer, seconds = sys.argv[1], int(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        for name, data in seeds().items():
            (Path(d) / name).write_bytes(data)
        return subprocess.run([fuzzer, f"-max_total_time={seconds}",
                               "-max_len=512", d]).returncode


if __name__ == "__main__":
    sys.exit(main())
