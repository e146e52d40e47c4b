"""One sample spread over dask.distributed workers (`assign sample --cluster`).

The client hands out draw indices in chunks (the backend's batch: 4096 for
the model, 1 for dpdk); a worker draws them itself (draw i depends only on
(seed, i)), measures them with its own backend, built once per worker
process from a picklable description, and returns the rows.  The client
writes them into the one SQLite store in draw order, a chunk per commit, as
soon as every earlier chunk is in: the store never has a gap, so a killed
client resumes like a local run (after the highest stored index).  A killed
worker loses only the chunks it held; dask gives them to another worker,
whose result is the same draw, so no draw is stored twice or skipped.

Addresses: `local:N` starts a LocalCluster of N worker processes here (for
trying it, and for tests); `tcp://host:8786` connects to a running
scheduler (assign/MACHINES.md says how to start one and its workers).

The machines must be identical, and that is checked: each worker measures
the run's reference placement (draw 0) at start and every K draws
(--reference-every), returned with its rows; the client stores those
reference measurements as they arrive and judges every worker against the
others (machine_check.py).  A worker that differs is named on stderr,
flagged in the store (its values, earlier ones included, are left out of
the estimate, kept in the database) and given no more draws; the run goes
on until it holds --n values of unflagged workers.

What each worker measures on (its ground: host, boot, CPU, kernel, the app's
build by content; ground.py) is computed once per worker process and sent
with its chunks; the client stores it with the worker, and says on stderr
when a worker's differs from the run's other workers' (a worker rebuilt with
another app, another kernel).  The sitting a cluster sample records is the
coordinator's ground with the cluster's address.
"""
from __future__ import annotations

import os
import sys
from collections import deque
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import Session


class ClusterError(ValueError):
    """A --cluster address that does not parse or cannot be reached."""


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to build the run's backend and draw its assignments."""

    backend: str
    topology: str          # Topology JSON (the client's machine: the workers' must be identical)
    workload: str
    instances: int
    seed: int
    allow_colocate: bool
    noise: float | None
    model_params: str | None
    dpdk: Any              # DpdkOptions or None
    workload_spec: dict | None = None  # a user's workload file (WorkloadSpec.identity), None: a packaged one


def worker_spec(session: Session, args) -> WorkerSpec:
    """The run's backend as the workers build it (from `assign sample`'s options)."""
    import json

    dpdk = None
    if session.backend.name == "dpdk":
        from .commands._options import dpdk_options

        dpdk = dpdk_options(args)
    return WorkerSpec(session.backend.name, json.dumps(session.topo.to_json()), session.workload.name,
                      session.workload.instances, session.run.seed, session.run.allow_colocate, args.noise,
                      args.model_params, dpdk,
                      None if session.workload.spec.builtin else session.workload.spec.identity())


# Test and demonstration hook: "NAME=FILE[,NAME=FILE...]" in a worker's environment makes the worker
# named NAME build the model backend from parameters FILE instead of the run's: a worker whose machine
# differs, through the real path (its references and values both come from that model).
WORKER_MODEL_PARAMS_ENV = "ASSIGN_WORKER_MODEL_PARAMS"
MAX_RESUBMITS = 3  # a chunk the cluster cancels is submitted again at most this many times
REFERENCE_NOISE_KEYS = 1 << 50  # model noise keys of reference measurements: far from any draw index


@dataclass
class _Worker:
    """A worker process's state for one run: its backend, and its reference schedule."""

    topo: Any
    backend: Any
    reference: Any                 # context indices (1, T) of the reference placement (draw 0)
    draws: int = 0                 # draws measured so far
    references: int = 0            # reference measurements so far
    ground: dict | None = None     # what this worker measures on (ground.ground of its backend)


_BUILT: dict[str, _Worker] = {}  # per worker process, by repr(spec): the backend stays up between chunks


def _model_params_here(spec: WorkerSpec, name: str) -> str | None:
    for item in filter(None, os.environ.get(WORKER_MODEL_PARAMS_ENV, "").split(",")):
        who, _, path = item.partition("=")
        if who == name and spec.backend == "model":
            return path
    return spec.model_params


