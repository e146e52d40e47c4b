"""Placements as Lehmer codes, the encoding Optuna's FAQ recommends for
permutations (../shared/reference/placing-other-programs.md): N integers,
the i-th in [0, M-1-i], each picking among the contexts still free, so a
uniform code is exactly the paper's iid placement.  With co-location every
task takes an integer in [0, M-1]."""
from __future__ import annotations

import numpy as np


def bounds(n_tasks: int, n_contexts: int, allow_colocate: bool) -> list[int]:
    """The largest value of each position."""
    return [n_contexts - 1 if allow_colocate else n_contexts - 1 - i for i in range(n_tasks)]


def decode(code: list[int], n_contexts: int, allow_colocate: bool) -> np.ndarray:
    if allow_colocate:
        return np.asarray(code, dtype=np.int64)
    free = list(range(n_contexts))
    return np.array([free.pop(c) for c in code], dtype=np.int64)


def encode(ctx: np.ndarray, n_contexts: int, allow_colocate: bool) -> list[int]:
    if allow_colocate:
        return [int(c) for c in ctx]
    free = list(range(n_contexts))
    out = []
    for c in ctx:
        i = free.index(int(c))
        out.append(i)
        free.pop(i)
    return out
