#!/usr/bin/env python3
"""netstreamcluster's input tiers: a deterministic function of (tier, seed),
never downloaded.  A tier's file is one stream as a client sends it (the
32-byte header, then the points; README.md, "The client protocol"): points
drawn from a Gaussian mixture (16 components, centres uniform in
[-1000, 1000] per dimension, standard deviations 20 to 120), rounded to
whole numbers and clipped to [-2047, 2047], as float32.

Sizes follow PARSEC's streamcluster inputs (points x dimensions; test is
ours: CI seconds); the chunk is smaller than PARSEC's (whose simsmall to
simlarge are one chunk) so that a stream is many chunks, and capped at
4,096 points (the app's --max-chunk):

    tier       points     dim  chunk  k
    test         2,048      8    512  5..10
    simsmall     4,096     32  1,024  10..20
    simmedium    8,192     64  2,048  10..20
    simlarge    16,384    128  4,096  10..20
    native   1,000,000    128  4,096  10..20

The bits come from numpy's PCG64 raw output (random_raw, stable across
numpy versions) through a Box-Muller transform; the rounding to whole
numbers makes the file the same wherever numpy's log and cos differ in the
last bit (unless a value falls within 1e-13 of a half, which no seed here
does; the reference and the app read the same file either way).

    python3 apps/netstreamcluster/netstreamcluster_input.py --tier test --out in.bin
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runtime" / "stack"))
import tier_input  # noqa: E402

HEADER = struct.Struct("<4sIQIHHQ")  # magic, dim, points, chunk, kmin, kmax, seed
MAGIC = b"PPSC"
COMPONENTS = 16
BLOCK = 1 << 16  # points generated at a time


class Tier(NamedTuple):
    points: int
    dim: int
    chunk: int
    kmin: int
    kmax: int


TIERS: dict[str, Tier] = {
    "test": Tier(2048, 8, 512, 5, 10),
    "simsmall": Tier(4096, 32, 1024, 10, 20),
    "simmedium": Tier(8192, 64, 2048, 10, 20),
    "simlarge": Tier(16384, 128, 4096, 10, 20),
    "native": Tier(1_000_000, 128, 4096, 10, 20),
}


def header(t: Tier, seed: int) -> bytes:
    return HEADER.pack(MAGIC, t.dim, t.points, t.chunk, t.kmin, t.kmax, seed)


def _uniform(g: np.random.PCG64, n: int) -> np.ndarray:
    return (g.random_raw(n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def write_input(tier: str, seed: int, out: BinaryIO) -> int:
    """Writes the tier's stream (header and points); returns its bytes."""
    if tier not in TIERS:
        raise ValueError(f"tier {tier!r}: expected one of {', '.join(TIERS)}")
    t = TIERS[tier]
    g = np.random.PCG64(seed * 1000 + list(TIERS).index(tier))
    centres = np.round(_uniform(g, COMPONENTS * t.dim) * 2000 - 1000).reshape(COMPONENTS, t.dim)
    sds = 20 + np.floor(_uniform(g, COMPONENTS) * 100)
    out.write(header(t, seed))
    n = HEADER.size
    for b0 in range(0, t.points, BLOCK):
        m = min(BLOCK, t.points - b0)
        comp = (g.random_raw(m) % np.uint64(COMPONENTS)).astype(np.int64)
        u1 = 1.0 - _uniform(g, m * t.dim)  # (0, 1]
        u2 = _uniform(g, m * t.dim)
        normal = (np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)).reshape(m, t.dim)
        pts = np.clip(np.round(centres[comp] + normal * sds[comp, None]), -2047, 2047)
        b = pts.astype("<f4").tobytes()
        out.write(b)
        n += len(b)
    return n


def size(tier: str) -> int:
    t = TIERS[tier]
    return HEADER.size + 4 * t.points * t.dim


def input_file(tier: str, seed: int, cache_dir: Path) -> Path:
    """The tier's input as a file in cache_dir, made once."""
    return tier_input.cached("netstreamcluster", tier, seed, cache_dir, size(tier), write_input)


def main(argv: list[str] | None = None) -> int:
    return tier_input.main(__doc__, TIERS, write_input, argv)


if __name__ == "__main__":
    sys.exit(main())
