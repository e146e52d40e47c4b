#!/usr/bin/env python3
"""netferret's input tiers, made here from (tier, seed), never downloaded:
synthetic JPEG images in categories, the queries drawn from the same
categories, and the database built from the images by the server's own
extractor and index builder (nf-build).

A category is a layout: a background colour and 3 to 6 coloured shapes
(rectangles and ellipses, some striped).  Each image of a category moves,
resizes and recolours every shape a little, picks one of PARSEC's query
sizes (128x96 to 128x123, or portrait), and adds pixel noise; so the
right neighbours of every query, the images of its category, are known
by construction (names say it: database images cCCCCC-IIII.jpg, queries
qNNNN-cCCCCC.jpg).  Every JPEG is under 16 KB (PARSEC's client buffer).
All randomness is integer arithmetic on numpy's PCG64 raw output (stable
across numpy versions and machines); the JPEGs are encoded with Pillow.

Sizes are PARSEC's ferret inputs':

    tier       queries  images  top K  categories
    test             1       1      5           1
    simsmall        16   3,544     10         141
    simmedium       64  13,787     10         551
    simlarge       256  34,973     10       1,398
    native       3,500  59,695     50       2,387

A tier is a directory: queries.pack and images.pack (nf_pack.h: named
JPEGs), db.bin (nf_db.h: vectors, weights, names, the LSH index) and
manifest.json (the tier, its counts and the SHA-256 of each file).  A
cached tier is used only when every file still has its digest; otherwise
it is made again.

    python3 apps/netferret/netferret_input.py --tier simsmall --out DIR [--build build]
"""
from __future__ import annotations

import argparse
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, NamedTuple

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runtime" / "stack"))
from nf_pack import read_pack, write_pack  # noqa: E402,F401  (re-exported)
from tier_input import sha256_file  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GENERATOR = 1  # bumped when the images change: a cached tier of another version is made again
MAX_JPEG = 16000
PER_CATEGORY = 25
SIZES = ((128, 96), (128, 104), (128, 112), (128, 123), (96, 128), (112, 128))


class Tier(NamedTuple):
    queries: int
    images: int
    k: int


TIERS: dict[str, Tier] = {
    "test": Tier(1, 1, 5),
    "simsmall": Tier(16, 3544, 10),
    "simmedium": Tier(64, 13787, 10),
    "simlarge": Tier(256, 34973, 10),
    "native": Tier(3500, 59695, 50),
}
FILES = ("queries.pack", "images.pack", "db.bin")


