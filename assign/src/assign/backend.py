"""What a backend is: something that turns assignments into throughput.

`model` (a performance predictor, kind "modelled") is the only backend so
far; `dpdk` (runs the real apps, kind "measured") plugs in through the same
Protocol in a later issue.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

Kind = Literal["measured", "modelled"]
DEFAULT_BACKEND = "model"
# Backends known by name; "dpdk" is listed so the error can say where it stands.
BACKENDS = ("model", "dpdk")


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


def make_backend(name: str, topo, workload, *, seed: int = 0, noise: float | None = None,
                 model_params: str | None = None) -> Backend:
    """Backend by name (--backend)."""
    if name == "model":
        from .model import ModelBackend, load_params

        return ModelBackend(topo, workload, load_params(workload.name, model_params), noise, seed)
    if name == "dpdk":
        raise BackendError("backend 'dpdk' (running the real apps) is not available yet; use --backend model")
    raise BackendError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
