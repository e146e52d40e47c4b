"""Longest-prefix match written again from the route file format
(apps/ipfwd/README.md, `--routes`) in plain Python: the file read with the
standard library's ipaddress, one table per family, one dict per prefix
length, the longest length that holds the masked destination wins.  Later
lines replace earlier ones for the same prefix."""
from __future__ import annotations

import ipaddress
from pathlib import Path


class LongestPrefixTable:
    def __init__(self, bits: int = 32) -> None:
        self.bits = bits  # 32: IPv4, 128: IPv6
        self.by_len: dict[int, dict[int, int]] = {}

    def add(self, network: str, next_hop: int) -> None:
        net = ipaddress.ip_network(network, strict=True)
        assert net.max_prefixlen == self.bits, (network, self.bits)
        self.by_len.setdefault(net.prefixlen, {})[int(net.network_address)] = next_hop

    def lookup(self, addr: int) -> int | None:
        full = (1 << self.bits) - 1
        for length in sorted(self.by_len, reverse=True):
            mask = (full << (self.bits - length)) & full
            hop = self.by_len[length].get(addr & mask)
            if hop is not None:
                return hop
        return None

    def __len__(self) -> int:
        return sum(map(len, self.by_len.values()))


def load_rules(*paths: Path) -> tuple[LongestPrefixTable, LongestPrefixTable]:
    """The IPv4 and the IPv6 table of route files read in order."""
    t4, t6 = LongestPrefixTable(32), LongestPrefixTable(128)
    for path in paths:
        for line in path.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            assert line.startswith("R"), line
            net, hop = line[1:].split()
            (t6 if ":" in net else t4).add(net, int(hop))
    return t4, t6
