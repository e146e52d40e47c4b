#!/usr/bin/env python3
"""Generate a full-size IPv4 Internet routing table in DPDK l3fwd's LPM rule
format (lines `R<address>/<depth> <next hop>`, read by `ipfwd --lookup lpm
--routes FILE` and by l3fwd's `--rule_ipv4`).

The table is modelled, not measured: prefixes are drawn uniformly over the
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
than /24 are filtered by most networks and left out."""
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


def rule_lines(prefix: np.ndarray, depth: np.ndarray, next_hop: np.ndarray) -> str:
    p = prefix.astype(np.uint32)
    octets = [((p >> np.uint32(s)) & np.uint32(0xFF)).tolist() for s in (24, 16, 8, 0)]
    return "".join(f"R{a}.{b}.{c}.{d}/{n} {h}\n"
                   for a, b, c, d, n, h in zip(*octets, depth.tolist(), next_hop.tolist()))


def write_rules(path: Path, prefix: np.ndarray, depth: np.ndarray, next_hop: np.ndarray,
                header: str = "") -> None:
    with open(path, "w") as f:
        for line in header.splitlines():
            f.write(f"# {line}\n")
        f.write(rule_lines(prefix, depth, next_hop))


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
    ap.add_argument("--routes", type=int, default=1_000_000,
                    help="number of prefixes (default 1000000)")
    ap.add_argument("--ports", type=int, default=16,
                    help="next hops drawn uniformly from 0..ports-1 (default 16, at most 256)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    try:
        prefix, depth, next_hop = generate(a.routes, a.ports, a.seed)
    except ValueError as e:
        ap.error(str(e))  # exit 2
    counts = np.bincount(depth, minlength=33)
    header = (f"tools/routegen.py --routes {a.routes} --ports {a.ports} --seed {a.seed}: "
              f"{prefix.size} modelled IPv4 routes\n" +
              "routes by depth: " + " ".join(f"/{d}:{counts[d]}" for d in range(33) if counts[d]))
    write_rules(a.out, prefix, depth, next_hop, header)
    print(f"{a.out}: {prefix.size} routes (modelled), /24 share {counts[24] / prefix.size:.3f}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "routegen.py"))
