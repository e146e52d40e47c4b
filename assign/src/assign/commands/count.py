"""`assign count`: the exact number of distinct assignments of T tasks."""
from __future__ import annotations

import argparse

from ._args import nonneg_int
from ._options import add_machine, topology_of


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("count", help="exact number of distinct assignments of T tasks",
                       description="Exact number of distinct assignments of T distinct tasks, one per context, where "
                                   "assignments that differ only by permuting identical siblings (cores, pipelines, "
                                   "contexts, ...) are one. The integer is the first line of output.")
    add_machine(p)
    p.add_argument("--tasks", type=nonneg_int, required=True, metavar="T", help="number of tasks")
    return p


def run(args: argparse.Namespace) -> int:
    from ..counting import count_assignments, raw_placements
    from ..workloads import WorkloadError

    topo = topology_of(args)
    if args.tasks > topo.n_contexts:
        raise WorkloadError(f"--tasks {args.tasks} exceeds the {topo.n_contexts} hardware contexts of {topo.name}")
    c = count_assignments(topo, args.tasks)
    print(c)
    print(f"distinct assignments of {args.tasks} distinct tasks on {topo.summary()} "
          f"(exact; identical siblings identified; {float(c):.4g})")
    print(f"raw placements (injective maps, what random sampling draws from): {raw_placements(topo, args.tasks)}")
    return 0
