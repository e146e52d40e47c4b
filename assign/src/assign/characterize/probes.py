"""The C probes of tools/ (built with the runtime): the timer floor, the
memory-heavy / compute-heavy stressors and the contexts' steadiness, each
pinned to one context."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from ..backends.base import BackendError
from ..backends.dpdk.runners import die_with_assign

STRESSORS = ("mem", "compute")


def _tool(build: Path, name: str) -> Path:
    path = build / "tools" / name
    if not path.is_file():
        raise BackendError(f"characterize: {path} is not built (ninja -C {build}; tools/meson.build builds it)")
    return path


def timer_floor(build: Path, context: int) -> dict:
    """TSC rate, cost of one TSC read, of one empty loop iteration and of one
    profile mark, measured on `context` (figures labelled measured)."""
    exe = _tool(build, "pp-timer-floor")
    out = subprocess.run([str(exe), str(context)], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise BackendError(f"characterize: {exe} failed (exit {out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def _spread(rates: list[float]) -> dict:
    r = np.asarray(rates, dtype=float)
    return {"median": float(np.median(r)), "min": float(r.min()), "max": float(r.max()),
            "cv_pct": float(r.std(ddof=1) / r.mean() * 100.0) if len(r) > 1 else 0.0,
            "rates": [float(x) for x in r]}


STEADINESS_KERNELS = {"compute": "million kernel steps per second", "memory": "million dependent loads per second"}
HANDOFF_UNIT = "million round trips per second"


def _rates(exe: Path, p: subprocess.Popen, what: str, timeout: float) -> list[float]:
    """The window rates a pp-steadiness process prints."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise BackendError(f"characterize: {exe} on {what} gave no result in {timeout:g} s")
    if p.returncode != 0:
        raise BackendError(f"characterize: {exe} on {what} failed (exit {p.returncode}): {err.strip()}")
    return json.loads(out)["rates"]


def steadiness(build: Path, contexts: list[int], windows: int = 20, window_ms: int = 100,
               kernel: str = "compute") -> dict:
    """How steady each context's speed is (pp-steadiness: a fixed kernel,
    `windows` windows of `window_ms` ms; "compute", integer chains, or
    "memory", dependent loads over a buffer larger than the last-level
    cache): alone, one context after the other, then all of `contexts` at
    once.  Per context: the windows' median, min, max and coefficient of
    variation (measured), and together_vs_alone, the ratio of the two
    medians.  On a virtual machine the spread is the host's, and it is the
    floor under every measured figure on that context."""
    if kernel not in STEADINESS_KERNELS:
        raise BackendError(f"unknown steadiness kernel {kernel!r} (known: {', '.join(STEADINESS_KERNELS)})")
    exe = _tool(build, "pp-steadiness")

    def start(ctx: int) -> subprocess.Popen:
        return subprocess.Popen(die_with_assign([str(exe), str(ctx), str(windows), str(window_ms), kernel]),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def result(p: subprocess.Popen, ctx: int) -> list[float]:
        return _rates(exe, p, f"context {ctx}", 60 + 2 * windows * window_ms / 1000)

    alone = {c: _spread(result(start(c), c)) for c in contexts}
    procs = {c: start(c) for c in contexts}
    try:
        together = {c: _spread(result(p, c)) for c, p in procs.items()}
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.communicate()
    return {"kernel": kernel, "window_s": window_ms / 1000, "windows": windows, "unit": STEADINESS_KERNELS[kernel],
            "kind": "measured",
            "contexts": {str(c): {"alone": alone[c], "together": together[c],
                                  "together_vs_alone": together[c]["median"] / alone[c]["median"]}
                         for c in contexts}}


def handoff_steadiness(build: Path, a: int, peers: list[int], windows: int = 20, window_ms: int = 100) -> dict:
    """How steady the handoff between context `a` and each of `peers` is (pp-steadiness handoff:
    one cache line passed back and forth, one pair at a time): per pair "a-b", the windows'
    median, min, max and CV of round trips per second (measured).  A round trip needs both
    contexts running at once, as an instance split over them does; a host that runs one of
    two virtual CPUs while the other waits stalls it, which the one-context kernels miss."""
    exe = _tool(build, "pp-steadiness")
    pairs = {}
    for b in peers:
        p = subprocess.Popen(die_with_assign([str(exe), str(a), str(windows), str(window_ms), "handoff", str(b)]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pairs[f"{a}-{b}"] = _spread(_rates(exe, p, f"contexts {a} and {b}", 60 + 2 * windows * window_ms / 1000))
    return {"kernel": "handoff", "window_s": window_ms / 1000, "windows": windows, "unit": HANDOFF_UNIT,
            "kind": "measured", "pairs": pairs}


class Stressor:
    """A pp-stressor process of `kind` pinned to `context` while in the `with` block."""

    def __init__(self, build: Path, kind: str, context: int, seconds: float = 600.0):
        if kind not in STRESSORS:
            raise BackendError(f"unknown stressor {kind!r} (known: {', '.join(STRESSORS)})")
        self.cmd = [str(_tool(build, "pp-stressor")), kind, str(context), f"{seconds:g}"]
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Stressor":
        self.proc = subprocess.Popen(die_with_assign(self.cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
