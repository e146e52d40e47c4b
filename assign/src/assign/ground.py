"""What a sitting of a measured run measured on: the host, its boot, CPU and
kernel, and the backend's own (the app's build).  A run resumed on other
ground (another machine of the same topology, a reboot, a rebuilt app) may
measure another distribution, and the EVT estimate assumes one: the sample
command says what changed, and `assign estimate` tests the sittings' values
against each other (sittings.py)."""
from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def ground(backend: Any) -> dict:
    g = {"host": socket.gethostname(), "boot_id": _read("/proc/sys/kernel/random/boot_id"),
         "cpu": _cpu_model(), "kernel": os.uname().release}
    provenance = getattr(backend, "provenance", None)
    if provenance is not None:
        g.update(provenance())
    return g


def differences(before: dict, now: dict) -> list[str]:
    """'key: before -> now' for every key that differs."""
    def short(v: Any) -> str:
        s = "absent" if v is None else str(v)
        return s[:12] if len(s) == 64 else s  # a sha256: its first 12 digits
    return [f"{k}: {short(before.get(k))} -> {short(now.get(k))}"
            for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)]


# what differs between identical machines: their names, their boots, where the app was built
OWN_GROUND = ("host", "boot_id", "app")


def comparable(g: dict) -> dict:
    """A ground without what differs between identical machines (the app by content stays)."""
    return {k: v for k, v in g.items() if k not in OWN_GROUND}


def summary(g: dict | None) -> str:
    """A ground in a few words: its host, the app by content, the kernel."""
    if g is None:
        return "ground not recorded"
    app = g.get("app_sha256")
    return f"{g.get('host')}" + (f" (app {app[:12]}, " if app else " (") + f"kernel {g.get('kernel')})"
