"""Measures placements of any number of instances with the dpdk backend (the
default build: what `assign sample` measures), one backend per instance
count, kept open while the command runs: its serve process stays up between
placements of that count.  Each such process holds its replayed captures in
hugepages, so on a memory-bound workload with many counts (ipfwd-mem, 1 to 8
instances: 36 instances' captures at once, 17 GB) the last ones started find
too few free and fall back to 4 KiB pages.  Then the processes of the other
counts are stopped and the placement is measured again on hugepages; the
figure on 4 KiB pages is not used, and kept (`discarded`) for the command's
JSON: nothing measured is lost."""
from __future__ import annotations

import numpy as np

from ..backends.base import BackendError
from ..backends.dpdk.backend import DpdkBackend
from ..backends.dpdk.options import DpdkOptions
from ..topology import Topology
from ..workloads import ROLES, Workload


def task_cycles_per_packet(instances: int, tasks: list[dict] | None) -> list[float] | None:
    """The runtime's per-task counters (the dpdk backend's extra "tasks") as cycles per packet,
    in the placement's task order (R0, P0, T0, R1, ...): TSC cycles of the polls that moved
    packets over the packets moved.  None where the counters are missing or a task moved none."""
    if not tasks:
        return None
    out: list[float | None] = [None] * (3 * instances)
    for t in tasks:
        try:
            j = 3 * int(t["instance"]) + ROLES.index(t["role"])
            pk, cy = int(t["packets"]), int(t["cycles"])
        except (KeyError, TypeError, ValueError):
            return None
        if not (0 <= j < len(out)) or pk <= 0:
            return None
        out[j] = cy / pk
    return None if any(v is None for v in out) else out


def tasks_by_context(tasks: list[dict]) -> dict[int, list[dict]]:
    """task_cycles' entries grouped by context, contexts in order: a context serves its tasks in
    turn, so the sum of one group's cycles per packet bounds every instance with a task there."""
    by: dict[int, list[dict]] = {}
    for t in tasks:
        by.setdefault(t["context"], []).append(t)
    return dict(sorted(by.items()))


class PlacementMeter:
    def __init__(self, topo: Topology, workload: str, options: DpdkOptions):
        self.topo = topo
        self.workload = workload
        self.options = options
        self.backends: dict[int, DpdkBackend] = {}
        # instance counts whose app ran on 4 KiB pages (too few hugepages free): a memory-bound
        # workload runs tens of percent slower there, so figures across counts do not compare
        self.no_hugepages: set[int] = set()
        # placements measured again after stopping the other counts' processes to free hugepages
        self.hugepage_retries = 0
        # the figures those placements first measured on 4 KiB pages: not used, kept for the JSON
        self.discarded: list[dict] = []
        # per placement, per measurement used: each task's cycles per packet (task_cycles)
        self._task_cycles: dict[tuple[int, tuple], list[list[float]]] = {}

    def __call__(self, instances: int, contexts: tuple) -> float:
        be = self.backends.get(instances)
        if be is None:
            be = self.backends[instances] = DpdkBackend(self.topo, Workload(self.workload, instances), self.options)
        r = be.measure_one(list(contexts))
        if r.status == "ok" and (r.extra or {}).get("hugepages") is False and self._stop_others(instances):
            # the figure on 4 KiB pages does not compare with the others: kept, not used; measured
            # again by a fresh process of this count, which now finds the hugepages the others held
            self.hugepage_retries += 1
            self.discarded.append({
                "instances": instances, "contexts": list(contexts), "value_pps": float(r.value), "kind": "measured",
                "reason": "measured on 4 KiB pages (the app fell back to --no-huge: the processes kept for other "
                          "instance counts held the hugepages), so it does not compare with the others; not used: "
                          "those processes were stopped and the placement measured again in a fresh process"})
            be.restart()
            r = be.measure_one(list(contexts))
        if r.status != "ok":
            raise BackendError(f"placement of {instances} instance(s) on {list(contexts)} failed twice: {r.reason}")
        if (r.extra or {}).get("hugepages") is False:
            self.no_hugepages.add(instances)
        cpp = task_cycles_per_packet(instances, (r.extra or {}).get("tasks"))
        if cpp is not None:
            self._task_cycles.setdefault((instances, tuple(contexts)), []).append(cpp)
        return float(r.value)

    def task_cycles(self, instances: int, contexts: tuple) -> list[dict] | None:
        """Each task of the placement with its context and cycles per packet (the median over every
        measurement of it this meter kept), measured; None where none was measured.  A context
        serves its tasks in turn, so the context whose tasks add up to the most cycles bounds the
        rate of every instance with a task there: where a model's figure misses, these say which
        task's cost it got wrong."""
        got = self._task_cycles.get((instances, tuple(contexts)))
        if not got:
            return None
        med = np.median(np.array(got), axis=0)
        return [{"task": f"{ROLES[j % 3]}{j // 3}", "context": int(contexts[j]), "cycles_per_packet": float(c)}
                for j, c in enumerate(med)]

    def _stop_others(self, instances: int) -> bool:
        """Stop every backend but this count's (a later placement of theirs starts a fresh
        process); whether there was any."""
        others = [k for k in self.backends if k != instances]
        for k in others:
            self.backends.pop(k).close()
        return bool(others)

    def hugepage_warning(self) -> str | None:
        """What to print when some placements ran on 4 KiB pages, else None."""
        if not self.no_hugepages:
            return None
        counts = ", ".join(str(k) for k in sorted(self.no_hugepages))
        return (f"warning: the placements of {counts} instance(s) ran on 4 KiB pages (too few hugepages free; "
                "the runtime fell back to --no-huge): a memory-bound workload runs tens of percent slower there, "
                "so their figures do not compare with the others'; reserve more hugepages "
                "(/proc/sys/vm/nr_hugepages, or PIPEPLACE_HUGEPAGES=N tools/setup.sh) and measure again")

    def retry_note(self, figures: bool = True) -> str | None:
        """What to print when placements were measured again for their hugepages, else None:
        a summary line, then (figures) one indented line per figure measured on 4 KiB pages and
        not used (a run can discard a hundred: one line each reads, one line of them all does not)."""
        if not self.hugepage_retries:
            return None
        return "\n".join(
            [f"{self.hugepage_retries} placement(s) measured again: their app had fallen back to 4 KiB pages "
             "because the app processes kept for other instance counts held the hugepages; those were "
             f"stopped, and the {len(self.discarded)} figure(s) on 4 KiB pages were not used (kept with their "
             "reason in the JSON's discarded_measurements)" + (":" if figures else "")]
            + [f"  not used (measured on 4 KiB pages): {d['instances']} instance(s) on {d['contexts']}: "
               f"{d['value_pps']:,.0f} packets/s" for d in self.discarded if figures])

    def close(self) -> None:
        for be in self.backends.values():
            be.close()
        self.backends.clear()
