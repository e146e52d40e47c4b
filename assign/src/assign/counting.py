"""Exact number of distinct assignments of T distinct tasks on a topology.

Two assignments are the same when one becomes the other by permuting
identical siblings at any level (cores, pipelines within a core, contexts
within a pipeline, ...): the orbits of injective maps tasks -> contexts under
the automorphism group of the topology tree.  The paper's Table 1 counts
these (3 tasks on the T2: 11).

Method: exponential generating functions over the tree of isomorphism
classes.  Tasks are labelled, so a node's structure is a *set* of non-empty
child structures on disjoint task sets, at most k of them for k identical
children: EGF = sum_{j<=k} B^j / j!, with B the EGF of a non-empty child.
Different classes of children multiply.  We carry n! [x^n] (labelled counts)
so every step is an exact integer operation.
"""
from __future__ import annotations

from functools import lru_cache
from math import comb, factorial, perm

from .topology import Node, Topology

Series = tuple[int, ...]  # a[n] = number of labelled structures on n tasks


def _mul(f: Series, g: Series, cap: int) -> Series:
    """Labelled product: (f*g)[n] = sum_i C(n, i) f[i] g[n-i]."""
    n_max = min(cap, len(f) + len(g) - 2)
    return tuple(
        sum(comb(n, i) * f[i] * g[n - i] for i in range(max(0, n - len(g) + 1), min(n, len(f) - 1) + 1))
        for n in range(n_max + 1)
    )


def _set_of_at_most(b: Series, k: int, cap: int) -> Series:
    """sum_{j=0..k} B^j / j! for a series B with B[0] = 0 (labelled sets of
    at most k non-empty structures).  B^j has j! orderings of the same set,
    so the division is exact."""
    total = [1] + [0] * cap
    power: Series = (1,)
    for j in range(1, k + 1):
        power = _mul(power, b, cap)
        if not any(power):
            break
        fj = factorial(j)
        for n, c in enumerate(power):
            assert c % fj == 0
            total[n] += c // fj
    return tuple(total)


@lru_cache(maxsize=None)
def _series(shape: tuple, cap: int, colocate: bool = False) -> Series:
    node_type, children = shape
    if node_type == "PU":
        # a context holds one task, or with co-location any set of them (one labelled set per size)
        return (1,) * (cap + 1) if colocate else (1, 1)[: cap + 1]
    out: Series = (1,)
    i = 0
    while i < len(children):
        j = i
        while j < len(children) and children[j] == children[i]:
            j += 1
        child = _series(children[i], cap, colocate)
        nonempty = (0,) + child[1:]
        out = _mul(out, _set_of_at_most(nonempty, j - i, cap), cap)
        i = j
    return out


def count_assignments(topo: Topology, tasks: int, colocate: bool = False) -> int:
    """Distinct assignments of `tasks` distinct tasks, one per context (with
    `colocate`, any number of tasks per context)."""
    if tasks < 0:
        raise ValueError(f"number of tasks must be >= 0, got {tasks}")
    if tasks > topo.n_contexts and not colocate:
        return 0
    s = _series(topo.root.shape(), tasks, colocate)
    return s[tasks] if tasks < len(s) else 0


def raw_placements(topo: Topology, tasks: int, colocate: bool = False) -> int:
    """Injective maps tasks -> contexts (what iid sampling draws uniformly); with
    `colocate`, every map."""
    if colocate:
        return topo.n_contexts ** tasks if tasks >= 0 else 0
    return perm(topo.n_contexts, tasks) if 0 <= tasks <= topo.n_contexts else 0


def canonical_assignment(node: Node, task_at: dict[int, int], _counter: list[int] | None = None) -> tuple:
    """Canonical form of an assignment (context index -> task) under the
    tree's symmetries: two assignments are equivalent iff their forms are
    equal (sorted-children canonical form of a labelled rooted tree).
    Contexts are numbered in tree order, as Topology.pus."""
    counter = _counter if _counter is not None else [0]
    if node.is_pu:
        v = counter[0]
        counter[0] += 1
        return ("PU", task_at.get(v, -1))
    return (node.type, tuple(sorted(canonical_assignment(c, task_at, counter) for c in node.children)))


