#!/usr/bin/env python3
"""netferret's client, on the kernel's stack (PARSEC's netferret client):
--threads T connections at once, each connect, send one query ([int32
length, host byte order][JPEG]), read the answer ([int32 length][text]),
close (the clock starts once one connection to the server has opened and
closed: its start-up and the first ARP are not timed); the answers in
ferret's output format (`<query>` then
`\\t<image>:<distance>` per result, one line per query) to --out; after
the last query one more connection with the end tag (int32 -1).  Prints
one JSON object: queries, answered, errors by word, bytes sent, t0/t1
(CLOCK_MONOTONIC), seconds, queries_per_s and latency_ms (p50, p99, mean,
max: connect to the answer's last byte), all measured.

Modes besides the normal one (the bad clients the tests use), each one
connection and one JSON object with what came back:
  too_long      a length over the server's limit (--length), a few bytes
  bad_length    the length -5
  not_jpeg      a query of bytes that are not a JPEG
  truncated     the first query's JPEG cut in half, framed whole
  close_mid     the first query's length and half its bytes, then FIN
  reset_mid     the same, then RST (--settle seconds after)
  never_reads   the first query whole, then nothing until the server closes
                the connection (--idle-timeout after its answer), the answer
                never read

    python3 apps/netferret/netferret_client.py --server 198.18.43.1:42285 --input TIER_DIR --threads 2
"""
from __future__ import annotations

import argparse
import json
import select
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "runtime" / "stack"))
from nf_pack import read_pack  # noqa: E402
from netns_harness import connect, read_exact, reset_after  # noqa: E402

MAX_ANSWER = 1 << 20  # an answer longer than this is not one


def read_answer(s: socket.socket, timeout: float) -> str:
    head = read_exact(s, 4, timeout)
    if len(head) != 4:
        raise ConnectionError(f"no answer ({len(head)} bytes of its length)")
    (n,) = struct.unpack("<i", head)
    if not 0 <= n <= MAX_ANSWER:
        raise ConnectionError(f"answer length {n}")
    body = read_exact(s, n, timeout)
    if len(body) != n:
        raise ConnectionError(f"answer cut short ({len(body)} of {n} bytes)")
    return body.decode("ascii", errors="replace")


def one_query(host: str, port: int, jpeg: bytes, deadline: float, timeout: float) -> tuple[str, float]:
    t0 = time.monotonic()
    s = connect(host, port, deadline)
    try:
        s.sendall(struct.pack("<i", len(jpeg)) + jpeg)
        ans = read_answer(s, timeout)
    finally:
        s.close()
    return ans, time.monotonic() - t0


def end_tag(host: str, port: int, deadline: float) -> None:
    s = connect(host, port, deadline)
    s.sendall(struct.pack("<i", -1))
    s.close()


