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
scheduler (assign/README.md says how to start one and its workers).

Not done yet: the check that the workers' machines are identical (a
reference placement measured by each worker and compared); the sample is
correct only if they are, and nothing here verifies it.
"""
from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass
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


def worker_spec(session: Session, args) -> WorkerSpec:
    """The run's backend as the workers build it (from `assign sample`'s options)."""
    import json

    dpdk = None
    if session.backend.name == "dpdk":
        from .commands._options import dpdk_options

        dpdk = dpdk_options(args)
    return WorkerSpec(session.backend.name, json.dumps(session.topo.to_json()), session.workload.name,
                      session.workload.instances, session.run.seed, session.run.allow_colocate, args.noise,
                      args.model_params, dpdk)


_BUILT: dict[str, tuple[Any, Any]] = {}  # per worker process, by repr(spec): the backend stays up between chunks


def _backend(spec: WorkerSpec):
    key = repr(spec)
    if key not in _BUILT:
        import json

        from .backends.registry import make_backend
        from .topology import Topology
        from .workloads import Workload

        topo = Topology.from_json(json.loads(spec.topology))
        be = make_backend(spec.backend, topo, Workload(spec.workload, spec.instances), seed=spec.seed,
                          noise=spec.noise, model_params=spec.model_params, allow_colocate=spec.allow_colocate,
                          dpdk=spec.dpdk)
        _BUILT[key] = (topo, be)
    return _BUILT[key]


def measure_chunk(spec: WorkerSpec, first: int, count: int) -> list[tuple]:
    """On a worker: draws first .. first+count-1 measured, as rows
    (idx, assignment JSON, value or None, status, reason, extra JSON)."""
    import json

    from .backends.base import MeasureRequest
    from .sampling import draws
    from .store import json_rows

    topo, be = _backend(spec)
    ctx = draws(spec.seed, first, count, 3 * spec.instances, topo.n_contexts, spec.allow_colocate)
    idx = range(first, first + count)
    assignments = ["[" + r + "]" for r in json_rows(topo.os_index[ctx])]
    if hasattr(be, "measure_array"):
        batch = be.measure_array(idx, ctx)
        return [(i, a, v, "ok", None, e) for i, a, v, e in zip(idx, assignments, batch.values, batch.extras_json)]
    rows = []
    os_idx = topo.os_index[ctx].tolist()
    for i, a, contexts in zip(idx, assignments, os_idx):
        res = be.measure([MeasureRequest(i, tuple(contexts))])[0]
        rows.append((i, a, res.value if res.status == "ok" else None, res.status, res.reason,
                     json.dumps(res.extra, separators=(",", ":"))))
    return rows


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
                               silence_logs=logging.ERROR)
        return Client(cluster)
    try:
        return Client(address, timeout=30)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"--cluster {address}: cannot reach the scheduler ({e})") from None


def sample_until(session: Session, n_ok: int, address: str, spec: WorkerSpec, *,
                 show_progress: bool = True) -> tuple[int, int]:
    """Like Session.sample_until, with the measurements on the cluster's workers.
    Returns (values added, failures added)."""
    from distributed import as_completed
    from tqdm import tqdm

    from .session import MAX_CONSECUTIVE_FAILURES, SampleError

    store, run = session.store, session.run
    nxt, ok, failed, best = store.progress(run.id)
    if ok >= n_ok:
        return 0, 0
    chunk = max(1, session.backend.batch_size)
    added = fails = streak = 0
    label = session.backend.kind
    client = connect(address)
    bar = tqdm(total=n_ok, initial=ok, unit="asg", disable=not show_progress, file=sys.stderr,
               desc=f"sampling ({label}, {address})", dynamic_ncols=True, mininterval=0.25)
    try:
        workers = max(1, len(client.scheduler_info()["workers"]))
        spec_f = client.scatter(spec, broadcast=True)
        submitted = nxt           # next draw index to hand out
        commit_at = nxt           # next draw index to store
        waiting: dict[int, list[tuple]] = {}
        in_flight: deque[int] = deque()
        futures = as_completed()

        def hand_out() -> None:
            nonlocal submitted
            # enough draws out to reach n_ok if they all succeed, at most 2 chunks a worker ahead
            while len(in_flight) < 2 * workers and ok + (submitted - commit_at) < n_ok:
                count = min(chunk, n_ok - ok - (submitted - commit_at))
                futures.add(client.submit(measure_chunk, spec_f, submitted, count, key=f"assign-{run.id}-"
                                          f"{submitted}-{count}", pure=False))
                in_flight.append(submitted)
                submitted += count

        hand_out()
        for fut in futures:
            rows = fut.result()
            waiting[rows[0][0]] = rows
            while commit_at in waiting:
                rows = waiting.pop(commit_at)
                in_flight.popleft()
                store.add_rows(run.id, rows)
                commit_at = rows[-1][0] + 1
                for r in rows:
                    if r[3] == "ok":
                        ok += 1
                        added += 1
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
            if ok >= n_ok:
                break
            hand_out()
    finally:
        bar.close()
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()
    return added, fails
