#!/usr/bin/env python3
"""netstreamcluster's reference: the same result as the app, from the same
input file, in Python with numpy (sc_cluster.c's steps, in the same order).

The app's output for a stream is a function of its points alone: chunks
are cut by point count (never by TCP segment), each chunk is clustered with
a seed made from the stream's seed and the chunk's index, and the final
clustering of the kept centres with one made from the stream's seed.  Every
floating-point operation here is the app's, in the same order: distances in
double, summed dimension by dimension (a loop over dimensions, vectorised
over points); every other sum point by point in index order (np.cumsum and
np.bincount are sequential; np.sum is not, and is not used for a value
that decides anything).  IEEE-754 double operations give the same bits in
the same order, and the C core is built with -ffp-contract=off (no fused
multiply-add), so the reference and the app agree exactly: the test
compares every bit of the centres, weights and cost (coordinates as the
app prints them, %.9g: a float32 exactly).

    python3 apps/netstreamcluster/sc_reference.py in.bin            # one JSON object
"""
from __future__ import annotations

import argparse
import json
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MASK = (1 << 64) - 1
SC_Z_STEPS, SC_PASSES, SC_CANDS_PER_K, SC_STOP_PER_MILLE = 40, 8, 8, 1
SEED_SPEEDY, SEED_SEARCH = 0x5EED000000000001, 0x5EED000000000002
HEADER = struct.Struct("<4sIQIHHQ")  # magic, dim, points, chunk, kmin, kmax, seed
MAGIC = b"PPSC"


class Rng:
    """splitmix64, as sc_cluster.c's next()."""

    def __init__(self, seed: int) -> None:
        self.s = seed & MASK

    def next(self) -> int:
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def chunk_seed(stream_seed: int, chunk: int) -> int:
    return (stream_seed + (chunk + 1) * 0x9E3779B97F4A7C15) & MASK


def final_seed(stream_seed: int) -> int:
    return stream_seed ^ 0xF1A1F1A1F1A1F1A1


def seqsum(a: np.ndarray) -> float:
    """Sum in index order (as a C loop from 0.0)."""
    return float(np.cumsum(a)[-1]) if len(a) else 0.0


@dataclass
class Result:
    k: int
    z: float
    cost: float
    centre: list[int]  # point indices, ascending
    weight: list[int]