def quantile(xs: list[float], q: float) -> float:
    """The q-quantile, nearest rank (of the sorted values)."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(q * len(s) + 0.999999) - 1))]


def run_normal(a: argparse.Namespace, host: str, port: int) -> dict[str, Any]:
    queries = read_pack(a.input / "queries.pack" if a.input.is_dir() else a.input) * a.repeat
    answers: list[str | None] = [None] * len(queries)
    lat: list[float] = [0.0] * len(queries)
    errors: list[str] = []
    next_q = [0]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                i = next_q[0]
                next_q[0] += 1
            if i >= len(queries):
                return
            try:
                answers[i], lat[i] = one_query(host, port, queries[i][1],
                                               time.monotonic() + a.connect_timeout, a.timeout)
            except OSError as e:
                with lock:
                    errors.append(f"{queries[i][0]}: {type(e).__name__}: {e}")

    # The server first: one connection opened and closed before the clock starts, so
    # that neither its start-up nor the first ARP exchange is in the figures.
    connect(host, port, time.monotonic() + a.connect_timeout).close()
    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1 = time.monotonic()
    out: dict[str, Any] = {"mode": "normal", "kind": "measured", "threads": a.threads, "queries": len(queries),
                           "bytes_sent": sum(4 + len(j) for _, j in queries)}
    if not a.no_end:
        try:
            end_tag(host, port, time.monotonic() + a.connect_timeout)
            out["end_tag"] = "sent"
        except OSError as e:
            out["end_tag"] = f"not sent: {e}"
    ok = [i for i, x in enumerate(answers) if x is not None]
    words: dict[str, int] = {}
    for i in ok:
        if answers[i].startswith("!"):  # type: ignore[union-attr]
            words[answers[i][1:]] = words.get(answers[i][1:], 0) + 1  # type: ignore[index]
    if a.out is not None:
        with open(a.out, "w") as f:
            for i in ok:
                f.write(queries[i][0] + answers[i] + "\n")  # type: ignore[operator]
        out["out"] = str(a.out)
    ms = [lat[i] * 1000 for i in ok]
    out.update({"answered": len(ok), "error_answers": words, "failed": errors[:20], "failures": len(errors),
                "t0": t0, "t1": t1, "seconds": t1 - t0,
                "queries_per_s": len(ok) / (t1 - t0) if t1 > t0 else None,
                "latency_ms": {"what": "connect to the answer's last byte, per query (measured)",
                               "p50": quantile(ms, 0.50), "p99": quantile(ms, 0.99),
                               "mean": sum(ms) / len(ms) if ms else 0.0, "max": max(ms, default=0.0)}})
    if errors:
        out["error"] = f"{len(errors)} queries failed: {errors[0]}"
    return out


def run_bad(a: argparse.Namespace, host: str, port: int) -> dict[str, Any]:
    jpeg = read_pack(a.input / "queries.pack" if a.input.is_dir() else a.input)[0][1]
    out: dict[str, Any] = {"mode": a.mode}
    t0 = time.monotonic()
    s = connect(host, port, t0 + a.connect_timeout)
    try:
        if a.mode == "too_long":
            s.sendall(struct.pack("<i", a.length) + bytes(1000))
        elif a.mode == "bad_length":
            s.sendall(struct.pack("<i", -5))
        elif a.mode == "not_jpeg":
            junk = b"GIF89a" + bytes(range(256)) * 4
            s.sendall(struct.pack("<i", len(junk)) + junk)
        elif a.mode == "truncated":
            half = jpeg[:len(jpeg) // 2]
            s.sendall(struct.pack("<i", len(half)) + half)
        elif a.mode in ("close_mid", "reset_mid"):
            s.sendall(struct.pack("<i", len(jpeg)) + jpeg[:len(jpeg) // 2])
            if a.mode == "reset_mid":
                reset_after(s, a.settle)
                out["t1"] = time.monotonic()
                return out
            s.shutdown(socket.SHUT_WR)
        elif a.mode == "never_reads":
            s.sendall(struct.pack("<i", len(jpeg)) + jpeg)
            # wait (at most --timeout) for the server to close the connection, the answer
            # unread in this socket all along
            p = select.poll()
            p.register(s, select.POLLRDHUP)
            out["closed_by_server"] = bool(p.poll(a.timeout * 1000))
            out["unread_bytes"] = len(s.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT) or b"")
            s.close()
            out["t1"] = time.monotonic()
            return out
        out["answer"] = read_answer(s, a.timeout)
    except OSError as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        s.close()
    out["t1"] = time.monotonic()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--server", required=True, help="HOST:PORT")
    ap.add_argument("--input", type=Path, required=True, help="a tier's directory, or a queries pack")
    ap.add_argument("--threads", type=int, default=1, help="queries in flight (PARSEC's -t)")
    ap.add_argument("--repeat", type=int, default=1, help="send the queries this many times")
    ap.add_argument("--out", type=Path, help="the answers, ferret's format")
    ap.add_argument("--no-end", action="store_true", help="do not send the end tag")
    ap.add_argument("--mode", default="normal", choices=["normal", "too_long", "bad_length", "not_jpeg",
                                                         "truncated", "close_mid", "reset_mid", "never_reads"])
    ap.add_argument("--length", type=int, default=16 * 1024 + 1, help="too_long: the length sent")
    ap.add_argument("--settle", type=float, default=0.3)
    ap.add_argument("--connect-timeout", type=float, default=30.0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for an answer")
    a = ap.parse_args(argv)
    if a.threads < 1 or a.repeat < 1:
        ap.error("--threads and --repeat are >= 1")
    host, _, port = a.server.rpartition(":")
    out = run_normal(a, host, int(port)) if a.mode == "normal" else run_bad(a, host, int(port))
    print(json.dumps(out))
    return 0 if "error" not in out else 1


if __name__ == "__main__":
    sys.exit(main())
