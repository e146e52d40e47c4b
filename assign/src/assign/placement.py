"""Writing an assignment as the placement JSON the apps run with
(contract 1, runtime/PLACEMENT.md), and reading one back.

Ports and queues: instance i receives on port 0 queue i and transmits on
port 1 queue i, one RX/TX queue pair per instance, as the T2's NIU gave one
DMA channel per R thread.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .workloads import ROLES, Workload, find_by_app, known_workloads

RX_PORT = 0
TX_PORT = 1  # a workload file's app.tx_port may say 0: T answers on the port R receives from


def placement(workload: Workload, contexts: Sequence[int], allow_colocate: bool = False) -> dict:
    """contexts: PU os_index of task 0, 1, ... (R0 P0 T0 R1 P1 T1 ...)."""
    if len(contexts) != workload.n_tasks:
        raise ValueError(f"{len(contexts)} contexts for {workload.n_tasks} tasks of {workload.name}")
    doc: dict = {"app": workload.app}
    if workload.variant is not None:
        doc["variant"] = workload.variant
    doc["allow_colocate"] = bool(allow_colocate)
    doc["instances"] = [
        {
            "rx": {"port": RX_PORT, "queue": i},
            "tx": {"port": workload.spec.tx_port, "queue": i},
            "tasks": {"R": int(contexts[3 * i]), "P": int(contexts[3 * i + 1]), "T": int(contexts[3 * i + 2])},
        }
        for i in range(workload.instances)
    ]
    return doc


def load_placement(path: str) -> dict:
    """The JSON object of a placement file; errors name the file (as --placement)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ValueError(f"--placement {path}: cannot read it ({e.strerror})") from None
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError(f"--placement {path}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"--placement {path}: not a placement object (contract 1, runtime/PLACEMENT.md)")
    return doc


def contexts_of(doc: dict, where: str, workload: str | None = None) -> tuple[Workload, list[int], bool]:
    """Workload, contexts (R0 P0 T0 R1 ...) and co-location flag of a placement JSON;
    workload: the one it is of (a --workload-file's), checked against its app and variant."""
    try:
        app, variant = doc["app"], doc.get("variant")
        if workload is not None:
            spec = Workload(workload, 1).spec
            if (spec.app, spec.variant) != (app, variant):
                raise ValueError(f"{where}: app {app!r} variant {variant!r} is not workload {workload}'s "
                                 f"(app {spec.app!r} variant {spec.variant!r})")
        name = workload or find_by_app(app, variant)
        if name is None:
            raise ValueError(f"{where}: app {app!r} variant {variant!r} is no workload assign knows "
                             f"({', '.join(known_workloads())}; a workload of your own: --workload-file FILE)")
        insts = doc["instances"]
        if not isinstance(insts, list) or not insts:
            raise ValueError(f"{where}: \"instances\" must be a non-empty list")
        ctx = [int(i["tasks"][r]) for i in insts for r in ROLES]
    except (KeyError, TypeError) as e:
        raise ValueError(f"{where}: not a placement (contract 1, runtime/PLACEMENT.md): missing {e}") from None
    return Workload(name, len(insts)), ctx, bool(doc.get("allow_colocate", False))
