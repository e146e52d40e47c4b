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
    """contexts: PU os_index of task 0, 1, ... (R0 P0 T0 R1 P1 T1 ...; a program's tasks in its file's order)."""
    if len(contexts) != workload.n_tasks:
        raise ValueError(f"{len(contexts)} contexts for {workload.n_tasks} tasks of {workload.name}")
    if workload.spec.program is not None:
        # a program we did not write: its tasks by name (assign/WORKLOADS.md); the program's own form of
        # the placement (its --lcores, its control commands, taskset lines) is deploy_form.py's
        return {"workload": workload.name, "launch": workload.spec.launch, "allow_colocate": bool(allow_colocate),
                "tasks": {n: int(c) for n, c in zip(workload.task_names(), contexts)}}
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
    if "tasks" in doc and "app" not in doc:
        return _program_contexts(doc, where, workload)
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


def _program_contexts(doc: dict, where: str, workload: str | None) -> tuple[Workload, list[int], bool]:
    """A program's placement ({"workload", "tasks": {name: context}}): every task of its file, no other."""
    name = doc.get("workload")
    if workload is not None and name != workload:
        raise ValueError(f"{where}: key 'workload': {name!r} is not workload {workload}")
    if not isinstance(name, str):
        raise ValueError(f"{where}: key 'workload': expected the name of a program's workload, got {name!r}")
    w = Workload(name, 1)
    if w.spec.program is None:
        raise ValueError(f"{where}: key 'workload': {name} is a runtime app: its placement has \"app\" and "
                         f"\"instances\" (runtime/PLACEMENT.md)")
    tasks = doc["tasks"]
    names = w.task_names()
    if not isinstance(tasks, dict) or sorted(tasks) != sorted(names):
        got = sorted(tasks) if isinstance(tasks, dict) else tasks
        raise ValueError(f"{where}: key 'tasks': {len(tasks) if isinstance(tasks, dict) else 0} task(s) {got}, "
                         f"but workload {name} has {len(names)}: {', '.join(names)}")
    ctx = []
    for n in names:
        v = tasks[n]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{where}: key 'tasks.{n}': expected a context (PU os_index), got {v!r}")
        ctx.append(v)
    return w, ctx, bool(doc.get("allow_colocate", False))
