"""Packs of named JPEGs (nf_pack.h): how a tier keeps its queries and its
database images.  Little-endian: "NFPK0001", u32 count, then per item a
u16 name length, the name, a u32 byte count and the bytes.  No numpy
here: the client imports it and starts fast."""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable

MAGIC = b"NFPK0001"


def write_pack(path: Path, items: Iterable[tuple[str, bytes]], count: int) -> None:
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<I", count))
        n = 0
        for name, data in items:
            nb = name.encode()
            f.write(struct.pack("<H", len(nb)) + nb + struct.pack("<I", len(data)) + data)
            n += 1
        if n != count:
            raise ValueError(f"{path}: {n} items written, {count} announced")


def read_pack(path: Path) -> list[tuple[str, bytes]]:
    b = path.read_bytes()
    if b[:8] != MAGIC:
        raise ValueError(f"{path}: not a pack of JPEGs (magic)")
    (n,), at, out = struct.unpack_from("<I", b, 8), 12, []
    for i in range(n):
        try:
            (nl,) = struct.unpack_from("<H", b, at)
            name = b[at + 2:at + 2 + nl].decode()
            (ln,) = struct.unpack_from("<I", b, at + 2 + nl)
        except (struct.error, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: item {i} at byte {at}: damaged ({e})") from None
        data = b[at + 6 + nl:at + 6 + nl + ln]
        if len(data) != ln:
            raise ValueError(f"{path}: item {i} ({name}) cut short")
        out.append((name, data))
        at += 6 + nl + ln
    return out
