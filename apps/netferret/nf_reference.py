#!/usr/bin/env python3
"""netferret's Python reference: the server's query pipeline written again
from the same facts, with independent libraries where they exist (Pillow
decodes the JPEG, POT's network simplex computes the EMD), and numpy for
the rest, repeating the C core's arithmetic in the same order so that
every byte and float up to the ranking is the same:

  decode     Pillow (libjpeg-turbo, islow IDCT, fancy upsampling: the
             server's settings)
  resize     Lanczos-3 to 128x128, weights from math.sin (libm's, as C's),
             each pass in double, taps in order, rounded to 8 bits
  HSV        integer arithmetic
  segment    SRM (nf_srm.h): the same pairs, order, predicate and merges
  extract    the 14 weighted features from exact integer moments
  index      the database's own LSH parameters; the exact 2K nearest
             among a query region's bucket mates
  rank       ot.emd2 (POT) on every candidate image; the top K by distance,
             then image index

The database (db.bin) is read with numpy; its vectors were made by the C
extractor, which the tests check on a sample of images against
features() here.

    python3 apps/netferret/nf_reference.py TIER_DIR [--queries N]   # answers, ferret's format
"""
from __future__ import annotations

import argparse
import io
import math
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import netferret_input as ni  # noqa: E402

SIDE = 128
PIXELS = SIDE * SIDE
Q = 128
MIN_REGION = 81
DIM = 14
FEATURE_WEIGHTS = (6.0, 3.0, 1.5, 4.0, 2.0, 1.0, 4.0, 2.0, 1.0, 0.2, 0.4, 0.04, 0.007, 0.007)
SECTIONS = ("img_first", "owner", "vec", "weight", "size", "name_off", "names", "lsh_a", "lsh_b",
            "lsh_r", "start", "entry")
HEADER = struct.Struct("<8s8IdQQQ12Q")  # nf_db.h's struct nf_db_header


# --- the database ------------------------------------------------------------------------------

