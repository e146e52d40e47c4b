"""The repetitions a run plans while it samples (assign/EVT.md, "Noise").

Every `repeat_every` successful draws, one placement already drawn is
measured again, in the same sitting, between the draws: drift between
minutes then falls on the repetitions as on the draws.  The repetitions go
to the leading draws: the top `candidates` by their current mean (all their
measurements), in pairs: a draw measured again once gets the next
repetition too (K draws later), and otherwise the one with the fewest
repetitions goes first (ties: the higher mean, then the lower draw).  The
noise figure pools placements with two repetitions or more (evt/noise.py:
a first value is a lucky one), so pairs give a run its noise from its second
repetition on.  Singles spread over the 25 leading draws gave none before
the 26th, i.e. none in a run of 500 draws (seen on a 16-context machine,
assign/notes/2026-11-27-16-contexts-12-threads.md).  They serve twice:
their spread is the run's noise figure (evt/noise.py), and the leading
draws' means become more exact,
which is where the estimate of the optimum of means looks.  The candidate
set grows with the repetitions, so that each holds about PER_CANDIDATE of them.

The plan depends only on what is stored, so a run killed between a draw
and its repetition makes it up when it is sampled again.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

import numpy as np

DEFAULT_REPEAT_EVERY = 20        # one repetition per 20 draws: 5% of a run's measurements
MIN_CANDIDATES = 25
PER_CANDIDATE = 20
NOISE_KEY_BASE = 1 << 41         # model noise keys of repeated measurements (seq + this): no draw has them


def noise_key(seq: int) -> int:
    """The model backend's noise key of a repeated measurement: each its own noise."""
    return NOISE_KEY_BASE + int(seq)


def due(draws_ok: int, repeat_every: int, attempted: int) -> int:
    """Repetitions owed after draws_ok successful draws, attempted already made."""
    if repeat_every <= 0:
        return 0
    return max(0, draws_ok // repeat_every - attempted)


def candidates_for(total_repetitions: int) -> int:
    return max(MIN_CANDIDATES, math.ceil(total_repetitions / PER_CANDIDATE))


class Plan:
    """The draws' first values and their repetitions, kept in memory while a
    run samples, and the choice of the next draws to measure again."""

    def __init__(self, idx: Sequence[int], first: Sequence[float],
                 repeats: Iterable[tuple[int, float | None]] = ()):
        self.idx = np.asarray(idx, dtype=np.int64)
        self.first = np.asarray(first, dtype=float)
        self.sums: dict[int, float] = {}
        self.counts: dict[int, int] = {}    # successful repetitions
        self.attempts: dict[int, int] = {}  # failures included
        self.attempted = 0
        for i, v in repeats:
            self.add_repeat(i, v)

    def add_draws(self, idx: Sequence[int], values: Sequence[float]) -> None:
        self.idx = np.concatenate([self.idx, np.asarray(idx, dtype=np.int64)])
        self.first = np.concatenate([self.first, np.asarray(values, dtype=float)])

    def add_repeat(self, idx: int, value: float | None) -> None:
        idx = int(idx)
        self.attempted += 1
        self.attempts[idx] = self.attempts.get(idx, 0) + 1
        if value is not None:
            self.sums[idx] = self.sums.get(idx, 0.0) + value
            self.counts[idx] = self.counts.get(idx, 0) + 1

    def means(self) -> np.ndarray:
        """Each draw's current mean (its first value and its repetitions)."""
        mean = self.first.copy()
        if self.counts:
            keys = np.fromiter(self.counts, dtype=np.int64, count=len(self.counts))
            pos = np.searchsorted(self.idx, keys)  # draws are kept in draw order
            ok = (pos < self.idx.size) & (self.idx[np.minimum(pos, self.idx.size - 1)] == keys)
            for i, p in zip(keys[ok].tolist(), pos[ok].tolist()):
                mean[p] = (self.first[p] + self.sums[i]) / (1 + self.counts[i])
        return mean

    def next(self, count: int) -> list[int]:
        """The draws to measure again next, `count` of them, in order."""
        if count <= 0 or self.idx.size == 0:
            return []
        m = min(self.idx.size, candidates_for(self.attempted + count))
        mean = self.means()
        top = np.argpartition(-mean, m - 1)[:m] if m < mean.size else np.arange(mean.size)
        # (pair complete?, repetitions, -mean, draw): an odd count is a pair to finish first
        heap = []
        for p in top:
            a = self.attempts.get(int(self.idx[p]), 0)
            heap.append((a % 2 == 0, a, -float(mean[p]), int(self.idx[p])))
        heapq.heapify(heap)
        out = []
        for _ in range(count):
            _, a, negm, i = heapq.heappop(heap)
            out.append(i)
            heapq.heappush(heap, ((a + 1) % 2 == 0, a + 1, negm, i))
        return out
