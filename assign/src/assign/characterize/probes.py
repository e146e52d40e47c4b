"""The C probes of tools/ (built with the runtime): the timer floor and the
memory-heavy / compute-heavy stressors, each pinned to one context."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..backends.base import BackendError

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


class Stressor:
    """A pp-stressor process of `kind` pinned to `context` while in the `with` block."""

    def __init__(self, build: Path, kind: str, context: int, seconds: float = 600.0):
        if kind not in STRESSORS:
            raise BackendError(f"unknown stressor {kind!r} (known: {', '.join(STRESSORS)})")
        self.cmd = [str(_tool(build, "pp-stressor")), kind, str(context), f"{seconds:g}"]
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Stressor":
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
