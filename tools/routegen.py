#!/usr/bin/env python3
"""Generate a full-size IPv4 or IPv6 Internet routing table in DPDK l3fwd's
LPM rule format (lines `R<address>/<depth> <next hop>`, read by `ipfwd
--lookup lpm --routes FILE` and by l3fwd's `--rule_ipv4` / `--rule_ipv6`).

IPv4 (--family ipv4, the default).  The table is modelled, not measured:
prefixes are drawn uniformly over the
public unicast space (1.0.0.0-223.255.255.255 without 10/8 and 127/8), as
many of each length as the global table's prefix-length distribution gives,
so shorter prefixes cover longer ones about as often as chance makes them.
Next hops are uniform over 0..ports-1.  Deterministic for a seed.

Prefix-length distribution (PREFIX_LENGTH_SHARE): shares of the IPv4 default-
free zone of 2024 by prefix length, approximate readings (rounded, not exact
counts) of the prefix-length breakdown at bgp.potaroo.net (AS131072 view,
"BGP Table Data", https://bgp.potaroo.net/as2.0/) and Geoff Huston's "BGP in
2024" (APNIC, https://labs.apnic.net/?p=1950): about 1.0 million entries,
/24 about 60 %, then /22, /23, /21, /20, /19, /16, /18, /17; prefixes longer
than /24 are filtered by most networks and left out.

IPv6 (--family ipv6).  Modelled too, about 200,000 prefixes by default (the
global table held 201,200 in January 2024 and about 222,000 in December
2024).  Prefix-length distribution (PREFIX_LENGTH_SHARE6): approximate
readings, rounded, of the same sources' IPv6 reports (bgp.potaroo.net/v6/
as2.0/, "BGP in 2024"): /48 the most common length at about 46 %, then /32
(the usual allocation), /44, /40, /29, /36, /46, /47; 0.7 % longer than /48;
nothing longer than /64 here; average length about 42.9.  Structure: the
global table is mostly more-specifics of other entries (about 56 % of its
entries cover a sub-span of another), so prefixes are made shortest first,
and each prefix longer than /32 is drawn inside an earlier, shorter prefix
with probability NEST_SHARE6 (shorter ones with NEST_SHARE6_SHORT), else
uniformly inside one of the regional registries' blocks (RIR_BLOCKS6,
weighted by their rough share of the table; 2001::/23 and 2001:db8::/32
left out).  Next hops uniform over 0..ports-1.  Deterministic for a seed."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

# depth -> share of the table (normalised below).
PREFIX_LENGTH_SHARE: dict[int, float] = {
    8: 0.000016, 9: 0.000014, 10: 0.00004, 11: 0.0001, 12: 0.0003, 13: 0.0006,
    14: 0.0012, 15: 0.002, 16: 0.0135, 17: 0.0085, 18: 0.014, 19: 0.026,
    20: 0.048, 21: 0.056, 22: 0.124, 23: 0.109, 24: 0.596,
}
EXCLUDED_FIRST_OCTETS = (10, 127)  # private, loopback; 0/8 and 224/3 are out of range anyway

# IPv6 depth -> share of the table (normalised below).
PREFIX_LENGTH_SHARE6: dict[int, float] = {
    16: 0.00001, 17: 0.00001, 18: 0.00001, 19: 0.00005, 20: 0.0002, 21: 0.0002, 22: 0.0002,
    23: 0.0002, 24: 0.0007, 25: 0.0003, 26: 0.0005, 27: 0.0008, 28: 0.012, 29: 0.038,
    30: 0.007, 31: 0.006, 32: 0.11, 33: 0.011, 34: 0.01, 35: 0.008, 36: 0.028, 37: 0.005,
    38: 0.006, 39: 0.005, 40: 0.055, 41: 0.004, 42: 0.012, 43: 0.004, 44: 0.08, 45: 0.01,
    46: 0.025, 47: 0.02, 48: 0.44, 49: 0.0004, 50: 0.0004, 51: 0.0002, 52: 0.0015,
    53: 0.0002, 54: 0.0002, 55: 0.0002, 56: 0.0025, 57: 0.0001, 58: 0.0001, 59: 0.0001,
    60: 0.0004, 61: 0.0001, 62: 0.0001, 63: 0.0001, 64: 0.0008,
}
# The registries' blocks (top 64 bits of the prefix, length) and their
# rough weight in the table: 2001::/16 (all registries, early), APNIC
# 2400::/12, ARIN 2600::/12, LACNIC 2800::/12, RIPE NCC 2a00::/12, AFRINIC
# 2c00::/12.
RIR_BLOCKS6: tuple[tuple[int, int, float], ...] = (
    (0x2001 << 48, 16, 0.12), (0x2400 << 48, 12, 0.25), (0x2600 << 48, 12, 0.20),
    (0x2800 << 48, 12, 0.10), (0x2A00 << 48, 12, 0.31), (0x2C00 << 48, 12, 0.02),
)
EXCLUDED6 = ((0x2001 << 48, 23), (0x20010DB8 << 32, 32))  # IETF protocol assignments, documentation
NEST_SHARE6 = 0.55       # prefixes longer than /32 drawn inside an earlier route
NEST_SHARE6_SHORT = 0.1  # /32 and shorter
ROUTES6_DEFAULT = 200_000


def length_counts(n_routes: int) -> dict[int, int]:
    """Routes per prefix length for a table of n_routes: rounded shares, the
    remainder on /24, each length capped at the prefixes it can have."""
    total = sum(PREFIX_LENGTH_SHARE.values())
    counts = {d: int(round(n_routes * s / total)) for d, s in PREFIX_LENGTH_SHARE.items()}
    for d in counts:
        counts[d] = min(counts[d], int(223 * 2 ** (d - 8) * 0.9))
    counts[24] += n_routes - sum(counts.values())
    if counts[24] < 0 or counts[24] > 200 * 2 ** 16:
        raise ValueError(f"--routes {n_routes}: cannot make that many distinct prefixes")
    return counts


def _unicast(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.integers(0x01000000, 0xE0000000, size=n, dtype=np.uint64)
    bad = np.isin(a >> np.uint64(24), np.array(EXCLUDED_FIRST_OCTETS, dtype=np.uint64))
    return a[~bad]


def generate(n_routes: int, ports: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(prefix, depth, next hop) arrays sorted by address then depth; prefix
    as host-order uint32 with the bits beyond the depth zero."""
    if n_routes < 1:
        raise ValueError(f"--routes {n_routes}: expected at least 1")
    if not 1 <= ports <= 256:
        raise ValueError(f"--ports {ports}: expected 1 to 256 (l3fwd's next hops are 0-255)")
    rng = np.random.default_rng(seed)
    prefixes, depths = [], []
    for depth, count in sorted(length_counts(n_routes).items()):
        if count == 0:
            continue
        mask = np.uint64((0xFFFFFFFF << (32 - depth)) & 0xFFFFFFFF)
        got = np.empty(0, dtype=np.uint64)
        while got.size < count:
            draw = _unicast(rng, 2 * (count - got.size) + 16) & mask
            got = np.unique(np.concatenate([got, draw]))
        # np.unique sorts: pick a random subset, not the lowest addresses.
        got = rng.choice(got, size=count, replace=False)
        prefixes.append(got)
        depths.append(np.full(count, depth, dtype=np.uint8))
    prefix = np.concatenate(prefixes).astype(np.uint32)
    depth = np.concatenate(depths)
    order = np.lexsort((depth, prefix))
    next_hop = rng.integers(0, ports, size=prefix.size).astype(np.uint8)
    return prefix[order], depth[order], next_hop


