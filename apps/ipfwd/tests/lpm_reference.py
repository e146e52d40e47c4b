"""Longest-prefix match written again from the route file format
(apps/ipfwd/README.md, `--routes`) in plain Python: the file read with the
standard library's ipaddress, one dict per prefix length, the longest length
that holds the masked destination wins.  Later lines replace earlier ones
for the same prefix."""
from __future__ import annotations

import ipaddress
from pathlib import Path


class LongestPrefixTable:
    def __init__(self) -> None:
        self.by_len: dict[int, dict[int, int]] = {}

    def add(self, network: str, next_hop: int) -> None:
        net = ipaddress.IPv4Network(network, strict=True)
        self.by_len.setdefault(net.prefixlen, {})[int(net.network_address)] = next_hop

    def lookup(self, addr: int) -> int | None:
        for length in sorted(self.by_len, reverse=True):
            mask = (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
            hop = self.by_len[length].get(addr & mask)
            if hop is not None:
                return hop
        return None

    def __len__(self) -> int:
        return sum(map(len, self.by_len.values()))


def load_rules(path: Path) -> LongestPrefixTable:
    t = LongestPrefixTable()
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        assert line.startswith("R"), line
        net, hop = line[1:].split()
        t.add(net, int(hop))
    return t
