"""Every distinct assignment (one representative per orbit) with its
multiplicity, the number of raw placements (injective maps) in the orbit.

The recursion mirrors counting.py: at a node, the tasks are split among the
classes of identical children; within a class of k children they form a set
of j <= k non-empty blocks (distinct task sets, so unordered), block b goes
to the b-th child of the class.  The j distinct blocks can sit on the k
children in k!/(k-j)! ways, all equivalent: that factor times the children's
multiplicities is the orbit size.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from math import perm

from .topology import Node, Topology

# (placement as {task: context index}, multiplicity)
Orbit = tuple[dict[int, int], int]


def _n_pus(node: Node) -> int:
    return 1 if node.is_pu else sum(_n_pus(c) for c in node.children)


def _set_partitions(items: tuple[int, ...], max_blocks: int, cap: int) -> Iterator[list[tuple[int, ...]]]:
    """Partitions of items into at most max_blocks blocks of size <= cap,
    each partition once (the block holding the first item comes first)."""
    if not items:
        yield []
        return
    if max_blocks == 0:
        return
    first, rest = items[0], items[1:]
    for size in range(0, min(cap - 1, len(rest)) + 1):
        for others in combinations(rest, size):
            block = (first,) + others
            remaining = tuple(x for x in rest if x not in others)
            for tail in _set_partitions(remaining, max_blocks - 1, cap):
                yield [block] + tail


def _subsets_split(items: tuple[int, ...], caps: Sequence[int]) -> Iterator[list[tuple[int, ...]]]:
    """Ordered splits of items into len(caps) (possibly empty) parts, part i
    of size <= caps[i]."""
    if len(caps) == 1:
        if len(items) <= caps[0]:
            yield [items]
        return
    for size in range(0, min(caps[0], len(items)) + 1):
        for part in combinations(items, size):
            rest = tuple(x for x in items if x not in part)
            for tail in _subsets_split(rest, caps[1:]):
                yield [part] + tail


class _Walker:
    def __init__(self, topo: Topology):
        # context index of each PU object, in tree order
        self.index = {id(p): i for i, p in enumerate(topo.pus)}
        self.size: dict[int, int] = {}
        self.shapes: dict[int, tuple] = {}

    def shape(self, node: Node) -> tuple:
        if id(node) not in self.shapes:
            self.shapes[id(node)] = node.shape()
        return self.shapes[id(node)]

    def n_pus(self, node: Node) -> int:
        if id(node) not in self.size:
            self.size[id(node)] = _n_pus(node)
        return self.size[id(node)]

    def orbits(self, node: Node, tasks: tuple[int, ...]) -> Iterator[Orbit]:
        if not tasks:
            yield {}, 1
            return
        if node.is_pu:
            if len(tasks) == 1:
                yield {tasks[0]: self.index[id(node)]}, 1
            return
        # classes of identical children, in a stable order
        classes: dict[tuple, list[Node]] = {}
        for c in node.children:
            classes.setdefault(self.shape(c), []).append(c)
        groups = list(classes.values())
        caps = [len(g) * self.n_pus(g[0]) for g in groups]
        for split in _subsets_split(tasks, caps):
            yield from self._classes(groups, split, 0)

    def _classes(self, groups: list[list[Node]], split: list[tuple[int, ...]], i: int) -> Iterator[Orbit]:
        if i == len(groups):
            yield {}, 1
            return
        for here, mult_here in self._one_class(groups[i], split[i]):
            for rest, mult_rest in self._classes(groups, split, i + 1):
                yield {**here, **rest}, mult_here * mult_rest

    def _one_class(self, children: list[Node], tasks: tuple[int, ...]) -> Iterator[Orbit]:
        k = len(children)
        cap = self.n_pus(children[0])
        for blocks in _set_partitions(tasks, k, cap):
            yield from self._blocks(children, blocks, 0, perm(k, len(blocks)))

    def _blocks(self, children: list[Node], blocks: list[tuple[int, ...]], b: int, mult: int) -> Iterator[Orbit]:
        if b == len(blocks):
            yield {}, mult
            return
        for here, m in self.orbits(children[b], blocks[b]):
            for rest, m_rest in self._blocks(children, blocks, b + 1, mult):
                yield {**here, **rest}, m * m_rest


def orbits(topo: Topology, n_tasks: int) -> Iterator[Orbit]:
    """One representative of every distinct assignment of tasks 0..n_tasks-1
    with its multiplicity.  Their number is counting.count_assignments and
    the multiplicities add up to counting.raw_placements."""
    if n_tasks > topo.n_contexts:
        return
    yield from _Walker(topo).orbits(topo.root, tuple(range(n_tasks)))


def representatives(topo: Topology, n_tasks: int) -> tuple[list[list[int]], list[int]]:
    """All orbits as (context index per task, multiplicity) lists."""
    reps: list[list[int]] = []
    mults: list[int] = []
    for placement, mult in orbits(topo, n_tasks):
        reps.append([placement[t] for t in range(n_tasks)])
        mults.append(mult)
    return reps, mults


BRUTE_FORCE_LIMIT = 5_000_000  # raw maps enumerated one by one, at most (co-location)


def representatives_colocated(topo: Topology, n_tasks: int) -> tuple[list[list[int]], list[int]]:
    """Every distinct assignment when tasks may share contexts: all maps
    tasks -> contexts, grouped by their canonical key (counting.orbit_keys),
    one representative (the first map in lexicographic order) and the
    group's size each.  Brute force: refused beyond BRUTE_FORCE_LIMIT maps."""
    import numpy as np

    from .counting import orbit_keys

    v = topo.n_contexts
    total = v ** n_tasks
    if total > BRUTE_FORCE_LIMIT:
        raise ValueError(f"{n_tasks} tasks on {v} contexts with co-location are {total:,} maps, more than the "
                         f"{BRUTE_FORCE_LIMIT:,} enumerated one by one: use fewer instances")
    reps: dict[tuple, int] = {}
    first: list[list[int]] = []
    mults: list[int] = []
    step = 65536
    for lo in range(0, total, step):
        codes = np.arange(lo, min(total, lo + step), dtype=np.int64)
        ctx = np.stack([(codes // v ** (n_tasks - 1 - t)) % v for t in range(n_tasks)], axis=1)
        for row, key in zip(ctx.tolist(), orbit_keys(topo, ctx)):
            j = reps.get(key)
            if j is None:
                reps[key] = len(first)
                first.append(row)
                mults.append(1)
            else:
                mults[j] += 1
    return first, mults
