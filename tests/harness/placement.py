"""Placement files for the runtime apps: N instances, their ports and
queues, and the context of each of their R, P and T tasks."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence


def instance(rx_port: int, rx_queue: int, tx_port: int, tx_queue: int,
             r: int = 0, p: int = 1, t: int = 0) -> dict[str, Any]:
    return {"rx": {"port": rx_port, "queue": rx_queue}, "tx": {"port": tx_port, "queue": tx_queue},
            "tasks": {"R": r, "P": p, "T": t}}


def two_contexts() -> tuple[int, int]:
    """Two contexts this process may run on (the same one twice on a
    one-context machine): R and T go on the first, P on the second."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[0], cpus[1] if len(cpus) > 1 else cpus[0]


def placement(app: str, instances: Sequence[dict[str, Any]] | int = 1, variant: str | None = None,
              colocate: bool = True, contexts: tuple[int, int] | None = None) -> dict[str, Any]:
    """A placement for app.  instances: the instance objects, or a count n:
    then instance i reads port i queue 0 and writes port n queue i (one sink
    port for all), R and T on the first of contexts, P on the second
    (default two_contexts())."""
    if isinstance(instances, int):
        n = instances
        if n < 1:
            raise ValueError(f"placement for {app}: {n} instances, need at least 1")
        rt, p = contexts or two_contexts()
        instances = [instance(i, 0, n, i, rt, p, rt) for i in range(n)]
    out: dict[str, Any] = {"app": app, "allow_colocate": colocate, "instances": list(instances)}
    if variant is not None:
        out["variant"] = variant
    return out


def write_placement(path: Path, place: dict[str, Any]) -> Path:
    path.write_text(json.dumps(place))
    return path
