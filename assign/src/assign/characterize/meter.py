"""Measures placements of 1 to 4 instances with the dpdk backend (the
default build: what `assign sample` measures), one backend per instance
count, kept open while the command runs."""
from __future__ import annotations

from ..backends.base import BackendError
from ..backends.dpdk.backend import DpdkBackend
from ..backends.dpdk.options import DpdkOptions
from ..topology import Topology
from ..workloads import Workload


class PlacementMeter:
    def __init__(self, topo: Topology, workload: str, options: DpdkOptions):
        self.topo = topo
        self.workload = workload
        self.options = options
        self.backends: dict[int, DpdkBackend] = {}

    def __call__(self, instances: int, contexts: tuple) -> float:
        be = self.backends.get(instances)
        if be is None:
            be = self.backends[instances] = DpdkBackend(self.topo, Workload(self.workload, instances), self.options)
        r = be.measure_one(list(contexts))
        if r.status != "ok":
            raise BackendError(f"placement of {instances} instance(s) on {list(contexts)} failed twice: {r.reason}")
        return float(r.value)

    def close(self) -> None:
        for be in self.backends.values():
            be.close()
        self.backends.clear()
