#!/usr/bin/env python3
"""netstreamcluster's client, on the kernel's stack: sends a stream file
(the 32-byte header and the points, as netstreamcluster_input.py writes
it) over TCP and reads the 32-byte receipt the server answers once the
stream's result is written.  Prints one JSON object: the receipts, bytes
sent, seconds from the first byte to the last receipt.

Modes, besides the normal one (the bad clients the tests use):
  short     send only the first --cut bytes of the file, close (FIN): the
            server clusters the whole points that came and answers "short"
  reset     the same, but reset the connection (RST) --settle seconds
            after the last byte (no receipt: the client is gone)

    python3 apps/netstreamcluster/netstreamcluster_client.py --server 198.18.42.1:9042 --file in.bin
"""
from __future__ import annotations

import argparse
import struct
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "runtime" / "stack"))
from netns_harness import client_end, connect, end_cut_stream, read_exact, send_file  # noqa: E402

RECEIPT = 32
STATUS = {0: "complete", 1: "short", 2: "reset", 3: "cut_by_run_end", 4: "store_failed"}


def receipt(b: bytes) -> dict[str, Any]:
    if len(b) != RECEIPT or b[:4] != b"PPSR":
        return {"error": f"no receipt ({len(b)} bytes: {b[:RECEIPT].hex()})"}
    sid, points, announced = struct.unpack_from("<QQQ", b, 8)
    return {"stream": sid, "status": STATUS.get(b[4], f"unknown ({b[4]})"), "points": points,
            "announced": announced}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="HOST:PORT")
    ap.add_argument("--file", type=Path, required=True)
    ap.add_argument("--streams", type=int, default=1, help="the file this many times, one after another")
    ap.add_argument("--mode", choices=["normal", "short", "reset"], default="normal")
    ap.add_argument("--cut", type=int, default=0, help="short/reset: bytes of the file sent")
    ap.add_argument("--settle", type=float, default=0.3, help="reset: seconds before the reset")
    ap.add_argument("--connect-timeout", type=float, default=30.0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for a receipt")
    a = ap.parse_args(argv)
    host, _, port = a.server.rpartition(":")
    length = a.file.stat().st_size
    out: dict[str, Any] = {"mode": a.mode, "bytes_sent": 0, "receipts": []}
    s = connect(host, int(port), time.monotonic() + a.connect_timeout)
    t0 = time.monotonic()
    try:
        if a.mode == "normal":
            for _ in range(a.streams):
                send_file(s, a.file, length)
                out["bytes_sent"] += length
                out["receipts"].append(receipt(read_exact(s, RECEIPT, a.timeout)))
        else:
            n = min(a.cut, length)
            send_file(s, a.file, n)
            out["bytes_sent"] = n
            end_cut_stream(s, a.mode == "reset", a.settle, out,
                           lambda: receipt(read_exact(s, RECEIPT, a.timeout)))
    except OSError as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return client_end(out, s, t0, a.mode == "reset")


if __name__ == "__main__":
    sys.exit(main())