def _worker_state(spec: WorkerSpec, name: str) -> _Worker:
    key = repr(spec)
    if key not in _BUILT:
        import json

        from .backends.registry import make_backend
        from .ground import ground
        from .sampling import draws
        from .topology import Topology
        from .workloads import stored_workload

        topo = Topology.from_json(json.loads(spec.topology))
        workload = stored_workload(spec.workload, spec.instances, {"workload": spec.workload_spec})
        be = make_backend(spec.backend, topo, workload, seed=spec.seed,
                          noise=spec.noise, model_params=_model_params_here(spec, name),
                          allow_colocate=spec.allow_colocate, dpdk=spec.dpdk)
        ref = draws(spec.seed, 0, 1, workload.n_tasks, topo.n_contexts, spec.allow_colocate)
        _BUILT[key] = _Worker(topo, be, ref, ground=ground(be))
    return _BUILT[key]


@dataclass
class ChunkResult:
    """What a worker returns for a chunk: who measured it, its reference
    measurements taken before the chunk, and the chunk's rows."""

    address: str
    name: str
    host: str
    rows: list[tuple]      # (idx, assignment JSON, value or None, status, reason, extra JSON)
    references: list[tuple] = field(default_factory=list)  # store.add_references rows
    ground: dict | None = None  # what the worker measures on (None: a worker of an assign without it)


def _references(w: _Worker, first: int, due: int) -> list[tuple]:
    """The reference measurements due before draw `first` (store.add_references rows)."""
    import json

    from .backends.base import MeasureRequest

    k = due - w.references
    if k <= 0:
        return []
    os_idx = [int(c) for c in w.topo.os_index[w.reference[0]]]
    assignment = json.dumps(os_idx)
    if hasattr(w.backend, "measure_array"):
        # the model: its noise is a function of a key (a draw's index); each reference gets its own key
        keys = [REFERENCE_NOISE_KEYS + 64 * first + j for j in range(k)]
        got = [(v, "ok", None) for v in w.backend.measure_array(keys, w.reference.repeat(k, axis=0)).values]
    else:
        got = []
        for _ in range(k):
            res = w.backend.measure([MeasureRequest(-1, tuple(os_idx))])[0]
            got.append((res.value if res.status == "ok" else None, res.status, res.reason))
    rows = [(w.references + j, first, w.draws, assignment, v, st, why) for j, (v, st, why) in enumerate(got)]
    w.references = due
    return rows


def measure_chunk(spec: WorkerSpec, first: int, count: int, reference_every: int = 0) -> ChunkResult:
    """On a worker: draws first .. first+count-1 measured, and before them the
    reference measurements due (REFERENCES_AT_START at the worker's start, then
    one every `reference_every` of its draws; 0: none)."""
    import json
    import socket

    from distributed import get_worker

    from .backends.base import MeasureRequest
    from .machine_check import REFERENCES_AT_START
    from .sampling import draws
    from .store import json_rows

    me = get_worker()
    name = str(me.name)
    w = _worker_state(spec, name)
    refs: list[tuple] = []
    if reference_every > 0:
        refs = _references(w, first, REFERENCES_AT_START + w.draws // reference_every)
    topo, be = w.topo, w.backend
    ctx = draws(spec.seed, first, count, be.workload.n_tasks, topo.n_contexts, spec.allow_colocate)
    idx = range(first, first + count)
    assignments = ["[" + r + "]" for r in json_rows(topo.os_index[ctx])]
    if hasattr(be, "measure_array"):
        batch = be.measure_array(idx, ctx)
        rows = [(i, a, v, "ok", None, e) for i, a, v, e in zip(idx, assignments, batch.values, batch.extras_json)]
    else:
        rows = []
        os_idx = topo.os_index[ctx].tolist()
        for i, a, contexts in zip(idx, assignments, os_idx):
            res = be.measure([MeasureRequest(i, tuple(contexts))])[0]
            rows.append((i, a, res.value if res.status == "ok" else None, res.status, res.reason,
                         json.dumps(res.extra, separators=(",", ":"))))
    w.draws += count
    return ChunkResult(me.address, name, socket.gethostname(), rows, refs, w.ground)


@dataclass
class RepeatResult:
    """What a worker returns for planned repetitions: who measured them, and per
    repetition (draw, value or None, status, reason, extra)."""

    address: str
    rows: list[tuple]


def measure_repeats(spec: WorkerSpec, items: list[tuple[int, int, list[int]]]) -> RepeatResult:
    """On a worker: (noise key, draw, PU os_index per task) measured again, in order."""
    from distributed import get_worker

    from .backends.base import MeasureRequest

    me = get_worker()
    w = _worker_state(spec, str(me.name))
    rows = []
    for key, draw, contexts in items:
        res = w.backend.measure([MeasureRequest(key, tuple(contexts))])[0]
        rows.append((draw, res.value if res.status == "ok" else None, res.status, res.reason, res.extra))
    return RepeatResult(me.address, rows)


def check_address(address: str) -> int | None:
    """Workers of local:N (N), None for a scheduler address; refuses anything else."""
    if address.startswith("local:"):
        try:
            n = int(address[len("local:"):])
        except ValueError:
            n = 0
        if n < 1:
            raise ClusterError(f"--cluster {address!r}: local:N wants a number of workers >= 1")
        return n
    if not address.startswith(("tcp://", "tls://")):
        raise ClusterError(f"--cluster {address!r}: expected local:N or a scheduler address tcp://host:port")
    return None


def connect(address: str):
    """A dask.distributed Client for --cluster ADDRESS."""
    n = check_address(address)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError("--cluster needs dask.distributed: pip install distributed (or 'assign[cluster]')") \
            from None
    if n is not None:
        import logging

        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.CRITICAL)
        client = Client(cluster)
        client.wait_for_workers(n)  # every worker takes draws from the first chunks on
        return client
    try:
        return Client(address, timeout=30)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"--cluster {address}: cannot reach the scheduler ({e})") from None


