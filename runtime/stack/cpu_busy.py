"""How busy each context was over a time window, from /proc/stat sampled
in a background thread: the kernel's own per-context accounting (user,
nice, system, irq, softirq and steal ticks; idle and iowait are not busy).

The kernel samples it at its tick (USER_HZ, 100 a second), so a window of
T seconds on N contexts rests on about 100*T*N ticks: the figure is
statistical, exact to a tick or two per context.  run() says so beside it.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _busy_ticks() -> dict[int, int]:
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                name, *v = line.split()
                user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, v[:8])
                out[int(name[3:])] = user + nice + system + irq + softirq + steal
    return out


class BusySampler:
    """with BusySampler() as s: ...; then s.window(t0, t1) for a window in
    time.monotonic()'s clock (which clients in other processes share)."""

    def __init__(self, period: float = 0.01) -> None:
        self.period = period
        self.samples: list[tuple[float, dict[int, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append((time.monotonic(), _busy_ticks()))
            if self._stop.wait(self.period):
                self.samples.append((time.monotonic(), _busy_ticks()))
                return

    def __enter__(self) -> BusySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def window(self, t0: float, t1: float, contexts: list[int]) -> dict[str, Any] | None:
        """Busy contexts (context-seconds per second) over the samples that
        bracket [t0, t1]; None when the samples do not cover it."""
        before = [s for s in self.samples if s[0] <= t0]
        after = [s for s in self.samples if s[0] >= t1]
        if not before or not after:
            return None
        (ta, a), (tb, b) = before[-1], after[0]
        span = tb - ta
        per = {c: (b.get(c, 0) - a.get(c, 0)) / TICKS_PER_S / span for c in contexts}
        return {"kind": "measured", "contexts_busy": sum(per.values()),
                "per_context": {str(c): round(v, 3) for c, v in per.items()},
                "seconds": span, "ticks": sum(b.get(c, 0) - a.get(c, 0) for c in contexts),
                "what": f"/proc/stat busy ticks ({TICKS_PER_S}/s) over the clients' transfer, "
                        "every context this run may use: the app, its clients and the kernel's "
                        "work for both"}
