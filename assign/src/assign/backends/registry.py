"""Backends by name (--backend), and which one a machine gets by default."""
from __future__ import annotations

from .base import Backend, BackendError  # noqa: F401  (BackendError: re-exported for callers)

DEFAULT_BACKEND = "dpdk"  # on --machine local; "model" on every other machine (default_backend)
# Backends known by name; "dpdk" is listed so the error can say where it stands.
BACKENDS = ("model", "dpdk")


def default_backend(machine: str | None, topology: str | None) -> str:
    """dpdk measures on this machine; a machine we do not have can only be modelled."""
    return DEFAULT_BACKEND if topology is None and (machine or "local") == "local" else "model"


def make_backend(name: str, topo, workload, *, seed: int = 0, noise: float | None = None,
                 model_params: str | None = None, allow_colocate: bool | None = None,
                 dpdk=None) -> Backend:
    """Backend by name (--backend)."""
    if name == "model":
        from .model import ModelBackend, load_params

        return ModelBackend(topo, workload, load_params(workload.name, model_params, topo), noise, seed)
    if name == "dpdk":
        from .dpdk.backend import DpdkBackend

        return DpdkBackend(topo, workload, dpdk, allow_colocate=allow_colocate)
    raise BackendError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
