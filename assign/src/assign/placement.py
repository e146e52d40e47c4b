"""Writing an assignment as the placement JSON the apps run with
(contract 1, runtime/PLACEMENT.md).

Ports and queues: instance i receives on port 0 queue i and transmits on
port 1 queue i, one RX/TX queue pair per instance, as the T2's NIU gave one
DMA channel per R thread.
"""
from __future__ import annotations

from collections.abc import Sequence

from .workloads import Workload

RX_PORT = 0
TX_PORT = 1


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
            "tx": {"port": TX_PORT, "queue": i},
            "tasks": {"R": int(contexts[3 * i]), "P": int(contexts[3 * i + 1]), "T": int(contexts[3 * i + 2])},
        }
        for i in range(workload.instances)
    ]
    return doc
