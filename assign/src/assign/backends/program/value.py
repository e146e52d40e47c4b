"""Where a program's value comes from (assign/WORKLOADS.md, [value]):

* telemetry: DPDK's telemetry socket, `/ethdev/stats,<port>`, read at the
  window's start and end on one connection; the value is the counter's
  increase (summed over the ports) per second of the window.  Every DPDK
  22.11 program serves it (on by default), its own or not: no output to
  parse.
* output: the program's own lines through a pattern; "rate": a counter it
  prints, its increase per second between the first and last line printed
  within the window (times: when each line arrived); "mean": the numbers
  it prints within the window (rates it computes itself).
* command: a command that prints a number (its last one counts), run at the
  window's start and end ("rate") or at its end ("last").
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class ReadError(RuntimeError):
    """A value that cannot be read (the measurement fails, with this reason)."""


def dpdk_runtime_dir(prefix: str) -> Path:
    """Where a DPDK process of --file-prefix `prefix` keeps its sockets."""
    base = Path("/var/run/dpdk") if os.geteuid() == 0 else Path(os.environ.get("XDG_RUNTIME_DIR", "/tmp")) / "dpdk"
    return base / prefix


class Telemetry:
    """One connection to a DPDK process's telemetry socket (SOCK_SEQPACKET, JSON answers)."""

    def __init__(self, prefix: str, timeout: float = 2.0):
        self.path = dpdk_runtime_dir(prefix) / "dpdk_telemetry.v2"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(self.path))
            json.loads(self.sock.recv(4096))  # greeting: version, pid, max_output_len
        except (OSError, ValueError) as e:
            self.sock.close()
            raise ReadError(f"telemetry socket {self.path}: {e}") from None

    def ask(self, cmd: str) -> object:
        try:
            self.sock.send(cmd.encode())
            reply = json.loads(self.sock.recv(1 << 16))
        except (OSError, ValueError) as e:
            raise ReadError(f"telemetry {cmd} on {self.path}: {e}") from None
        key = cmd.split(",", 1)[0]
        if not isinstance(reply, dict) or key not in reply:
            raise ReadError(f"telemetry {cmd} on {self.path}: unexpected answer {str(reply)[:200]}")
        return reply[key]

    def counter(self, ports: tuple[int, ...], field: str) -> int:
        total = 0
        for p in ports:
            st = self.ask(f"/ethdev/stats,{p}")
            if not isinstance(st, dict) or not isinstance(st.get(field), int):
                raise ReadError(f"telemetry /ethdev/stats,{p}: no port {p} (answer {str(st)[:120]})")
            total += st[field]
        return total

    def port_started(self, port: int) -> bool:
        info = self.ask(f"/ethdev/info,{port}")
        return isinstance(info, dict) and info.get("dev_started") == 1

    def close(self) -> None:
        self.sock.close()


def telemetry_up(prefix: str) -> bool:
    return (dpdk_runtime_dir(prefix) / "dpdk_telemetry.v2").exists()


class OutputLog:
    """A process's stdout and stderr, read by a thread: written to a log file,
    its last lines kept (for errors), and the numbers a pattern finds kept
    with the time each line arrived."""

    def __init__(self, stream, log: Path, pattern: str | None = None, ready: str | None = None):
        self.stream = stream
        self.tail: deque[str] = deque(maxlen=30)
        self.values: deque[tuple[float, float]] = deque(maxlen=100_000)
        self.rx = re.compile(pattern) if pattern else None
        self.ready_rx = re.compile(ready) if ready else None
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.log = log
        self.thread = threading.Thread(target=self._read, daemon=True, name="assign-program-output")
        self.thread.start()

    def _read(self) -> None:
        with self.log.open("ab") as f:
            for raw in iter(self.stream.readline, b""):
                t = time.monotonic()
                f.write(raw)
                line = raw.decode(errors="replace").rstrip("\n")
                with self.lock:
                    self.tail.append(line)
                if self.ready_rx is not None and not self.ready.is_set() and self.ready_rx.search(line):
                    self.ready.set()
                if self.rx is not None:
                    m = self.rx.search(line)
                    if m:
                        try:
                            v = float(m.group(1))
                        except (TypeError, ValueError):
                            continue
                        with self.lock:
                            self.values.append((t, v))
                f.flush()

    def last_lines(self, n: int = 8) -> str:
        with self.lock:
            return " | ".join(list(self.tail)[-n:])

    def window(self, t0: float, t1: float) -> list[tuple[float, float]]:
        with self.lock:
            return [(t, v) for t, v in self.values if t0 <= t <= t1]

    def join(self, timeout: float = 5.0) -> None:
        self.thread.join(timeout)


def output_value(log: OutputLog, t0: float, t1: float, aggregate: str) -> float:
    pts = log.window(t0, t1)
    if aggregate == "mean":
        if not pts:
            raise ReadError("the program printed no line matching the value's pattern during the window")
        return sum(v for _, v in pts) / len(pts)
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        raise ReadError(f"the program printed {len(pts)} line(s) matching the value's pattern during the "
                          f"window; a rate needs two (a longer window, or a program that prints more often)")
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def command_number(cmd: list[str], env: dict | None = None, timeout: float = 15.0) -> float:
    """The last number a command prints on stdout (exit status 0 required)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ReadError(f"value command {' '.join(cmd)}: {e}") from None
    if p.returncode != 0:
        raise ReadError(f"value command {' '.join(cmd)}: exit status {p.returncode}: {p.stderr.strip()[-300:]}")
    nums = NUMBER.findall(p.stdout)
    if not nums:
        raise ReadError(f"value command {' '.join(cmd)}: printed no number ({p.stdout.strip()[-200:]!r})")
    return float(nums[-1])