def cluster(pts: np.ndarray, weight: np.ndarray | None, kmin: int, kmax: int, seed: int) -> Result:
    """sc_cluster(): pts (n, dim) float32, weight (n,) integers or None."""
    n, dim = pts.shape
    if n == 0:
        return Result(0, 0.0, 0.0, [], [])
    wi = np.ones(n, dtype=np.int64) if weight is None else weight.astype(np.int64)
    if n <= kmax:
        return Result(n, 0.0, 0.0, list(range(n)), [int(x) for x in wi])
    wts = wi.astype(np.float64)
    cols = [np.ascontiguousarray(pts[:, j], dtype=np.float64) for j in range(dim)]

    def wdist(x: int) -> np.ndarray:
        acc = np.zeros(n)
        for j in range(dim):
            d = cols[j] - cols[j][x]
            acc = acc + d * d
        return wts * acc

    r = Rng(seed)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = r.next() % (i + 1)
        order[i], order[j] = order[j], order[i]
    order_a = np.array(order)
    r = Rng(seed ^ SEED_SPEEDY)
    u = np.array([(r.next() >> 11) * 2.0 ** -53 for _ in range(n)])

    st: dict[str, Any] = {}

    def speedy(z: float, limit: int) -> int:
        first = order[0]
        is_open = np.zeros(n, dtype=bool)
        is_open[first] = True
        cost = wdist(first)
        assign = np.full(n, first, dtype=np.int64)
        k, pos = 1, 1
        while pos < n:
            hit = np.nonzero(u[pos:] * z < cost[order_a[pos:]])[0]
            if len(hit) == 0:
                break
            pos += int(hit[0])
            p = order[pos]
            is_open[p] = True
            k += 1
            if k > limit:
                break
            d = wdist(p)
            better = d < cost
            cost[better] = d[better]
            assign[better] = p
            pos += 1
        st.update(cost=cost, assign=assign, is_open=is_open)
        return k

    lo, hi = 0.0, seqsum(wdist(order[0]))
    z, k, found = 0.0, 0, False
    for _ in range(SC_Z_STEPS):
        z = (lo + hi) * 0.5
        k = speedy(z, kmax)
        if k > kmax:
            lo = z
        elif k < kmin:
            hi = z
        else:
            found = True
            break
    if not found:
        z = hi
        k = speedy(z, 1 << 40)
        while k > kmax:
            z = z * 2 if z > 0 else 1.0
            k = speedy(z, 1 << 40)
    cost, assign, is_open = st["cost"], st["assign"], st["is_open"]

    def allowed(k2: int) -> bool:
        return (k2 >= kmin or k2 >= k) and (k2 <= kmax or k2 <= k)

    def pgain(x: int) -> float:
        nonlocal k
        if is_open[x]:
            return 0.0
        xc = wdist(x)
        sw = xc < cost
        gain = seqsum(np.where(sw, cost - xc, 0.0))
        keep = ~sw
        lower = np.bincount(assign[keep], weights=(xc - cost)[keep], minlength=n)
        closing = is_open & (z > lower)
        k2 = k + 1 - int(closing.sum())
        if not allowed(k2):
            return 0.0
        total = gain - z
        for f in np.nonzero(closing)[0]:
            total += z - float(lower[f])
        if not total > 0:
            return 0.0
        move = sw | closing[assign]
        cost[move] = xc[move]
        assign[move] = x
        is_open[closing] = False
        is_open[x] = True
        assign[x] = x
        k = k2
        return total

    r = Rng(seed ^ SEED_SEARCH)
    cands = min(n, SC_CANDS_PER_K * kmax)
    for _ in range(SC_PASSES):
        change = 0.0
        for _ in range(cands):
            change += pgain(r.next() % n)
        if change * (1000.0 / SC_STOP_PER_MILLE) <= seqsum(cost) + z * float(k):
            break
    centre = [int(f) for f in np.nonzero(is_open)[0]]
    wsum = np.bincount(assign, weights=None, minlength=n) if weight is None else \
        np.bincount(assign, weights=wi.astype(np.float64), minlength=n)
    return Result(len(centre), z, seqsum(cost), centre, [int(wsum[f]) for f in centre])


@dataclass
class Header:
    dim: int
    points: int
    chunk: int
    kmin: int
    kmax: int
    seed: int


def read_header(b: bytes) -> Header:
    magic, dim, points, chunk, kmin, kmax, seed = HEADER.unpack_from(b, 0)
    if magic != MAGIC:
        raise ValueError(f"not a netstreamcluster stream (magic {magic!r})")
    return Header(dim, points, chunk, kmin, kmax, seed)


def stream_result(data: bytes, points: int | None = None) -> dict[str, Any]:
    """The app's result for a stream's bytes (header and records): the
    final centres, their weights, the cost.  points: only the first ones
    (what a short stream delivered)."""
    h = read_header(data)
    body = np.frombuffer(data, dtype="<f4", offset=HEADER.size,
                         count=(len(data) - HEADER.size) // 4 // h.dim * h.dim)
    pts = body.reshape(-1, h.dim)
    if points is not None:
        pts = pts[:points]
    pts = pts[:h.points]
    cen: list[np.ndarray] = []
    wts: list[int] = []
    chunks = 0
    for c0 in range(0, len(pts), h.chunk):
        part = pts[c0:c0 + h.chunk]
        res = cluster(part, None, h.kmin, h.kmax, chunk_seed(h.seed, chunks))
        cen += [part[f] for f in res.centre]
        wts += res.weight
        chunks += 1
    allc = np.array(cen, dtype=np.float32).reshape(-1, h.dim)
    fin = cluster(allc, np.array(wts, dtype=np.int64), h.kmin, h.kmax, final_seed(h.seed))
    return {"points": int(len(pts)), "dim": h.dim, "chunks": chunks, "chunk_centres": len(wts),
            "k": fin.k, "z": fin.z, "cost": fin.cost,
            "centres": [{"weight": w, "coords": [float("%.9g" % v) for v in allc[f]]}
                        for f, w in zip(fin.centre, fin.weight)]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path, help="a stream file (netstreamcluster_input.py)")
    ap.add_argument("--points", type=int, help="only the first N points (a short stream)")
    a = ap.parse_args(argv)
    print(json.dumps(stream_result(a.input.read_bytes(), a.points)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
