"""Baseline assignments to compare with the estimated optimum (paper, sec. 2).

naive: tasks on random contexts, i.e. what the random sample itself is; its
score is the mean of the sample.  Linux-like: the load balancer's view,
tasks spread evenly over the topology one level at a time (cores first,
then pipelines within a core, then contexts), in task order.
"""
from __future__ import annotations

import numpy as np

from .topology import Node, Topology


def linux_like(topo: Topology, n_tasks: int) -> list[int]:
    """Context index per task: each task descends the tree into the child
    holding the fewest tasks so far (ties: the first), like a balanced
    scheduler filling scheduling domains."""
    index = {id(p): i for i, p in enumerate(topo.pus)}
    load: dict[int, int] = {}
    capacity: dict[int, int] = {}

    def cap(n: Node) -> int:
        if id(n) not in capacity:
            capacity[id(n)] = 1 if n.is_pu else sum(cap(c) for c in n.children)
        return capacity[id(n)]

    if n_tasks > topo.n_contexts:  # co-location: fill the machine, then go round again
        once = linux_like(topo, topo.n_contexts)
        return [once[t % topo.n_contexts] for t in range(n_tasks)]
    out = []
    for _ in range(n_tasks):
        node = topo.root
        while not node.is_pu:
            load[id(node)] = load.get(id(node), 0) + 1
            free = [c for c in node.children if load.get(id(c), 0) < cap(c)]
            # fewest tasks relative to size, so a big subtree is not starved
            node = min(free, key=lambda c: load.get(id(c), 0) / cap(c))
        load[id(node)] = 1
        out.append(index[id(node)])
    return out


def naive_score(values: list[float]) -> float:
    """Expected throughput of a random assignment: the sample mean."""
    return float(np.mean(values))
