"""The top of a sample: what the paper's estimate reads of it.

Every threshold the estimate tries leaves at most 5% of the sample above it
(threshold.py), and the Fraga Alves-Neves cross-check reads the top 2k + 1
values with k <= sqrt(n) (endpoint_np.py), so the estimate of a sample of n
values needs its size and its largest floor(0.05 n) + 2 sqrt(n) + 2 values,
no more: a store reads those through its value index instead of a million
rows (store.py, run_sample.sample_top), and `estimate` gives the same result
as from the whole sample (tests/test_estimate_top.py)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def top_size(n: int, max_tail_fraction: float = 0.05, above_threshold: int = 0) -> int:
    """How many of the largest values the estimate of n values reads; `above_threshold`: the values
    above a given threshold, all of which it reads too."""
    return min(n, max(math.floor(max_tail_fraction * n), above_threshold) + 2 * math.isqrt(n) + 2)


@dataclass(frozen=True)
class SampleTop:
    """The largest values of a sample of n finite, non-negative, not all equal values (the caller
    checked the whole sample), ascending: at least top_size(n, ...) of them."""

    values: np.ndarray
    n: int

    def __len__(self) -> int:
        return self.n

    def covers(self, max_tail_fraction: float, threshold: float | None = None) -> bool:
        """Whether it holds every value the estimate reads (with this threshold: every value above it)."""
        if self.values.size >= self.n:
            return True
        if self.values.size < top_size(self.n, max_tail_fraction):
            return False
        return threshold is None or float(self.values[0]) <= threshold