@dataclass
class Db:
    n_images: int
    n_vectors: int
    top_k: int
    L: int
    M: int
    H: int
    W: float
    img_first: np.ndarray
    owner: np.ndarray
    vec: np.ndarray  # (vectors, 14) float32
    weight: np.ndarray
    size: np.ndarray
    names: list[str]
    a: np.ndarray  # (L, M, 14)
    b: np.ndarray  # (L, M)
    r: np.ndarray  # (L, M) uint32
    start: np.ndarray  # (L, H + 1)
    entry: np.ndarray  # (L, vectors)

    def image_vectors(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = int(self.img_first[i]), int(self.img_first[i + 1])
        return self.vec[s:e], self.weight[s:e]


def read_db(path: Path) -> Db:
    raw = path.read_bytes()
    f = HEADER.unpack_from(raw, 0)
    magic, (dim, n_img, n_vec, L, M, H, names_bytes, top_k) = f[0], f[1:9]
    W, off = f[9], dict(zip(SECTIONS, f[13:]))
    if magic != b"NFDB\0\0\0\1" or dim != DIM:
        raise ValueError(f"{path}: not a netferret database")

    def arr(sec: str, dtype: str, n: int) -> np.ndarray:
        return np.frombuffer(raw, dtype=dtype, count=n, offset=off[sec])

    names_raw = raw[off["names"]:off["names"] + names_bytes]
    name_off = arr("name_off", "<u4", n_img)
    names = [names_raw[o:names_raw.index(b"\0", o)].decode() for o in name_off]
    return Db(n_img, n_vec, top_k, L, M, H, W, arr("img_first", "<u4", n_img + 1), arr("owner", "<u4", n_vec),
              arr("vec", "<f4", n_vec * DIM).reshape(n_vec, DIM), arr("weight", "<f4", n_vec),
              arr("size", "<u4", n_vec), names, arr("lsh_a", "<f8", L * M * DIM).reshape(L, M, DIM),
              arr("lsh_b", "<f8", L * M).reshape(L, M), arr("lsh_r", "<u4", L * M).reshape(L, M),
              arr("start", "<u4", L * (H + 1)).reshape(L, H + 1), arr("entry", "<u4", L * n_vec).reshape(L, n_vec))


# --- load: decode, resize, HSV -----------------------------------------------------------------

def decode(jpeg: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"))


def lanczos3(t: float) -> float:
    if t == 0.0:
        return 1.0
    if t <= -3 or t >= 3:
        return 0.0
    return 3.0 * math.sin(math.pi * t) * math.sin(math.pi * t / 3.0) / (math.pi * math.pi * t * t)


def weights(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(SIDE, taps) weights, zero-padded, and their input indices (nf_lanczos_weights)."""
    scale = n / SIDE
    fscale = scale if scale > 1.0 else 1.0
    support = 3 * fscale
    rows = []
    for x in range(SIDE):
        center = (x + 0.5) * scale
        a, b = max(0, math.floor(center - support)), min(n, math.ceil(center + support))
        w = [lanczos3(((i + 0.5) - center) / fscale) for i in range(a, b)]
        s = 0.0
        for v in w:
            s = s + v
        rows.append((a, [v / s for v in w] if s != 0.0 else w))
    taps = max(len(w) for _, w in rows)
    wt = np.zeros((SIDE, taps))
    idx = np.zeros((SIDE, taps), dtype=np.int64)
    for x, (a, w) in enumerate(rows):
        wt[x, :len(w)] = w
        idx[x, :] = np.minimum(np.arange(a, a + taps), n - 1)
    return wt, idx


def _round(acc: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(acc + 0.5), 0, 255).astype(np.uint8)


def resize(rgb: np.ndarray) -> np.ndarray:
    """(h, w, 3) -> (128, 128, 3): each pass in double, taps in order (padding adds exact zeros)."""
    h, w, _ = rgb.shape
    img = rgb.astype(np.float64)
    wt, idx = weights(w)
    acc = np.zeros((h, SIDE, 3))
    for k in range(wt.shape[1]):
        acc = acc + wt[None, :, k, None] * img[:, idx[:, k], :]
    mid = _round(acc).astype(np.float64)
    wt, idx = weights(h)
    acc = np.zeros((SIDE, SIDE, 3))
    for k in range(wt.shape[1]):
        acc = acc + wt[:, k, None, None] * mid[idx[:, k], :, :]
    return _round(acc)


def hsv(rgb: np.ndarray) -> np.ndarray:
    c = rgb.reshape(-1, 3).astype(np.int64)
    r, g, b = c[:, 0], c[:, 1], c[:, 2]
    mx, mn = c.max(axis=1), c.min(axis=1)
    d = mx - mn
    num = np.where(mx == r, np.where(g - b < 0, g - b + 6 * d, g - b),
                   np.where(mx == g, 2 * d + b - r, 4 * d + r - g))
    h = np.where(d == 0, 0, 255 * num // np.maximum(6 * d, 1))
    s = np.where(mx == 0, 0, d * 255 // np.maximum(mx, 1))
    return np.stack([h, s, mx], axis=1).astype(np.uint8)


# --- segment: SRM ------------------------------------------------------------------------------

B2 = [0.0] + [65536.0 / (2.0 * Q * n) * ((n if n < 256 else 256.0) * math.log(1.0 + n)
                                          + 2.0 * math.log(6.0 * PIXELS)) for n in range(1, PIXELS + 1)]


def srm(rgb: np.ndarray) -> tuple[int, np.ndarray]:
    """Labels (raster order of first pixels) of a 128x128 RGB image (nf_srm.h's steps)."""
    px = rgb.reshape(PIXELS, 3).astype(np.int64)
    p = np.arange(PIXELS)
    east = np.full(PIXELS, -1)
    east[:-1] = np.abs(px[:-1] - px[1:]).max(axis=1)
    east[p % SIDE == SIDE - 1] = -1
    south = np.full(PIXELS, -1)
    south[:-SIDE] = np.abs(px[:-SIDE] - px[SIDE:]).max(axis=1)
    ids = np.stack([p * 2, p * 2 + 1], axis=1).reshape(-1)  # each pixel's east, then south
    wts = np.stack([east, south], axis=1).reshape(-1)
    keep = wts >= 0
    ids, wts = ids[keep], wts[keep]
    order = ids[np.argsort(wts, kind="stable")].tolist()
    parent = list(range(PIXELS))
    size = [1] * PIXELS
    rank = [0] * PIXELS
    sums = px.tolist()

    def find(x: int) -> int:
        r = x
        while parent[r] != r:
            r = parent[r]
        while parent[x] != r:
            parent[x], x = r, parent[x]
        return r

    def unite(a: int, b: int) -> None:
        if rank[a] < rank[b]:
            a, b = b, a
        elif rank[a] == rank[b]:
            rank[a] += 1
        parent[b] = a
        size[a] += size[b]
        sa, sb = sums[a], sums[b]
        sums[a] = [sa[0] + sb[0], sa[1] + sb[1], sa[2] + sb[2]]

    for e in order:
        q = e >> 1
        a, b = find(q), find(q + SIDE if e & 1 else q + 1)
        if a == b:
            continue
        na, nb = size[a], size[b]
        bound = math.sqrt(B2[na] + B2[nb])
        sa, sb = sums[a], sums[b]
        if all(abs(sa[c] / float(na) - sb[c] / float(nb)) < bound for c in range(3)):
            unite(a, b)
    for y in range(SIDE):
        for x in range(1, SIDE):
            q = y * SIDE + x
            a, b = find(q - 1), find(q)
            if a != b and (size[a] < MIN_REGION or size[b] < MIN_REGION):
                unite(a, b)
    label: dict[int, int] = {}
    out = np.empty(PIXELS, dtype=np.int64)
    for q in range(PIXELS):
        out[q] = label.setdefault(find(q), len(label))
    return len(label), out


# --- extract -----------------------------------------------------------------------------------

def extract(hsv_px: np.ndarray, labels: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    v = hsv_px.astype(np.int64)
    s1, s2, s3 = (np.zeros((n, 3), dtype=np.int64) for _ in range(3))
    np.add.at(s1, labels, v)
    np.add.at(s2, labels, v * v)
    np.add.at(s3, labels, v * v * v)
    p = np.arange(PIXELS)
    xs, ys = p % SIDE, p // SIDE
    cnt = np.bincount(labels, minlength=n)
    sx = np.zeros(n, dtype=np.int64)
    sy = np.zeros(n, dtype=np.int64)
    np.add.at(sx, labels, xs)
    np.add.at(sy, labels, ys)
    x0 = np.full(n, SIDE)
    np.minimum.at(x0, labels, xs)
    x1 = np.zeros(n, dtype=np.int64)
    np.maximum.at(x1, labels, xs)
    y0 = np.full(n, SIDE)
    np.minimum.at(y0, labels, ys)
    y1 = np.zeros(n, dtype=np.int64)
    np.maximum.at(y1, labels, ys)
    root_sum = 0.0
    for r in range(n):
        root_sum = root_sum + math.sqrt(float(cnt[r]))
    vec = np.empty((n, DIM), dtype=np.float32)
    wt = np.empty(n, dtype=np.float32)
    for r in range(n):
        nn, dn = int(cnt[r]), float(cnt[r])
        f = []
        for c in range(3):
            a1, a2, a3 = int(s1[r, c]), int(s2[r, c]), int(s3[r, c])
            m2 = nn * a2 - a1 * a1
            m3 = nn * nn * a3 - 3 * nn * a1 * a2 + 2 * a1 * a1 * a1
            f += [float(a1) / dn / 255.0, math.sqrt(float(m2) / (dn * dn)) / 255.0,
                  math.cbrt(float(m3) / (dn * dn * dn)) / 255.0]
        dx, dy = float(x1[r] - x0[r] + 1), float(y1[r] - y0[r] + 1)
        f += [math.log(dy / dx), dn / (dx * dy), math.log(dx * dy), float(sy[r]) / dn, float(sx[r]) / dn]
        vec[r] = np.array([f[i] * FEATURE_WEIGHTS[i] for i in range(DIM)], dtype=np.float64).astype(np.float32)
        wt[r] = np.float32(math.sqrt(dn) / root_sum)
    return vec, wt, cnt.astype(np.uint32)


def features(jpeg: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A JPEG's region vectors, weights and sizes, as the server's first three stages make them."""
    rgb = resize(decode(jpeg))
    n, labels = srm(rgb)
    return extract(hsv(rgb), labels, n)


# --- index and rank ----------------------------------------------------------------------------

def bucket(db: Db, l: int, v: np.ndarray) -> int:
    key = 0
    for j in range(db.M):
        a = db.a[l, j]
        dot = 0.0
        for d in range(DIM):
            dot = dot + float(a[d]) * float(v[d])
        h = math.floor((dot + float(db.b[l, j])) / db.W)
        key = (key + int(db.r[l, j]) * (h & 0xFFFFFFFF)) & 0xFFFFFFFF
    return key & (db.H - 1)


def dist2(q: np.ndarray, vs: np.ndarray) -> np.ndarray:
    acc = np.zeros(len(vs))
    for d in range(DIM):
        diff = float(q[d]) - vs[:, d].astype(np.float64)
        acc = acc + diff * diff
    return acc


def neighbours(db: Db, q: np.ndarray, k: int) -> list[int]:
    """The exact 2K nearest of q's bucket mates (ids), nearest first, then lower id."""
    mates: set[int] = set()
    for l in range(db.L):
        b = bucket(db, l, q)
        mates.update(db.entry[l, db.start[l, b]:db.start[l, b + 1]].tolist())
    ids = sorted(mates)
    if not ids:
        return []
    arr = np.array(ids)
    d = dist2(q, db.vec[arr])
    return arr[np.lexsort((arr, d))][:2 * k].tolist()


def emd(qv: np.ndarray, qw: np.ndarray, iv: np.ndarray, iw: np.ndarray) -> float:
    import ot

    a = qw.astype(np.float64) / qw.astype(np.float64).sum()
    b = iw.astype(np.float64) / iw.astype(np.float64).sum()
    m = ot.dist(qv.astype(np.float64), iv.astype(np.float64), metric="euclidean")
    return float(ot.emd2(a, b, m))


@dataclass
class Result:
    regions: int
    vec: np.ndarray
    weight: np.ndarray
    hits: list[list[int]]
    cand: list[int]
    cand_dist: list[float]
    top: list[tuple[str, float]]


def query(db: Db, jpeg: bytes, k: int) -> Result:
    vec, wt, _ = features(jpeg)
    hits = [neighbours(db, v, k) for v in vec]
    cand: list[int] = []
    seen: set[int] = set()
    for h in hits:
        for i in h:
            img = int(db.owner[i])
            if img not in seen:
                seen.add(img)
                cand.append(img)
    dist = [emd(vec, wt, *db.image_vectors(c)) for c in cand]
    order = sorted(range(len(cand)), key=lambda i: (dist[i], cand[i]))[:k]
    return Result(len(vec), vec, wt, hits, cand, dist, [(db.names[cand[i]], dist[i]) for i in order])


def parse_answer(text: str) -> list[tuple[str, float]] | str:
    """The server's answer text: [(image, distance)], or the error word of "!<word>"."""
    if text.startswith("!"):
        return text[1:]
    out = []
    for item in text.split("\t")[1:]:
        name, _, d = item.rpartition(":")
        out.append((name, float(d)))
    return out


def same_answer(got: list[tuple[str, float]] | str, want: Sequence[tuple[str, float]],
                rel: float = 1e-5) -> bool:
    """The server's answer (distances printed with %g) against the reference's: the same
    images, each at its distance to rel, positions to rel too (so two images may swap
    only where their distances agree to rel)."""
    if isinstance(got, str) or len(got) != len(want):
        return False
    close = lambda x, y: abs(x - y) <= rel * max(abs(y), 1e-12) + 1e-12  # noqa: E731
    ref = dict(want)
    return all(n in ref and close(d, ref[n]) and close(d, want[i][1]) for i, (n, d) in enumerate(got))


def category(name: str) -> str:
    """cCCCCC of a database image's or a query's name (netferret_input.py)."""
    return next(p for p in name.removesuffix(".jpg").split("-") if p.startswith("c"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tier", type=Path, help="a tier's directory (netferret_input.py)")
    ap.add_argument("--queries", type=int, help="the first N queries only")
    ap.add_argument("--k", type=int, help="results per query (default: the tier's)")
    a = ap.parse_args(argv)
    db = read_db(a.tier / "db.bin")
    k = a.k or db.top_k
    for name, jpeg in ni.read_pack(a.tier / "queries.pack")[:a.queries]:
        r = query(db, jpeg, k)
        print(name + "".join(f"\t{n}:{d:g}" for n, d in r.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
