#!/usr/bin/env python3
"""netdedup's input tiers: a deterministic function of (tier, seed), never
downloaded.  The stream is a sequence of blocks (4 KiB to 256 KiB), each
either new (text-like and compressible, or random bytes) or a repeat of an
earlier one, half of the repeats edited by a few bytes inserted, deleted or
changed at one place, so that content-defined chunking has shifted
boundaries to find.  About 40% of the blocks repeat.

Sizes follow PARSEC's dedup inputs (test is ours: CI seconds):

    test 1 MiB, simsmall 10 MiB, simmedium 31 MiB, simlarge 184 MiB,
    native 672 MiB

Only hashlib's SHAKE-256 and random.Random(str) with getrandbits are used:
both give the same bytes on every platform and Python version.

    python3 apps/netdedup/netdedup_input.py --tier test --seed 0 --out in.bin
"""
from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path
from typing import BinaryIO, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runtime" / "stack"))
import tier_input  # noqa: E402

MIB = 1 << 20
TIERS: dict[str, int] = {
    "test": 1 * MIB,
    "simsmall": 10 * MIB,
    "simmedium": 31 * MIB,
    "simlarge": 184 * MIB,
    "native": 672 * MIB,
}
REPEAT_SHARE = 0.4
EDIT_SHARE = 0.5
HISTORY = 512  # blocks a repeat may come back from

# Text-like bytes: 32 symbols, weighted towards letters and spaces
# (deflate makes about half of them).
_ALPHABET = b"etaoinshrdlucmfwypvbgk      \n.,"
_TEXT = bytes(_ALPHABET[b % len(_ALPHABET)] for b in range(256))


def _block(tier: str, seed: int, key: int, length: int, text: bool) -> bytes:
    raw = hashlib.shake_256(f"netdedup:{tier}:{seed}:{key}".encode()).digest(length)
    return raw.translate(_TEXT) if text else raw


def blocks(tier: str, seed: int = 0) -> Iterator[bytes]:
    """The tier's bytes, block by block (their total is TIERS[tier])."""
    if tier not in TIERS:
        raise ValueError(f"tier {tier!r}: expected one of {', '.join(TIERS)}")
    total = TIERS[tier]
    rng = random.Random(f"netdedup:{tier}:{seed}")
    uniform = lambda n: rng.getrandbits(32) % n  # noqa: E731
    history: list[tuple[int, int, bool]] = []
    done, key = 0, 0
    while done < total:
        if history and uniform(1000) < REPEAT_SHARE * 1000:
            k, length, text = history[uniform(len(history))]
            data = _block(tier, seed, k, length, text)
            if uniform(1000) < EDIT_SHARE * 1000:
                at, size = uniform(len(data)), 1 + uniform(16)
                edit = uniform(3)
                patch = hashlib.shake_256(f"edit:{seed}:{done}".encode()).digest(size)
                if edit == 0:
                    data = data[:at] + patch + data[at:]
                elif edit == 1:
                    data = data[:at] + data[at + size:]
                else:
                    data = data[:at] + patch + data[at + size:]
        else:
            length = 4096 + uniform(252 * 1024)
            text = uniform(10) < 7
            data = _block(tier, seed, key, length, text)
            history.append((key, length, text))
            if len(history) > HISTORY:
                history.pop(0)
            key += 1
        data = data[: total - done]
        done += len(data)
        yield data


def write_input(tier: str, seed: int, out: BinaryIO) -> int:
    n = 0
    for b in blocks(tier, seed):
        out.write(b)
        n += len(b)
    return n


def input_file(tier: str, seed: int, cache_dir: Path) -> Path:
    """The tier's input as a file in cache_dir, made once."""
    return tier_input.cached("netdedup", tier, seed, cache_dir, TIERS[tier], write_input)


def main(argv: list[str] | None = None) -> int:
    return tier_input.main(__doc__, TIERS, write_input, argv)


if __name__ == "__main__":
    sys.exit(main())
