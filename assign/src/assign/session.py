"""Sampling a run: draw, measure, store each result as it comes.

A run is identified by what determines its draws and values (workload,
instances, topology, backend and its configuration, seed, co-location).
Running again with the same identity continues it: draws resume at the next
index, so nothing is measured twice and nothing stored is lost.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from .backends.base import Backend, MeasureRequest
from .ground import differences, ground
from .repeats import DEFAULT_REPEAT_EVERY, Plan, due, noise_key
from .sampling import draws
from .store import Run, Store, json_rows
from .topology import Topology
from .workloads import Workload

MAX_CONSECUTIVE_FAILURES = 20


def _shown(v) -> str:
    return "absent" if v is None else repr(v)


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
    # one planned repetition of a leading draw per this many successful draws (repeats.py); 0: none
    repeat_every: int = DEFAULT_REPEAT_EVERY

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
            # how each value is made (window, traffic, rule set, ...): values made otherwise would
            # join the run's as if they were the same measurement
            given = json.loads(json.dumps(backend.describe(), sort_keys=True))
            differ = sorted(k for k in set(run.params) | set(given) if run.params.get(k) != given.get(k))
            if differ:
                raise SampleError(f"--run {run_id} ({run.label()}) was made with other settings than the "
                                  f"options give: " + "; ".join(f"{k}: stored {_shown(run.params.get(k))}, "
                                                                f"given {_shown(given.get(k))}" for k in differ)
                                  + " (give the run's settings, or drop --run to start or continue the run "
                                    "that has these)")
            created = False
        else:
            run, created = store.find_or_create_run(
                workload=workload.name, instances=workload.instances, machine=topo.name,
                topology=topo.to_json(), backend=backend.name, kind=backend.kind, seed=seed,
                allow_colocate=allow_colocate, params=backend.describe())
        store.set_durability(backend.kind)
        return Session(store, run, topo, workload, backend), created

    def plan(self) -> Plan:
        """The run's draws and noise repetitions as stored, for planning the next ones."""
        rows = self.store.indexed_values(self.run.id)
        reps = self.store.repeats(self.run.id, "noise")
        return Plan([i for i, _ in rows], [v for _, v in rows], [(r.idx, r.value) for r in reps])

    def repeat_due(self, plan: Plan, ok: int) -> int:
        """Measure the noise repetitions owed after `ok` draws, each stored as it comes;
        how many were measured."""
        count = due(ok, self.repeat_every, plan.attempted)
        if count == 0:
            return 0
        targets = plan.next(count)
        where = self.store.assignments(self.run.id, targets)
        seq0 = self.store.next_repeat_seq(self.run.id)
        # one at a time for a real backend (each stored as it comes), in one call for the model
        step = count if hasattr(self.backend, "measure_array") else 1
        for s in range(0, count, step):
            part = targets[s:s + step]
            reqs = [MeasureRequest(noise_key(seq0 + s + j), tuple(where[i])) for j, i in enumerate(part)]
            results = self.backend.measure(reqs)
            self.store.add_repeats(self.run.id, [
                (i, "noise", None, None, ok, res.value if res.status == "ok" else None, res.status, res.reason,
                 res.extra) for i, res in zip(part, results)])
            for i, res in zip(part, results):
                plan.add_repeat(i, res.value if res.status == "ok" else None)
        return count

    def sample_until(self, n_ok: int, *, show_progress: bool = True) -> tuple[int, int]:
        """Measure new draws until the run holds n_ok successful values, with the
        noise repetitions planned between them (repeats.py); the ones owed by
        a run stored before, or killed between a draw and its repetition, are
        made up first.  Returns (values added, failures added)."""
        nxt, ok, failed, best = self.store.progress(self.run.id)
        plan = self.plan() if self.repeat_every > 0 else None
        if plan is not None:
            self.repeat_due(plan, min(ok, n_ok))
        if ok >= n_ok:
            return 0, 0
        added = fails = streak = 0
        label = "modelled" if self.backend.kind == "modelled" else "measured"
        if self.backend.kind == "measured":
            self.record_sitting(nxt)
        bar = tqdm(total=n_ok, initial=ok, unit="asg", disable=not show_progress, file=sys.stderr,
                   desc=f"sampling ({label})", dynamic_ncols=True, mininterval=0.25)
        try:
            while ok < n_ok:
                count = max(1, min(self.backend.batch_size, n_ok - ok))
                ctx = draws(self.run.seed, nxt, count, self.workload.n_tasks, self.topo.n_contexts,
                            self.run.allow_colocate)
                if hasattr(self.backend, "measure_array"):  # the model: whole arrays, never a failure
                    best = self._sample_array(nxt, ctx, best, plan)
                    ok += count
                    added += count
                    nxt += count
                    bar.update(count)
                    bar.set_postfix_str(f"best {best:,.0f} pps ({label})", refresh=False)
                    if plan is not None:
                        self.repeat_due(plan, ok)
                    continue
                os_idx = self.topo.os_index[ctx].tolist()
                requests = [MeasureRequest(nxt + k, tuple(row)) for k, row in enumerate(os_idx)]
                results = self.backend.measure(requests)
                rows = []
                stop = None
                for req, row, res in zip(requests, os_idx, results):
                    if res.status == "ok":
                        rows.append((req.idx, row, res.value, "ok", res.reason, res.extra))
                        ok += 1
                        added += 1
                        streak = 0
                        if best is None or res.value > best:
                            best = res.value
                    else:
                        rows.append((req.idx, row, None, res.status, res.reason, res.extra))
                        fails += 1
                        streak += 1
                        if streak >= MAX_CONSECUTIVE_FAILURES and stop is None:
                            stop = SampleError(f"{streak} measurements in a row failed (last, draw {req.idx}: "
                                               f"{res.reason}); stopping. Stored failures keep their reasons.")
                self.store.add_many(self.run.id, rows)  # the batch in one commit: a kill loses at most it
                if stop is not None:
                    raise stop
                if plan is not None:
                    good = [(r[0], r[2]) for r in rows if r[3] == "ok"]
                    plan.add_draws([i for i, _ in good], [v for _, v in good])
                    self.repeat_due(plan, ok)
                bar.update(ok - bar.n)
                if best is not None:
                    bar.set_postfix_str(f"best {best:,.0f} pps ({label})", refresh=False)
                nxt += count
        finally:
            bar.close()
        return added, fails

    def record_sitting(self, first_idx: int, cluster: str | None = None) -> int:
        """Record this sitting's ground, and return its number; say when the run's earlier
        values were measured on other ground, or on ground not recorded (`assign estimate`
        tests whether they differ).  `cluster`: the --cluster address of a sample on workers
        (the ground is then this coordinator's; each worker's is stored for the sitting)."""
        now = ground(self.backend)
        if cluster is not None:
            now["cluster"] = cluster
        before = self.store.sittings(self.run.id)
        seq = self.store.add_sitting(self.run.id, first_idx, now)
        if first_idx == 0:
            return seq
        if not before:
            print(f"note: draws 0-{first_idx - 1} of run {self.run.id} were measured before assign recorded what a "
                  f"sitting measures on; `assign estimate` tests whether their values and this sitting's come "
                  f"from one distribution", file=sys.stderr)
        else:
            diff = differences(before[-1][3], now)
            if diff:
                print(f"note: run {self.run.id} continues on other ground than its last sitting ("
                      + "; ".join(diff) + "): `assign estimate` tests whether the sittings' values come from "
                      "one distribution", file=sys.stderr)
        return seq

    def _sample_array(self, first: int, ctx: np.ndarray, best: float | None, plan: Plan | None = None) -> float:
        """Evaluate and store draws first.. of a batch (context indices `ctx`) in one
        commit; the best value so far."""
        idx = range(first, first + len(ctx))
        batch = self.backend.measure_array(idx, ctx)
        if plan is not None:
            plan.add_draws(idx, batch.values)
        # the assignments as the JSON lists store.add writes ("[a, b, ...]"), one encoding for the batch
        assignments = ["[" + r + "]" for r in json_rows(self.topo.os_index[ctx])]
        self.store.add_values(self.run.id, idx, assignments, batch.values, batch.extras_json)
        top = max(batch.values)
        return top if best is None or top > best else best
