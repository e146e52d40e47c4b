"""Measures placements of any number of instances with the dpdk backend (the
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
        # instance counts whose app ran on 4 KiB pages (too few hugepages free): a memory-bound
        # workload runs tens of percent slower there, so figures across counts do not compare
        self.no_hugepages: set[int] = set()

    def __call__(self, instances: int, contexts: tuple) -> float:
        be = self.backends.get(instances)
        if be is None:
            be = self.backends[instances] = DpdkBackend(self.topo, Workload(self.workload, instances), self.options)
        r = be.measure_one(list(contexts))
        if r.status != "ok":
            raise BackendError(f"placement of {instances} instance(s) on {list(contexts)} failed twice: {r.reason}")
        if (r.extra or {}).get("hugepages") is False:
            self.no_hugepages.add(instances)
        return float(r.value)

    def hugepage_warning(self) -> str | None:
        """What to print when some placements ran on 4 KiB pages, else None."""
        if not self.no_hugepages:
            return None
        counts = ", ".join(str(k) for k in sorted(self.no_hugepages))
        return (f"warning: the placements of {counts} instance(s) ran on 4 KiB pages (too few hugepages free; "
                "the runtime fell back to --no-huge): a memory-bound workload runs tens of percent slower there, "
                "so their figures do not compare with the others'; reserve more hugepages "
                "(/proc/sys/vm/nr_hugepages) and measure again")

    def close(self) -> None:
        for be in self.backends.values():
            be.close()
        self.backends.clear()
