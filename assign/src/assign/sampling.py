"""iid random assignments, drawn as the paper does (sec. 3.3.2, step 1).

The paper gives every task a context drawn uniformly and discards a draw in
which two tasks collide, so accepted draws are uniform over the raw
placements (injective maps).  We draw from that same distribution directly,
without the rejections: task 0 gets a uniform context, task 1 a uniform one
of the V - 1 left, and so on (a partial Fisher-Yates shuffle).  Every
injective map then has probability (V - T)! / V!, exactly what rejection
gives, but a draw costs T random integers instead of about T / P(no
collision) (24 tasks on the T2's 64 contexts: 140 times fewer), and a whole
block of draws is one vectorised step per task.  With co-location allowed,
collisions are kept: T independent uniform contexts.

Draw i of a run depends only on (seed, i): draws are made in fixed blocks of
BLOCK, block b from a generator seeded with (seed, b), and draw i is row
i mod BLOCK of block i div BLOCK, however many draws are asked for and from
where.  Re-running with a larger n continues the same sequence, and a
resumed run draws what it would have.  `normals` gives per-draw noise the
same way (the model backend's).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

BLOCK = 4096  # draws per generator; part of what draw i is: changing it changes every run's draws
_DRAWS, _NORMALS = 2, 3  # stream tags in the generator's seed (seed, block, tag)


def _blocks(seed: int, first: int, count: int, tag: int,
            make: Callable[[np.random.Generator], np.ndarray]) -> np.ndarray:
    """Rows first .. first+count-1 of the stream whose block b is
    make(default_rng([seed, b, tag])) (BLOCK rows)."""
    if first < 0 or count < 0:
        raise ValueError(f"draws {first}..{first + count - 1}: indices are >= 0")
    parts = []
    b = first // BLOCK
    while count > 0:
        block = make(np.random.default_rng([seed, b, tag]))
        lo = first - b * BLOCK
        take = min(count, BLOCK - lo)
        parts.append(block[lo:lo + take])
        first += take
        count -= take
        b += 1
    return np.concatenate(parts) if parts else make(np.random.default_rng([seed, 0, tag]))[:0]


def _injective(rng: np.random.Generator, n_tasks: int, n_contexts: int) -> np.ndarray:
    """BLOCK uniform injective maps (partial Fisher-Yates, one column per task)."""
    perm = np.broadcast_to(np.arange(n_contexts, dtype=np.int64), (BLOCK, n_contexts)).copy()
    rows = np.arange(BLOCK)
    for t in range(n_tasks):
        j = t + rng.integers(0, n_contexts - t, size=BLOCK)
        picked = perm[rows, j]
        perm[rows, j] = perm[:, t]
        perm[:, t] = picked
    return perm[:, :n_tasks]


def draws(seed: int, first: int, count: int, n_tasks: int, n_contexts: int,
          allow_colocate: bool = False) -> np.ndarray:
    """Context indices of draws first .. first+count-1, an array (count, n_tasks)."""
    if n_tasks > n_contexts and not allow_colocate:
        raise ValueError(f"{n_tasks} tasks cannot sit on {n_contexts} contexts without co-location")
    if allow_colocate:
        def make(rng: np.random.Generator) -> np.ndarray:
            return rng.integers(0, n_contexts, size=(BLOCK, n_tasks))
    else:
        def make(rng: np.random.Generator) -> np.ndarray:
            return _injective(rng, n_tasks, n_contexts)
    return _blocks(seed, first, count, _DRAWS, make)


def draw(seed: int, idx: int, n_tasks: int, n_contexts: int, allow_colocate: bool = False) -> np.ndarray:
    """Context indices (n_tasks,) of draw `idx` of the run seeded `seed`."""
    return draws(seed, idx, 1, n_tasks, n_contexts, allow_colocate)[0]


def normals(seed: int, idx: np.ndarray) -> np.ndarray:
    """A standard normal per draw index, a function of (seed, index) only."""
    idx = np.asarray(idx, dtype=np.int64)
    out = np.empty(idx.shape)
    if idx.size == 0:
        return out
    lo, hi = int(idx.min()), int(idx.max())
    if hi - lo < 2 * idx.size + 4 * BLOCK:  # dense (a batch of consecutive draws): one pass
        return _blocks(seed, lo, hi - lo + 1, _NORMALS, lambda rng: rng.standard_normal(BLOCK))[idx - lo]
    block = idx // BLOCK  # scattered indices: block by block
    for b in np.unique(block):
        sel = block == b
        out[sel] = np.random.default_rng([seed, int(b), _NORMALS]).standard_normal(BLOCK)[idx[sel] - b * BLOCK]
    return out