def _scheduler_workers(dask_scheduler) -> list[str]:
    return list(dask_scheduler.workers)


def worker_addresses(client) -> list[str]:
    """The addresses of the workers the scheduler knows now.  Not
    client.scheduler_info()["workers"]: the client's own periodic refresh asks
    for no workers and overwrites that shared cache, so under load a call could
    read an empty list (a run was stopped as if every worker were flagged)."""
    return client.run_on_scheduler(_scheduler_workers)


class _MachineCheck:
    """The client's side of the identical-machines check: stores what workers
    report (their names, their reference measurements), judges them
    (machine_check.differing_workers) and flags those that differ."""

    def __init__(self, session: Session, enabled: bool, client, sitting: int | None = None):
        self.store, self.run_id, self.client = session.store, session.run.id, client
        self.sitting = sitting  # this sample's sitting (a measured run), for each worker's ground in it
        self.enabled = enabled
        known = self.store.workers(self.run_id)  # a resumed run: its workers, references and flags
        self.seen = {a for a, _, _, _ in known}
        self.names = {a: n for a, n, _, _ in known}
        self.flagged = {a for a, _, _, f in known if f}
        self.refs = self.store.references(self.run_id)
        self.grounds = self.store.worker_grounds(self.run_id)  # as each worker reported when first seen
        self.ground_checked: set[str] = set()  # addresses whose ground this sample has compared

    def more_coming(self, judged: int) -> bool:
        """Has the cluster more unflagged workers than the `judged` ones with references?"""
        return len(set(worker_addresses(self.client)) - self.flagged) > judged

    def name(self, address: str) -> str:
        n = self.names.get(address, address)
        return address if n == address else f"{n} ({address})"

    def _check_ground(self, res: ChunkResult) -> None:
        """Say on stderr when a worker measures on other ground than the run's other workers
        (one note for each new ground), or than its address reported when the run first saw it
        (the store keeps both: the first with the worker, each sitting's in sitting_workers)."""
        from .ground import comparable, differences

        if res.ground is None:
            return
        mine = comparable(res.ground)
        if res.address in self.grounds:  # seen in an earlier sample of the run (tcp:// workers keep their address)
            before = self.grounds[res.address]
            if before is None:
                print(f"assign sample: note: worker {self.name(res.address)} was first seen by an assign that did "
                      "not record the workers' ground; the store keeps this sitting's", file=sys.stderr)
            elif comparable(before) != mine:
                print(f"assign sample: note: worker {self.name(res.address)} measures on other ground than when the "
                      "run first saw its address (" + "; ".join(differences(comparable(before), mine))
                      + "); the store keeps each sitting's: `assign estimate` lists them and tests whether the "
                      "sittings' values come from one distribution", file=sys.stderr)
            return
        others = {a: g for a, g in self.grounds.items() if g is not None}
        self.grounds[res.address] = res.ground
        if not others or any(comparable(g) == mine for g in others.values()):
            return
        first, g = next(iter(others.items()))
        print(f"assign sample: note: worker {self.name(res.address)} on {res.ground.get('host')} measures on other "
              f"ground than worker {self.name(first)} on {g.get('host')} ("
              + "; ".join(differences(comparable(g), mine)) + "): its values may come from another distribution; "
              "the store keeps each worker's ground, and `assign estimate` lists them by sitting", file=sys.stderr)

    def add(self, res: ChunkResult) -> list:
        """Record a chunk's worker and references; the verdicts of newly flagged workers."""
        from .machine_check import differing_workers

        if res.address not in self.seen:
            self.store.add_worker(self.run_id, res.address, res.name, res.host, res.ground)
            self.seen.add(res.address)
            self.names[res.address] = res.name
        if res.address not in self.ground_checked:
            self.ground_checked.add(res.address)
            self._check_ground(res)
            if res.ground is not None and self.sitting is not None:
                self.store.add_sitting_worker(self.run_id, self.sitting, res.address, res.ground)
        if not res.references:
            return []
        self.store.add_references(self.run_id, res.address, res.references)
        self.refs.setdefault(res.address, []).extend(r[4] for r in res.references if r[5] == "ok")
        if not self.enabled:
            return []
        verdicts = differing_workers(self.refs, self.flagged, self.more_coming)
        for v in verdicts:
            why = v.reason()
            self.store.flag_worker(self.run_id, v.worker, why)
            self.flagged.add(v.worker)
            print(f"assign sample: worker {self.name(v.worker)} differs from the others, stopped; its values "
                  f"are flagged and left out of the estimate: {why}", file=sys.stderr)
        return verdicts


