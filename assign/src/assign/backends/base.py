"""What a backend is: something that turns assignments into throughput.

`dpdk` (runs the real apps on this machine, kind "measured", backends/dpdk/)
and `model` (a performance predictor, kind "modelled", backends/model.py);
registry.py makes one by name.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Kind = Literal["measured", "modelled"]


class BackendError(ValueError):
    """Unknown or unavailable backend."""


@dataclass(frozen=True)
class MeasureRequest:
    """Draw `idx` of a run: task t runs on PU os_index contexts[t]."""

    idx: int
    contexts: tuple[int, ...]


@dataclass
class Result:
    """A throughput in packets/s, or a failure with its reason (never a value)."""

    value: float | None
    status: Literal["ok", "failed"] = "ok"
    reason: str | None = None
    extra: dict = field(default_factory=dict)

    @staticmethod
    def failed(reason: str, extra: dict | None = None) -> "Result":
        return Result(None, "failed", reason, extra or {})


class Backend(Protocol):
    name: str
    kind: Kind
    batch_size: int  # how many requests measure() takes at once (1 for real runs)

    def describe(self) -> dict:
        """Parameters that identify the backend's configuration (stored with the run)."""
        ...

    def measure(self, requests: Sequence[MeasureRequest]) -> list[Result]:
        """One Result per request, in order."""
        ...


@dataclass
class Batch:
    """What a backend that evaluates whole arrays returns for a batch of draws:
    every one a value (no failures), and each one's extra already as JSON
    (what the store writes), so a million draws are not a million dicts."""

    values: list[float]
    extras_json: list[str]


class ArrayBackend(Backend, Protocol):
    """A backend that can also take a batch as arrays (the model): the
    sampler uses measure_array, everything else measure()."""

    def measure_array(self, idx: Sequence[int], ctx: Any) -> Batch:
        """Draw indices (B,) and context indices (B, T) (not os_index) -> Batch."""
        ...


class RealRuns:
    """What the backends that run a real program share (DpdkBackend, ProgramBackend): a draw as the
    placement JSON the program runs with, and repeated measurements of one assignment."""

    workload: Any
    allow_colocate: bool | None

    def measure_one(self, contexts: Sequence[int]) -> Result:  # pragma: no cover - each backend's own
        raise NotImplementedError

    def placement(self, contexts: Sequence[int]) -> dict:
        """allow_colocate None: co-location is asked for exactly when the draw puts two tasks on one context."""
        from ..placement import placement

        colocate = self.allow_colocate
        if colocate is None:
            colocate = len(set(contexts)) < len(contexts)
        return placement(self.workload, contexts, colocate)

    def repeat(self, contexts: Sequence[int], reps: int) -> tuple[list[float], list[str], list[dict]]:
        """(values, failure reasons, extras) of `reps` measurements of one assignment."""
        values, failures, extras = [], [], []
        for _ in range(reps):
            r = self.measure_one(contexts)
            if r.status == "ok":
                values.append(float(r.value))
                extras.append(r.extra)
            else:
                failures.append(r.reason or "")
        return values, failures, extras


def summarize(values: Sequence[float]) -> dict:
    """n, mean, sd (ddof 1), CV, median, min, max of repeated measurements of one assignment."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    mean = float(v.mean()) if v.size else float("nan")
    std = float(v.std(ddof=1)) if v.size > 1 else float("nan")
    return {"n": int(v.size), "mean": mean, "std": std, "cv": std / mean if v.size > 1 and mean else float("nan"),
            "median": float(np.median(v)) if v.size else float("nan"),
            "min": float(v.min()) if v.size else float("nan"), "max": float(v.max()) if v.size else float("nan")}
