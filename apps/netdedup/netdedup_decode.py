#!/usr/bin/env python3
"""Restores netdedup's streams byte for byte from the files its T wrote
(DIR/stream-<id>.pdd, format in apps/netdedup/dd_format.h and README.md).

A reference ('R') names a chunk by its SHA-1; the chunk's bytes are in a
'D' record of some stream of the same directory (the dedup table is shared
by every instance), so the whole directory is indexed first.  Every
restored chunk's SHA-1 is checked, and the stream's length against its end
record.

    python3 apps/netdedup/netdedup_decode.py DIR --stream 0 --out restored.bin
    python3 apps/netdedup/netdedup_decode.py DIR --list
"""
from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

REC = 32
END_STATUS = {0: "complete", 1: "short", 2: "reset", 3: "cut_by_run_end"}
RECEIPT_STATUS = {**END_STATUS, 4: "store_failed"}


class DecodeError(Exception):
    pass


@dataclass
class Stream:
    path: Path
    stream_id: int
    announced: int
    status: str | None = None  # None: no end record (the file is cut)
    received: int | None = None
    chunks: int | None = None


@dataclass
class Data:
    path: Path
    offset: int  # of the stored bytes
    codec: int
    raw_len: int
    stored_len: int


def _records(path: Path):
    """(offset, type, code, raw_len, stored_len, key) of every record."""
    with open(path, "rb") as f:
        off = 0
        while True:
            h = f.read(REC)
            if not h:
                return
            if len(h) < REC:
                raise DecodeError(f"{path}: offset {off}: record header cut after {len(h)} bytes")
            t, code, zero, raw_len, stored_len = struct.unpack_from("<BBHII", h)
            key = h[12:32]
            if chr(t) not in "HDRE" or zero != 0:
                raise DecodeError(f"{path}: offset {off}: not a record (type byte {t})")
            yield off, chr(t), code, raw_len, stored_len, key
            skip = stored_len if chr(t) == "D" else 0
            if skip:
                f.seek(skip, 1)
            off += REC + skip


def scan(directory: Path) -> tuple[dict[int, Stream], dict[bytes, Data]]:
    """Every stream of the directory and where each fingerprint's bytes are."""
    streams: dict[int, Stream] = {}
    data: dict[bytes, Data] = {}
    files = sorted(directory.glob("stream-*.pdd"))
    for p in files:
        size = p.stat().st_size
        s: Stream | None = None
        for off, t, code, raw_len, stored_len, key in _records(p):
            if off == 0:
                if t != "H" or key[16:20] != b"PPDD" or code != 1:
                    raise DecodeError(f"{p}: not a netdedup stream (no version-1 header)")
                sid, announced = struct.unpack_from("<QQ", key)
                s = Stream(p, sid, announced)
                streams[sid] = s
                continue
            assert s is not None
            if t == "D":
                if off + REC + stored_len > size:
                    raise DecodeError(f"{p}: offset {off}: data record cut")
                data.setdefault(key, Data(p, off + REC, code, raw_len, stored_len))
            elif t == "E":
                s.received, _, s.chunks = struct.unpack_from("<QQI", key)
                s.status = END_STATUS.get(code, f"unknown ({code})")
            elif t == "H":
                raise DecodeError(f"{p}: offset {off}: a second header")
    return streams, data


def _chunk(d: Data, cache: dict[Path, BinaryIO]) -> bytes:
    f = cache.get(d.path)
    if f is None:
        f = cache[d.path] = open(d.path, "rb")
    f.seek(d.offset)
    stored = f.read(d.stored_len)
    if d.codec == 0:
        return stored
    if d.codec == 1:
        return zlib.decompress(stored, -15)
    raise DecodeError(f"{d.path}: offset {d.offset - REC}: unknown codec {d.codec}")


def decode(directory: Path, stream_id: int, out: BinaryIO,
           index: tuple[dict[int, Stream], dict[bytes, Data]] | None = None) -> dict:
    """Writes the stream's bytes to out; returns what its end record says and
    what was written.  Raises DecodeError on anything that does not add up."""
    streams, data = index if index is not None else scan(directory)
    if stream_id not in streams:
        raise DecodeError(f"{directory}: no stream {stream_id} (streams: {sorted(streams)[:20]})")
    s = streams[stream_id]
    cache: dict[Path, BinaryIO] = {}
    written = chunks = 0
    try:
        for off, t, code, raw_len, stored_len, key in _records(s.path):
            if t not in "DR":
                continue
            if t == "R" and key not in data:
                raise DecodeError(f"{s.path}: offset {off}: reference to {key.hex()}, "
                                  f"stored in no stream of {directory}")
            d = data[key] if t == "R" else Data(s.path, off + REC, code, raw_len, stored_len)
            b = _chunk(d, cache)
            if len(b) != raw_len or hashlib.sha1(b).digest() != key:
                raise DecodeError(f"{s.path}: offset {off}: chunk does not match its SHA-1 "
                                  f"{key.hex()} ({len(b)} bytes, {raw_len} expected)")
            out.write(b)
            written += len(b)
            chunks += 1
    finally:
        for f in cache.values():
            f.close()
    if s.status is None:
        raise DecodeError(f"{s.path}: no end record (the file is cut)")
    if s.received != written or s.chunks != chunks:
        raise DecodeError(f"{s.path}: end record says {s.received} bytes in {s.chunks} chunks, "
                          f"the records hold {written} in {chunks}")
    return {"stream": stream_id, "status": s.status, "bytes": written, "chunks": chunks,
            "announced": s.announced}


def parse_receipt(b: bytes) -> dict:
    if len(b) != 32 or b[:4] != b"PPDR":
        raise DecodeError(f"not a receipt: {b[:32].hex()}")
    sid, stored, announced = struct.unpack_from("<QQQ", b, 8)
    return {"stream": sid, "status": RECEIPT_STATUS.get(b[4], f"unknown ({b[4]})"),
            "stored": stored, "announced": announced}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--stream", type=int, help="the stream id to restore")
    g.add_argument("--list", action="store_true", help="list the streams as JSON lines")
    ap.add_argument("--out", type=Path, help="where --stream's bytes go ('-': stdout)")
    a = ap.parse_args(argv)
    if not a.dir.is_dir():
        print(f"netdedup_decode: {a.dir}: not a directory", file=sys.stderr)
        return 2
    try:
        if a.list:
            streams, _ = scan(a.dir)
            for sid in sorted(streams):
                s = streams[sid]
                print(json.dumps({"stream": sid, "file": str(s.path), "announced": s.announced,
                                  "status": s.status, "received": s.received}))
            return 0
        if a.out is None:
            print("netdedup_decode: --stream needs --out FILE (or '-')", file=sys.stderr)
            return 2
        if str(a.out) == "-":
            r = decode(a.dir, a.stream, sys.stdout.buffer)
        else:
            with open(a.out, "wb") as f:
                r = decode(a.dir, a.stream, f)
        print(json.dumps(r), file=sys.stderr)
        return 0
    except DecodeError as e:
        print(f"netdedup_decode: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