def orbit_keys(topo: Topology, ctx) -> list[tuple]:
    """One canonical key per row of context indices (B, T) (co-located tasks
    allowed): two rows have the same key iff one becomes the other by
    permuting identical siblings, i.e. iff they are the same distinct
    assignment.  A context's key is the sorted tuple of its tasks; a node's,
    its children's keys sorted within each class of identical children."""
    import numpy as np

    ctx = np.asarray(ctx, dtype=np.int64)
    index = {id(p): i for i, p in enumerate(topo.pus)}
    shapes: dict[int, tuple] = {}

    def shape(n: Node) -> tuple:
        if id(n) not in shapes:
            shapes[id(n)] = n.shape()
        return shapes[id(n)]

    def key(n: Node, at: dict[int, tuple]) -> tuple:
        if n.is_pu:
            return at.get(index[id(n)], ())
        classes: dict[tuple, list[tuple]] = {}
        for c in n.children:
            classes.setdefault(shape(c), []).append(key(c, at))
        return tuple(tuple(sorted(v)) for _, v in sorted(classes.items()))

    out = []
    for row in ctx.tolist():
        at: dict[int, list[int]] = {}
        for t, c in enumerate(row):
            at.setdefault(c, []).append(t)
        out.append(key(topo.root, {c: tuple(v) for c, v in at.items()}))
    return out


_MIX = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)  # odd 64-bit multipliers (golden ratio, murmur3's)


def orbit_hashes(topo: Topology, ctx) -> "np.ndarray":
    """orbit_keys as two 64-bit words per row, computed over the whole batch at once (about a
    hundred times faster on the T2): a context's word mixes its tasks, a node's mixes its
    children's words sorted within each class of identical children, as orbit_keys's tuples do.
    Equal keys give equal words; two different keys share both words with probability about
    2^-128 (tests/test_counting.py compares the two on every neighbourhood of random placements)."""
    import numpy as np

    ctx = np.atleast_2d(np.asarray(ctx, dtype=np.int64))
    b, t = ctx.shape
    out = []
    with np.errstate(over="ignore"):
        for w, mix in enumerate(_MIX):
            m = np.uint64(mix)
            # a context's word: the sum of a mixed word per task on it (order-free: co-located tasks)
            task_word = (np.arange(1, t + 1, dtype=np.uint64) * m) ^ np.uint64(0x5851F42D4C957F2D + w)
            task_word = (task_word * m) ^ (task_word >> np.uint64(29))
            pu = np.zeros((b, topo.n_contexts), dtype=np.uint64)
            np.add.at(pu, (np.repeat(np.arange(b), t), ctx.ravel()), np.tile(task_word, b))
            index = {id(p): i for i, p in enumerate(topo.pus)}
            shapes: dict[int, tuple] = {}

            def word(n: Node) -> "np.ndarray":
                if n.is_pu:
                    return pu[:, index[id(n)]]
                classes: dict[tuple, list] = {}
                for c in n.children:
                    s = shapes.get(id(c))
                    if s is None:
                        s = shapes[id(c)] = c.shape()
                    classes.setdefault(s, []).append(word(c))
                acc = np.full(b, np.uint64(len(n.children) + 1), dtype=np.uint64)
                for _, ws in sorted(classes.items()):
                    for col in np.sort(np.stack(ws, axis=1), axis=1).T:
                        acc = (acc * m) ^ col
                        acc = acc ^ (acc >> np.uint64(31))
                    acc = acc * m + np.uint64(0x632BE59BD9B4E019)
                return acc

            out.append(word(topo.root))
    return np.stack(out, axis=1)
