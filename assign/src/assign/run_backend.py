"""The backend that measured a stored run, built again to measure more of it
with the same protocol (selection rounds, baselines): the model with the
run's noise, seed and parameters, or the dpdk backend with the run's window,
warm-up, traffic and rule set."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .backends.base import BackendError
from .topology import Topology
from .workloads import stored_workload

if TYPE_CHECKING:
    from .backends.base import Backend
    from .store import Run


def backend_for_run(run: Run, *, model_params: str | None = None, build: str | None = None,
                    runner: str | None = None, timeout: float | None = None) -> Backend:
    topo = Topology.from_json(run.topology)
    workload = stored_workload(run.workload, run.instances, run.params)
    if run.backend == "model":
        from .backends.model import ModelBackend, load_params, params_digest

        params = load_params(workload.name, model_params, topo if model_params else None)
        stored = run.params.get("model_params_sha256")
        mine = params_digest(params)
        packaged = params_digest(load_params(workload.name))
        if (stored or packaged) != mine:
            have = f"--model-params {model_params}" if model_params else "the packaged parameters"
            raise BackendError(f"{run.label()} was modelled with parameters of digest {stored or packaged}; "
                               f"{have} have digest {mine}: give the run's own file with --model-params")
        return ModelBackend(topo, workload, params, run.params.get("noise_rel_sd"), run.seed)
    if run.backend == "dpdk":
        from .backends.dpdk.backend import DpdkBackend
        from .backends.dpdk.options import DpdkOptions

        overrides: dict = {}
        if runner:
            overrides["runner"] = runner
        if timeout:
            overrides["timeout"] = timeout
        if build:
            overrides["build_dir"] = Path(build)
        opts = DpdkOptions.from_params(run.params, **overrides)
        return DpdkBackend(topo, workload, opts, allow_colocate=run.allow_colocate or None)
    raise BackendError(f"{run.label()}: backend {run.backend!r} cannot be built again here")