def sample_until(session: Session, n_ok: int, address: str, spec: WorkerSpec, *,
                 show_progress: bool = True, reference_every: int = 0) -> tuple[int, int]:
    """Like Session.sample_until, with the measurements on the cluster's workers,
    until the run holds n_ok values of unflagged workers; reference_every > 0:
    the identical-machines check (module docstring).  Returns (values added,
    failures added), flagged workers' values not counted."""
    from distributed import as_completed
    from tqdm import tqdm

    from .repeats import due, noise_key
    from .session import MAX_CONSECUTIVE_FAILURES, SampleError

    store, run = session.store, session.run
    nxt, ok, failed, best = store.progress(run.id)
    plan = session.plan() if session.repeat_every > 0 else None
    if ok >= n_ok:
        if plan is not None:  # owed repetitions are measured here, as a run in one process does
            session.repeat_due(plan, min(ok, n_ok))
        return 0, 0
    # the coordinator's ground; each worker's comes with its chunks and is stored for this sitting
    sitting = session.record_sitting(nxt, cluster=address) if session.backend.kind == "measured" else None
    chunk = max(1, session.backend.batch_size)
    added = fails = streak = 0
    added_by: dict[str, int] = {}  # values added by each worker (taken back when it is flagged)
    label = session.backend.kind
    client = connect(address)
    check = _MachineCheck(session, reference_every > 0, client, sitting)
    bar = tqdm(total=n_ok, initial=ok, unit="asg", disable=not show_progress, file=sys.stderr,
               desc=f"sampling ({label}, {address})", dynamic_ncols=True, mininterval=0.25)
    try:
        workers = max(1, len(worker_addresses(client)))
        if workers == 1 and reference_every > 0:
            print("assign sample: the cluster has one worker: no other machine to compare it with, so no "
                  "reference measurements (the identical-machines check needs two workers, three to tell which "
                  "one is off)", file=sys.stderr)
            reference_every = 0
            check.enabled = False
        # The spec travels with each chunk (a few KB), not scattered once: a scattered value
        # lives on the workers, and a worker killed mid-run could take its scheduler record
        # with it, cancelling every chunk that needs it ("already forgotten").
        resubmits: dict[int, int] = {}  # chunk start -> times resubmitted after a cancellation
        chunk_of: dict[str, tuple[int, int]] = {}  # future key -> (start, count)

        repeating = [0]  # repetitions in flight (planned, not yet stored)
        repeat_jobs: dict[str, int] = {}  # future key -> repetitions it measures

        def submit_repeats() -> None:
            """The noise repetitions owed after the draws stored so far, to any worker that may measure."""
            if plan is None:
                return
            count = due(ok, session.repeat_every, plan.attempted + repeating[0])
            if count == 0:
                return
            targets = plan.next(count)
            where = store.assignments(run.id, targets)
            seq0 = store.next_repeat_seq(run.id) + repeating[0]
            items = [(noise_key(seq0 + j), i, where[i]) for j, i in enumerate(targets)]
            repeating[0] += count
            key = f"assign-{run.id}-repeats-{seq0}-{count}-{len(repeat_jobs)}"
            repeat_jobs[key] = count
            futures.add(client.submit(measure_repeats, spec, items, key=key, pure=False, workers=allowed()))

        def submit(start: int, count: int) -> None:
            key = f"assign-{run.id}-{start}-{count}-{resubmits.get(start, 0)}"
            chunk_of[key] = (start, count)
            futures.add(client.submit(measure_chunk, spec, start, count, reference_every, key=key,
                                      pure=False, workers=allowed()))
        submitted = nxt           # next draw index to hand out
        commit_at = nxt           # next draw index to store
        waiting: dict[int, ChunkResult] = {}
        in_flight: deque[int] = deque()
        futures = as_completed()

        def allowed() -> list[str] | None:
            """Workers that may take draws (None: any)."""
            if not check.flagged:
                return None
            good = [a for a in worker_addresses(client) if a not in check.flagged]
            if not good:
                raise SampleError(f"every worker of the cluster is flagged as differing "
                                  f"({', '.join(sorted(check.name(a) for a in check.flagged))}); "
                                  f"{ok} values of unflagged workers stored, all kept")
            return good

        def hand_out() -> None:
            nonlocal submitted
            # enough draws out to reach n_ok if they all succeed, at most 2 chunks a worker ahead
            while len(in_flight) < 2 * workers and ok + (submitted - commit_at) < n_ok:
                count = min(chunk, n_ok - ok - (submitted - commit_at))
                submit(submitted, count)
                in_flight.append(submitted)
                submitted += count

        hand_out()
        for fut in futures:
            try:
                res = fut.result()
                if isinstance(res, RepeatResult):
                    repeating[0] -= len(res.rows)
                    if res.address not in check.flagged:
                        store.add_repeats(run.id, [(i, "noise", None, None, ok, v, st, why, extra)
                                                   for i, v, st, why, extra in res.rows], worker=res.address)
                        for i, v, *_ in res.rows:
                            plan.add_repeat(i, v)
                    submit_repeats()  # a flagged worker's are owed again
                    if ok >= n_ok and repeating[0] == 0:
                        break
                    continue
            except CancelledError:
                if fut.key in repeat_jobs:  # planned repetitions: nothing stored; owed again
                    repeating[0] -= repeat_jobs.pop(fut.key)
                    submit_repeats()
                    continue
                # dask gave up on the chunk (its worker died, its record was dropped): nothing of
                # it was stored, so the same draws go out again, a bounded number of times
                start, count = chunk_of.pop(fut.key)
                resubmits[start] = resubmits.get(start, 0) + 1
                if resubmits[start] > MAX_RESUBMITS:
                    raise SampleError(f"the cluster cancelled the chunk of draws {start}..{start + count - 1} "
                                      f"{resubmits[start]} times; {ok} values stored, all kept") from None
                print(f"assign sample: the cluster cancelled the chunk of draws {start}..{start + count - 1} "
                      f"(a worker lost?); submitted again", file=sys.stderr)
                submit(start, count)
                continue
            chunk_of.pop(fut.key, None)
            verdicts = check.add(res)
            if verdicts:
                for v in verdicts:
                    added -= added_by.pop(v.worker, 0)
                _, ok, _, best = store.progress(run.id)  # the flagged workers' stored values no longer count
                bar.update(ok - bar.n)
                if any(v.ambiguous for v in verdicts):
                    a, b = (check.name(v.worker) for v in verdicts[:2])
                    raise SampleError(f"workers {a} and {b} measure the reference differently and no third "
                                      f"worker says which machine is off: both flagged, sampling stopped; run "
                                      f"with three or more workers ({ok} values of unflagged workers kept)")
            waiting[res.rows[0][0]] = res
            while commit_at in waiting:
                res = waiting.pop(commit_at)
                rows = res.rows
                in_flight.popleft()
                store.add_rows(run.id, rows, worker=res.address)
                commit_at = rows[-1][0] + 1
                counted = res.address not in check.flagged
                for r in rows:
                    if r[3] == "ok":
                        if not counted:
                            continue
                        ok += 1
                        added += 1
                        added_by[res.address] = added_by.get(res.address, 0) + 1
                        streak = 0
                        best = r[2] if best is None or r[2] > best else best
                    else:
                        fails += 1
                        streak += 1
                        if streak >= MAX_CONSECUTIVE_FAILURES:
                            raise SampleError(f"{streak} measurements in a row failed (last, draw {r[0]}: "
                                              f"{r[4]}); stopping. Stored failures keep their reasons.")
                bar.update(ok - bar.n)
                if best is not None:
                    bar.set_postfix_str(f"best {best:,.0f} pps ({label})", refresh=False)
                if plan is not None:
                    good = [(r[0], r[2]) for r in rows if r[3] == "ok" and counted]
                    plan.add_draws([i for i, _ in good], [v for _, v in good])
            submit_repeats()
            if ok >= n_ok and repeating[0] == 0:
                break
            hand_out()
    finally:
        bar.close()
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()
    return added, fails
