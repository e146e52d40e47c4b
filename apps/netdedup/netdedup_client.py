#!/usr/bin/env python3
"""netdedup's client, on the kernel's stack: sends a file as streams over
TCP (each a u64 big-endian length, then the bytes) and reads the 32-byte
receipt the server answers once a stream is written.  Prints one JSON object:
the receipts, bytes sent, seconds from the first byte to the last receipt.

Modes, besides the normal one (the bad clients the tests use):
  short     announce the file's length, send only --cut bytes, close
            (FIN): the server stores what came and answers "short"
  reset     the same, but reset the connection (RST) instead of closing,
            --settle seconds after the last byte; says how many bytes its
            TCP had seen acknowledged then (tcp_info), header included
  noread    send --streams streams on one connection and never read the
            receipts (a small receive buffer); close when the server hangs
            up, on SIGTERM, or after --hold seconds

    python3 apps/netdedup/netdedup_client.py --server 198.18.41.1:9041 --file in.bin
"""
from __future__ import annotations

import argparse
import select
import signal
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "runtime" / "stack"))
from netns_harness import client_end, connect, end_cut_stream, read_exact, send_file  # noqa: E402

RECEIPT = 32


class Stop(Exception):
    pass


def _stop(*_: object) -> None:
    raise Stop()


def receipt(b: bytes) -> dict:
    if len(b) != RECEIPT or b[:4] != b"PPDR":
        return {"error": f"no receipt ({len(b)} bytes: {b[:RECEIPT].hex()})"}
    sid, stored, announced = struct.unpack_from("<QQQ", b, 8)
    status = {0: "complete", 1: "short", 2: "reset", 3: "cut_by_run_end",
              4: "store_failed"}.get(b[4], f"unknown ({b[4]})")
    return {"stream": sid, "status": status, "stored": stored, "announced": announced}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="HOST:PORT")
    ap.add_argument("--file", type=Path, required=True)
    ap.add_argument("--streams", type=int, default=1, help="streams of the file, one after another")
    ap.add_argument("--mode", choices=["normal", "short", "reset", "noread"], default="normal")
    ap.add_argument("--cut", type=int, default=0, help="short/reset: bytes sent of the announced")
    ap.add_argument("--hold", type=float, default=0.0, help="noread: at most this many seconds before closing")
    ap.add_argument("--settle", type=float, default=0.0, help="reset: seconds before the reset")
    ap.add_argument("--connect-timeout", type=float, default=30.0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for a receipt")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    host, _, port = a.server.rpartition(":")
    length = a.file.stat().st_size
    out: dict = {"mode": a.mode, "bytes_sent": 0, "receipts": []}
    s = connect(host, int(port), time.monotonic() + a.connect_timeout,
                rcvbuf=4096 if a.mode == "noread" else None)
    t0 = time.monotonic()
    try:
        if a.mode in ("short", "reset"):
            s.sendall(struct.pack(">Q", length))
            send_file(s, a.file, min(a.cut, length))
            out["bytes_sent"] = min(a.cut, length)
            end_cut_stream(s, a.mode == "reset", a.settle, out,
                           lambda: receipt(read_exact(s, RECEIPT, a.timeout)))
        elif a.mode == "noread":
            # every stream in one write: full segments, no wait for ACKs between them
            one = struct.pack(">Q", length) + a.file.read_bytes()
            s.sendall(one * a.streams)
            out["bytes_sent"] = length * a.streams
            # until the server hangs up, --hold passes, or SIGTERM (a reset
            # from a server whose receipts this client refused may never be
            # accepted: its sequence number is past the zero window)
            pl = select.poll()
            pl.register(s, select.POLLRDHUP)
            end = time.monotonic() + a.hold
            try:
                while time.monotonic() < end:
                    ev = pl.poll(100)
                    if ev and ev[0][1] & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                        out["ended_by"] = "server hung up"
                        break
                else:
                    out["ended_by"] = "--hold"
            except Stop:
                out["ended_by"] = "SIGTERM"
        else:
            for _ in range(a.streams):
                s.sendall(struct.pack(">Q", length))
                send_file(s, a.file, length)
                out["bytes_sent"] += length
                out["receipts"].append(receipt(read_exact(s, RECEIPT, a.timeout)))
    except OSError as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return client_end(out, s, t0, a.mode == "reset")


if __name__ == "__main__":
    sys.exit(main())
