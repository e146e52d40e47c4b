"""Sampling a run: draw, measure, store each result as it comes.

A run is identified by what determines its draws and values (workload,
instances, topology, backend and its configuration, seed, co-location).
Running again with the same identity continues it: draws resume at the next
index, so nothing is measured twice and nothing stored is lost.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from tqdm import tqdm

from .backends.base import Backend, MeasureRequest
from .sampling import draws
from .store import Run, Store
from .topology import Topology
from .workloads import Workload

MAX_CONSECUTIVE_FAILURES = 20


class SampleError(RuntimeError):
    """Sampling stopped before reaching its target."""


@dataclass
class Session:
    """Everything a run needs: where it is stored and how values are made."""

    store: Store
    run: Run
    topo: Topology
    workload: Workload
    backend: Backend

    @staticmethod
    def open(store: Store, topo: Topology, workload: Workload, backend: Backend, seed: int,
             allow_colocate: bool, run_id: int | None = None) -> tuple["Session", bool]:
        if run_id is not None:
            run = store.run(run_id)
            mine = (run.workload, run.instances, run.backend, run.seed, run.allow_colocate, run.topology)
            asked = (workload.name, workload.instances, backend.name, seed, allow_colocate, topo.to_json())
            if mine != asked:
                raise SampleError(f"--run {run_id} is {run.label()}; it does not match the options given "
                                  f"(drop --run to start or continue the run that does)")
            created = False
        else:
            run, created = store.find_or_create_run(
                workload=workload.name, instances=workload.instances, machine=topo.name,
                topology=topo.to_json(), backend=backend.name, kind=backend.kind, seed=seed,
                allow_colocate=allow_colocate, params=backend.describe())
        store.set_durability(backend.kind)
        return Session(store, run, topo, workload, backend), created

    def sample_until(self, n_ok: int, *, show_progress: bool = True) -> tuple[int, int]:
        """Measure new draws until the run holds n_ok successful values.
        Returns (values added, failures added)."""
        nxt, ok, failed, best = self.store.progress(self.run.id)
        if ok >= n_ok:
            return 0, 0
        added = fails = streak = 0
        label = "modelled" if self.backend.kind == "modelled" else "measured"
        bar = tqdm(total=n_ok, initial=ok, unit="asg", disable=not show_progress, file=sys.stderr,
                   desc=f"sampling ({label})", dynamic_ncols=True, mininterval=0.25)
        try:
            while ok < n_ok:
                count = max(1, min(self.backend.batch_size, n_ok - ok))
                ctx = draws(self.run.seed, nxt, count, self.workload.n_tasks, self.topo.n_contexts,
                            self.run.allow_colocate)
                os_idx = self.topo.os_index[ctx]
                requests = [MeasureRequest(nxt + k, tuple(int(x) for x in os_idx[k])) for k in range(count)]
                results = self.backend.measure(requests)
                for req, res in zip(requests, results):
                    self.store.add(self.run.id, req.idx, list(req.contexts), res.value if res.status == "ok" else None,
                                   res.status, res.reason, res.extra)
                    if res.status == "ok":
                        ok += 1
                        added += 1
                        streak = 0
                        if best is None or res.value > best:
                            best = res.value
                        bar.update(1)
                        bar.set_postfix_str(f"best {best:,.0f} pps ({label})", refresh=False)
                    else:
                        fails += 1
                        streak += 1
                        if streak >= MAX_CONSECUTIVE_FAILURES:
                            raise SampleError(f"{streak} measurements in a row failed (last, draw {req.idx}: "
                                              f"{res.reason}); stopping. Stored failures keep their reasons.")
                nxt += count
        finally:
            bar.close()
        return added, fails
