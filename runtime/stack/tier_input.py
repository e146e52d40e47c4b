"""What the TCP apps' input generators share (apps/netdedup/netdedup_input.py,
apps/netstreamcluster/netstreamcluster_input.py, and netferret_input.py's
digests): a tier's input made once into a cache directory, a file's
SHA-256, and the generator's command line.  Each generator writes its tier
deterministically from a seed; nothing is downloaded."""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

Write = Callable[[str, int, BinaryIO], object]  # tier, seed, output


def cached(app: str, tier: str, seed: int, cache_dir: Path, size: int, write: Write) -> Path:
    """The tier's input as cache_dir/APP-TIER-SEED.bin, made once (a file
    of another size, e.g. cut short by a killed run, is made again)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"{app}-{tier}-{seed}.bin"
    if path.is_file() and path.stat().st_size == size:
        return path
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        write(tier, seed, f)
    tmp.replace(path)
    return path


def sha256_file(path: Path) -> str:
    """The file's SHA-256, hex, read 1 MiB at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(doc: str, tiers: Iterable[str], write: Write, argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--tier", required=True, choices=list(tiers))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="file to write ('-': stdout)")
    a = ap.parse_args(argv)
    if str(a.out) == "-":
        write(a.tier, a.seed, sys.stdout.buffer)
    else:
        with open(a.out, "wb") as f:
            write(a.tier, a.seed, f)
    return 0