def length_counts6(n_routes: int) -> dict[int, int]:
    """IPv6 routes per prefix length: rounded shares, the remainder on /48."""
    total = sum(PREFIX_LENGTH_SHARE6.values())
    counts = {d: int(round(n_routes * s / total)) for d, s in PREFIX_LENGTH_SHARE6.items()}
    counts[48] += n_routes - sum(counts.values())
    if counts[48] < 0:
        raise ValueError(f"--routes {n_routes}: too few for the IPv6 length mix")
    return counts


def _mask64(depth: int) -> np.uint64:
    return np.uint64(((1 << 64) - 1) ^ ((1 << (64 - depth)) - 1))


def _in_blocks6(rng: np.random.Generator, n: int) -> np.ndarray:
    """n top-64-bit addresses uniform inside the registries' blocks (by
    weight), none inside the excluded blocks."""
    w = np.array([b[2] for b in RIR_BLOCKS6])
    pick = rng.choice(len(RIR_BLOCKS6), size=n, p=w / w.sum())
    base = np.array([b[0] for b in RIR_BLOCKS6], dtype=np.uint64)[pick]
    free = np.array([(1 << (64 - b[1])) - 1 for b in RIR_BLOCKS6], dtype=np.uint64)[pick]
    a = base | (rng.integers(0, 2 ** 64, size=n, dtype=np.uint64) & free)
    bad = np.zeros(n, dtype=bool)
    return a[~excluded6(a)]


