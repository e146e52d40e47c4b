"""The space a searcher moves in: placements of a workload's tasks on a
machine's contexts, who is whose neighbour, and when two placements are the
same one.

A placement is a row of context indices (0..V-1, hwloc's logical order), one
per task.  Two placements are the same distinct placement when permuting
identical siblings of the topology turns one into the other
(counting.orbit_keys, computed as counting.orbit_hashes): a searcher never pays twice for one of them.  The
neighbours of a placement are every placement one move away: a task moved
to another context (a free one, unless tasks may share contexts) or two tasks
swapping theirs; the ones that are the same distinct placement are kept once.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..counting import orbit_hashes
from ..sampling import draws
from ..topology import Topology


@dataclass
class Space:
    topo: Topology
    n_tasks: int
    allow_colocate: bool = False
    roles: np.ndarray | None = None           # (T,) a class per task: tasks of one class are alike
    links: list[tuple[int, int]] = field(default_factory=list)  # tasks that hand packets to each other

    def __post_init__(self) -> None:
        if self.roles is None:
            self.roles = np.arange(self.n_tasks)
        self.roles = np.asarray(self.roles, dtype=np.int64)
        if self.roles.shape != (self.n_tasks,):
            raise ValueError(f"{self.roles.size} roles for {self.n_tasks} tasks")
        if not self.allow_colocate and self.n_tasks > self.topo.n_contexts:
            raise ValueError(f"{self.n_tasks} tasks do not fit {self.topo.n_contexts} contexts without co-location")

    @staticmethod
    def of_pipelines(topo: Topology, instances: int, allow_colocate: bool = False) -> "Space":
        """N instances of R -> P -> T: task t is role t mod 3 of instance t div 3; R hands to P, P to T."""
        links = [(3 * i + s, 3 * i + s + 1) for i in range(instances) for s in (0, 1)]
        return Space(topo, 3 * instances, allow_colocate, np.arange(3 * instances) % 3, links)

    @property
    def n_contexts(self) -> int:
        return self.topo.n_contexts

    def keys(self, ctx: np.ndarray) -> list[tuple]:
        """The distinct-placement key of each row (counting.orbit_hashes: two words)."""
        return [tuple(r) for r in orbit_hashes(self.topo, np.atleast_2d(ctx)).tolist()]

    def random(self, seed: int, first: int, count: int) -> np.ndarray:
        """`count` iid uniform placements (the paper's draws), a function of (seed, first)."""
        return draws(seed, first, count, self.n_tasks, self.n_contexts, self.allow_colocate)

    def moves(self, x: np.ndarray) -> np.ndarray:
        """Every placement one move from x (duplicates under symmetry included)."""
        x = np.asarray(x, dtype=np.int64)
        t, v = self.n_tasks, self.n_contexts
        if self.allow_colocate:
            targets = [np.setdiff1d(np.arange(v), [x[i]]) for i in range(t)]
        else:
            free = np.setdiff1d(np.arange(v), x)
            targets = [free] * t
        rows = []
        for i in range(t):
            if targets[i].size:
                m = np.repeat(x[None, :], targets[i].size, axis=0)
                m[:, i] = targets[i]
                rows.append(m)
        i, j = np.triu_indices(t, 1)
        keep = x[i] != x[j]
        i, j = i[keep], j[keep]
        s = np.repeat(x[None, :], i.size, axis=0)
        r = np.arange(i.size)
        s[r, i], s[r, j] = x[j], x[i]
        rows.append(s)
        return np.concatenate(rows) if rows else np.zeros((0, t), dtype=np.int64)

    def neighbours(self, x: np.ndarray, key: tuple | None = None) -> tuple[np.ndarray, list[tuple]]:
        """The distinct placements one move from x (x itself left out), with their keys."""
        m = self.moves(x)
        ks = self.keys(m)
        own = key if key is not None else self.keys(np.asarray(x)[None, :])[0]
        seen: dict[tuple, int] = {}
        for r, k in enumerate(ks):
            if k != own and k not in seen:
                seen[k] = r
        rows = list(seen.values())
        return m[rows], list(seen)
