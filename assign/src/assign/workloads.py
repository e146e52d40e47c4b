"""Workloads: N instances of a three-stage (R -> P -> T) packet-processing app.

Task t of a workload is role ROLES[t % 3] of instance t // 3, so tasks
0, 1, 2 are R, P, T of instance 0, and so on.
"""
from __future__ import annotations

from dataclasses import dataclass

from .topology import Topology

ROLES = ("R", "P", "T")
DEFAULT_INSTANCES = 8

# workload name -> (app binary name, variant or None); placement JSON uses both.
WORKLOADS: dict[str, tuple[str, str | None]] = {
    "ipfwd-l1": ("ipfwd", "l1"),
    "ipfwd-mem": ("ipfwd", "mem"),
    "ahocorasick": ("ahocorasick", None),
    "stateful": ("stateful", None),
    "analyzer": ("analyzer", None),
}


# workload name -> app options it always runs with.  ahocorasick runs in
# --mode keywords (every occurrence of every content keyword): the paper's
# benchmark, unchanged since the app's default became --mode rules.
APP_ARGS: dict[str, tuple[str, ...]] = {
    "ahocorasick": ("--mode", "keywords"),
}


class WorkloadError(ValueError):
    """Unknown workload, or one that does not fit the machine."""


@dataclass(frozen=True)
class Workload:
    name: str
    instances: int = DEFAULT_INSTANCES

    def __post_init__(self) -> None:
        if self.name not in WORKLOADS:
            known = ", ".join(WORKLOADS)
            raise WorkloadError(f"unknown workload {self.name!r} (known: {known})")
        if self.instances < 1:
            raise WorkloadError(f"--instances must be at least 1, got {self.instances}")

    @property
    def app(self) -> str:
        return WORKLOADS[self.name][0]

    @property
    def variant(self) -> str | None:
        return WORKLOADS[self.name][1]

    @property
    def app_args(self) -> list[str]:
        return list(APP_ARGS.get(self.name, ()))

    @property
    def n_tasks(self) -> int:
        return 3 * self.instances

    def task_names(self) -> list[str]:
        return [f"{ROLES[t % 3]}{t // 3}" for t in range(self.n_tasks)]

    def check_fits(self, topo: Topology, allow_colocate: bool, backend: str) -> None:
        """Refuse a workload with more tasks than contexts, saying what to change."""
        if allow_colocate or self.n_tasks <= topo.n_contexts:
            return
        most = topo.n_contexts // 3
        hints = ([f"fewer --instances (at most {most} fit)"] if most >= 1 else []) + [
            "--allow-colocate (tasks share contexts)"]
        if topo.name != "ultrasparc-t2":
            hints.append("--backend model --machine ultrasparc-t2 (the modelled 64-context T2)")
        raise WorkloadError(
            f"workload {self.name} with {self.instances} instances needs {self.n_tasks} hardware contexts "
            f"(one per task: R, P, T per instance) but machine {topo.name} has {topo.n_contexts}"
            + ("" if most >= 1 else " (fewer --instances cannot help: one instance needs 3)")
            + f". Use {', or '.join(hints)}"
        )