def categories(tier: str) -> int:
    return max(1, TIERS[tier].images // PER_CATEGORY)


class Bits:
    """Integers from numpy's PCG64 raw output (the same on every machine)."""

    def __init__(self, *key: int):
        self.g = np.random.PCG64(np.random.SeedSequence(list(key)))

    def ints(self, n: int, lo: int, hi: int) -> np.ndarray:
        """n integers in [lo, hi]."""
        return (self.g.random_raw(n) % np.uint64(hi - lo + 1)).astype(np.int64) + lo

    def int(self, lo: int, hi: int) -> int:
        return int(self.ints(1, lo, hi)[0])


class Shape(NamedTuple):
    ellipse: bool
    cx: int  # centre and half sizes, in 1/1000 of the image
    cy: int
    rx: int
    ry: int
    hsv: tuple[int, int, int]  # hue 0..359, saturation and value 0..100
    stripes: int  # period in pixels, 0 for none


def layout(seed: int, tier: str, cat: int) -> tuple[tuple[int, int, int], list[Shape]]:
    b = Bits(seed, list(TIERS).index(tier), 0, cat)
    bg = (b.int(0, 359), b.int(0, 60), b.int(20, 95))
    shapes = []
    for _ in range(b.int(3, 6)):
        shapes.append(Shape(bool(b.int(0, 1)), b.int(150, 850), b.int(150, 850), b.int(80, 280),
                            b.int(80, 280), (b.int(0, 359), b.int(35, 100), b.int(25, 100)),
                            b.int(4, 10) if b.int(0, 2) == 0 else 0))
    return bg, shapes


def hsv_rgb(h: int, s: int, v: int) -> np.ndarray:
    """Hue in degrees, saturation and value in percent, to RGB 0..255 (exact arithmetic)."""
    c = v * s / 10000.0
    x = c * (1 - abs((h / 60.0) % 2 - 1))
    m = v / 100.0 - c
    r, g, bl = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][h // 60 % 6]
    return np.array([(r + m) * 255, (g + m) * 255, (bl + m) * 255])


def draw(seed: int, tier: str, cat: int, kind: int, index: int) -> np.ndarray:
    """One image of category cat (kind 1: database, 2: query), RGB uint8."""
    bg, shapes = layout(seed, tier, cat)
    b = Bits(seed, list(TIERS).index(tier), kind, index)
    w, h = SIZES[b.int(0, len(SIZES) - 1)]
    ys, xs = np.mgrid[0:h, 0:w]
    fx, fy = (xs * 1000 + 500) // w, (ys * 1000 + 500) // h  # pixel centres in 1/1000
    img = np.empty((h, w, 3))
    img[:] = hsv_rgb(*jitter(b, bg))
    for s in shapes:
        cx, cy = s.cx + b.int(-40, 40), s.cy + b.int(-40, 40)
        rx, ry = s.rx * b.int(880, 1120) // 1000, s.ry * b.int(880, 1120) // 1000
        dx, dy = (fx - cx).astype(np.float64), (fy - cy).astype(np.float64)
        inside = (dx * dx / (rx * rx) + dy * dy / (ry * ry) <= 1.0) if s.ellipse else \
            (np.abs(dx) <= rx) & (np.abs(dy) <= ry)
        col = hsv_rgb(*jitter(b, s.hsv))
        if s.stripes:
            dark = ((xs + ys + b.int(0, s.stripes)) // (s.stripes // 2 + 1)) % 2 == 1
            img[inside & ~dark] = col
            img[inside & dark] = col * 0.7
        else:
            img[inside] = col
    amp = b.int(2, 7)
    noise = b.ints(h * w * 3, 0, 2 * amp) + b.ints(h * w * 3, 0, 2 * amp) - 2 * amp
    return np.clip(np.floor(img + 0.5) + noise.reshape(h, w, 3), 0, 255).astype(np.uint8)


def jitter(b: Bits, hsv: tuple[int, int, int]) -> tuple[int, int, int]:
    return ((hsv[0] + b.int(-8, 8)) % 360, min(100, max(0, hsv[1] + b.int(-6, 6))),
            min(100, max(0, hsv[2] + b.int(-6, 6))))


def jpeg(rgb: np.ndarray) -> bytes:
    """Baseline JPEG under MAX_JPEG bytes (quality lowered until it fits)."""
    for q in (85, 75, 65, 50, 35):
        out = io.BytesIO()
        Image.fromarray(rgb, "RGB").save(out, "JPEG", quality=q)
        if out.tell() < MAX_JPEG:
            return out.getvalue()
    raise ValueError("an image does not fit 16 KB at quality 35")  # cannot happen at these sizes


def images(tier: str, seed: int) -> Iterator[tuple[str, bytes]]:
    cats = categories(tier)
    for i in range(TIERS[tier].images):
        c = i % cats
        yield f"c{c:05d}-{i // cats:04d}.jpg", jpeg(draw(seed, tier, c, 1, i))


def query_category(tier: str, q: int) -> int:
    return q * 7919 % categories(tier)


def queries(tier: str, seed: int) -> Iterator[tuple[str, bytes]]:
    for q in range(TIERS[tier].queries):
        c = query_category(tier, q)
        yield f"q{q:04d}-c{c:05d}.jpg", jpeg(draw(seed, tier, c, 2, q))


def nf_build(build: Path) -> Path:
    exe = build / "apps" / "netferret" / "nf-build"
    if not exe.is_file():
        raise FileNotFoundError(f"{exe} not built (tools/setup.sh, or ninja -C {build})")
    return exe


def make(tier: str, seed: int, out: Path, build: Path) -> dict:
    """Writes the tier into the directory out (made, or emptied of our files)."""
    if tier not in TIERS:
        raise ValueError(f"tier {tier!r}: expected one of {', '.join(TIERS)}")
    t = TIERS[tier]
    exe = nf_build(build)
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)
    write_pack(out / "queries.pack", queries(tier, seed), t.queries)
    write_pack(out / "images.pack", images(tier, seed), t.images)
    p = subprocess.run([str(exe), str(out / "images.pack"), str(out / "db.bin"), "--seed",
                        str(seed * 1000 + 7), "--k", str(t.k)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"nf-build: exit {p.returncode}: {p.stderr.strip()[-1000:]}")
    built = json.loads(p.stdout)
    man = {"tier": tier, "seed": seed, "generator": GENERATOR, "queries": t.queries, "images": t.images,
           "k": t.k, "categories": categories(tier), "vectors": built["vectors"],
           "regions_mean": built["regions_mean"], "files": {f: sha256_file(out / f) for f in FILES}}
    (out / "manifest.json").write_text(json.dumps(man, indent=1) + "\n")
    return man


def verify(d: Path) -> dict | None:
    """The manifest of a tier directory whose files all have their digests, else None."""
    try:
        man = json.loads((d / "manifest.json").read_text())
        if man.get("generator") != GENERATOR:
            return None
        for f in FILES:
            if sha256_file(d / f) != man["files"][f]:
                return None
        return man
    except (OSError, ValueError, KeyError, TypeError):
        return None


def input_file(tier: str, seed: int, cache_dir: Path, build: Path | None = None) -> Path:
    """The tier as a directory in cache_dir, made once and checked by digest (one
    process makes it while the others wait on a lock, then find it made)."""
    d = cache_dir / f"netferret-{tier}-{seed}"
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f".netferret-{tier}-{seed}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if verify(d) is not None:
            return d
        tmp = Path(tempfile.mkdtemp(prefix=f".netferret-{tier}-", dir=cache_dir))
        try:
            make(tier, seed, tmp, build or Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
            shutil.rmtree(d, ignore_errors=True)
            tmp.replace(d)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tier", required=True, choices=list(TIERS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="the tier's directory (made)")
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")),
                    help="the Meson build with nf-build")
    a = ap.parse_args(argv)
    try:
        man = make(a.tier, a.seed, a.out, a.build)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"netferret_input: {e}", file=sys.stderr)
        return 1
    print(json.dumps({k: v for k, v in man.items() if k != "files"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
