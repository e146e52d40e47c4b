"""iid random assignments, drawn as the paper does (sec. 3.3.2, step 1).

Every task gets a context drawn uniformly; a draw in which two tasks collide
is discarded whole and drawn again, so accepted draws are uniform over the
raw placements (injective maps).  With co-location allowed, collisions are
kept.  Draw i of a run depends only on (seed, i): re-running with a larger n
continues the same sequence, and a resumed run draws what it would have.
"""
from __future__ import annotations

import numpy as np

TRIES_PER_BATCH = 256  # candidate draws generated at once while rejecting


def draw(seed: int, idx: int, n_tasks: int, n_contexts: int, allow_colocate: bool = False) -> np.ndarray:
    """Context indices (n_tasks,) of draw `idx` of the run seeded `seed`."""
    if n_tasks > n_contexts and not allow_colocate:
        raise ValueError(f"{n_tasks} tasks cannot sit on {n_contexts} contexts without co-location")
    rng = np.random.default_rng([seed, idx, 0])
    if allow_colocate:
        return rng.integers(0, n_contexts, size=n_tasks)
    while True:
        cand = rng.integers(0, n_contexts, size=(TRIES_PER_BATCH, n_tasks))
        hit = np.flatnonzero(_collision_free(cand, n_contexts))
        if hit.size:
            return cand[hit[0]]


def _collision_free(cand: np.ndarray, n_contexts: int) -> np.ndarray:
    """Rows of `cand` without a repeated context."""
    if n_contexts <= 64:  # one bit per context: no collision iff T bits are set
        bits = np.bitwise_or.reduce(np.left_shift(np.uint64(1), cand.astype(np.uint64)), axis=1)
        return np.bitwise_count(bits) == cand.shape[1]
    srt = np.sort(cand, axis=1)
    return ~(srt[:, 1:] == srt[:, :-1]).any(axis=1)


def draws(seed: int, first: int, count: int, n_tasks: int, n_contexts: int,
          allow_colocate: bool = False) -> np.ndarray:
    """Draws first .. first+count-1 as an array (count, n_tasks)."""
    out = np.empty((count, n_tasks), dtype=np.int64)
    for k in range(count):
        out[k] = draw(seed, first + k, n_tasks, n_contexts, allow_colocate)
    return out