def excluded6(a: np.ndarray) -> np.ndarray:
    """Which top-64-bit addresses lie in a block left out (EXCLUDED6)."""
    bad = np.zeros(a.size, dtype=bool)
    for net, length in EXCLUDED6:
        bad |= (a & _mask64(length)) == np.uint64(net)
    return bad


def generate6(n_routes: int, ports: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(prefix, depth, next hop) arrays of a modelled IPv6 table, sorted by
    address then depth; prefix as the top 64 bits of the address (uint64:
    every depth is at most 64), bits beyond the depth zero."""
    if n_routes < 1:
        raise ValueError(f"--routes {n_routes}: expected at least 1")
    if not 1 <= ports <= 256:
        raise ValueError(f"--ports {ports}: expected 1 to 256 (l3fwd's next hops are 0-255)")
    rng = np.random.default_rng(seed)
    prefixes: list[np.ndarray] = []
    depths: list[np.ndarray] = []
    for depth, count in sorted(length_counts6(n_routes).items()):
        if count == 0:
            continue
        mask = _mask64(depth)
        earlier = np.concatenate(prefixes) if prefixes else np.empty(0, dtype=np.uint64)
        earlier_depth = np.concatenate(depths) if depths else np.empty(0, dtype=np.uint8)
        share = NEST_SHARE6 if depth > 32 else NEST_SHARE6_SHORT
        got = np.empty(0, dtype=np.uint64)
        while got.size < count:
            want = 2 * (count - got.size) + 16
            nested = int(rng.binomial(want, share)) if earlier.size else 0
            parent = rng.integers(0, earlier.size, size=nested) if nested else np.empty(0, dtype=np.int64)
            free_bits = (np.uint64(1) << (np.uint64(64) - earlier_depth[parent].astype(np.uint64))) - np.uint64(1)
            inside = earlier[parent] | (rng.integers(0, 2 ** 64, size=nested, dtype=np.uint64) & free_bits)
            inside = inside[~excluded6(inside & mask)]
            draw = np.concatenate([inside, _in_blocks6(rng, want - nested)]) & mask
            got = np.unique(np.concatenate([got, draw]))
        got = rng.choice(got, size=count, replace=False)
        prefixes.append(got)
        depths.append(np.full(count, depth, dtype=np.uint8))
    prefix = np.concatenate(prefixes)
    depth = np.concatenate(depths)
    order = np.lexsort((depth, prefix))
    next_hop = rng.integers(0, ports, size=prefix.size).astype(np.uint8)
    return prefix[order], depth[order], next_hop


def rule_lines6(prefix: np.ndarray, depth: np.ndarray, next_hop: np.ndarray) -> str:
    """IPv6 rule lines: the top 64 bits as four groups, then '::'."""
    p = prefix.astype(np.uint64)
    groups = [((p >> np.uint64(s)) & np.uint64(0xFFFF)).tolist() for s in (48, 32, 16, 0)]
    return "".join(f"R{a:x}:{b:x}:{c:x}:{d:x}::/{n} {h}\n"
                   for a, b, c, d, n, h in zip(*groups, depth.tolist(), next_hop.tolist()))


def nested_share6(prefix: np.ndarray, depth: np.ndarray) -> float:
    """The share of routes that lie inside another, shorter route of the
    table (the more-specifics the global table is mostly made of)."""
    inside = np.zeros(prefix.size, dtype=bool)
    for e in np.unique(depth).tolist():
        rows = np.flatnonzero(depth > e)
        inside[rows] |= np.isin(prefix[rows] & _mask64(e), prefix[depth == e])
    return float(inside.mean())


def destinations_in6(prefix: np.ndarray, depth: np.ndarray, n: int,
                     rng: np.random.Generator) -> list[int]:
    """n IPv6 addresses (ints), each inside a route drawn uniformly from the
    table (its longest match may be a more specific route)."""
    pick = rng.integers(0, prefix.size, size=n)
    host_bits = (np.uint64(1) << (np.uint64(64) - depth[pick].astype(np.uint64))) - np.uint64(1)
    hi = prefix[pick] | (rng.integers(0, 2 ** 64, size=n, dtype=np.uint64) & host_bits)
    lo = rng.integers(0, 2 ** 64, size=n, dtype=np.uint64)
    return [h << 64 | low for h, low in zip(hi.tolist(), lo.tolist())]


def rule_lines(prefix: np.ndarray, depth: np.ndarray, next_hop: np.ndarray) -> str:
    p = prefix.astype(np.uint32)
    octets = [((p >> np.uint32(s)) & np.uint32(0xFF)).tolist() for s in (24, 16, 8, 0)]
    return "".join(f"R{a}.{b}.{c}.{d}/{n} {h}\n"
                   for a, b, c, d, n, h in zip(*octets, depth.tolist(), next_hop.tolist()))


def write_rules(path: Path, prefix: np.ndarray, depth: np.ndarray, next_hop: np.ndarray,
                header: str = "", family: str = "ipv4") -> None:
    """The rule file of generate() (ipv4) or generate6() (ipv6) arrays."""
    with open(path, "w") as f:
        for line in header.splitlines():
            f.write(f"# {line}\n")
        f.write((rule_lines6 if family == "ipv6" else rule_lines)(prefix, depth, next_hop))


def destinations_in(prefix: np.ndarray, depth: np.ndarray, n: int,
                    rng: np.random.Generator) -> np.ndarray:
    """n addresses, each inside a route drawn uniformly from the table (its
    longest match may be a more specific route)."""
    pick = rng.integers(0, prefix.size, size=n)
    host_bits = (np.uint64(1) << (np.uint64(32) - depth[pick].astype(np.uint64))) - np.uint64(1)
    host = rng.integers(0, 2 ** 32, size=n, dtype=np.uint64) & host_bits
    return (prefix[pick].astype(np.uint64) | host).astype(np.uint32)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="rule file to write")
    ap.add_argument("--family", choices=("ipv4", "ipv6"), default="ipv4",
                    help="IPv4 (l3fwd --rule_ipv4) or IPv6 (--rule_ipv6) table (default ipv4)")
    ap.add_argument("--routes", type=int, default=None,
                    help="number of prefixes (default 1000000 for ipv4, 200000 for ipv6)")
    ap.add_argument("--ports", type=int, default=16,
                    help="next hops drawn uniformly from 0..ports-1 (default 16, at most 256)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    six = a.family == "ipv6"
    if a.routes is None:
        a.routes = ROUTES6_DEFAULT if six else 1_000_000
    try:
        prefix, depth, next_hop = (generate6 if six else generate)(a.routes, a.ports, a.seed)
    except ValueError as e:
        ap.error(str(e))  # exit 2
    bits = 128 if six else 32
    counts = np.bincount(depth, minlength=bits + 1)
    header = (f"tools/routegen.py --family {a.family} --routes {a.routes} --ports {a.ports} "
              f"--seed {a.seed}: {prefix.size} modelled {'IPv6' if six else 'IPv4'} routes\n" +
              "routes by depth: " + " ".join(f"/{d}:{counts[d]}" for d in range(bits + 1) if counts[d]))
    write_rules(a.out, prefix, depth, next_hop, header, a.family)
    main_len = 48 if six else 24
    print(f"{a.out}: {prefix.size} routes (modelled), /{main_len} share "
          f"{counts[main_len] / prefix.size:.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "routegen.py"))
