"""Placement JSON (runtime/PLACEMENT.md) for the tests: instances on given
contexts, or the usual one-instance layout of this machine."""
from __future__ import annotations

import os
from typing import Any


def instance(rx_port: int, rx_queue: int, tx_port: int, tx_queue: int,
             r: int = 0, p: int = 1, t: int = 0) -> dict[str, Any]:
    return {"rx": {"port": rx_port, "queue": rx_queue}, "tx": {"port": tx_port, "queue": tx_queue},
            "tasks": {"R": r, "P": p, "T": t}}


def placement(app: str, instances: list[dict[str, Any]], variant: str | None = None,
              colocate: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {"app": app, "allow_colocate": colocate, "instances": instances}
    if variant is not None:
        doc["variant"] = variant
    return doc


def one_instance(app: str, variant: str | None = None, rx: tuple[int, int] = (0, 0),
                 tx: tuple[int, int] = (1, 0)) -> dict[str, Any]:
    """One instance: R and T on the first context this process may use, P on
    the second when there is one (the layout a 2-context machine allows)."""
    cpus = sorted(os.sched_getaffinity(0))
    rt, p = cpus[0], cpus[1] if len(cpus) > 1 else cpus[0]
    return placement(app, [instance(*rx, *tx, r=rt, p=p, t=rt)], variant)
