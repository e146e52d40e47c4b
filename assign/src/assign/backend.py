"""What a backend is: something that turns assignments into throughput.

`dpdk` (runs the real apps on this machine, kind "measured",
dpdk_backend.py) and `model` (a performance predictor, kind "modelled").
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

Kind = Literal["measured", "modelled"]
DEFAULT_BACKEND = "dpdk"  # on --machine local; "model" on every other machine (default_backend)
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


def default_backend(machine: str | None, topology: str | None) -> str:
    """dpdk measures on this machine; a machine we do not have can only be modelled."""
    return DEFAULT_BACKEND if topology is None and (machine or "local") == "local" else "model"


def make_backend(name: str, topo, workload, *, seed: int = 0, noise: float | None = None,
                 model_params: str | None = None, allow_colocate: bool | None = None,
                 dpdk=None) -> Backend:
    """Backend by name (--backend)."""
    if name == "model":
        from .model import ModelBackend, load_params

        return ModelBackend(topo, workload, load_params(workload.name, model_params), noise, seed)
    if name == "dpdk":
        from .dpdk_backend import DpdkBackend

        return DpdkBackend(topo, workload, dpdk, allow_colocate=allow_colocate)
    raise BackendError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
