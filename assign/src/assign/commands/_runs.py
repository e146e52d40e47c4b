"""Opening what a command works on: a run to sample into (every option
checked before the database is touched), a stored run's values, or a value
file."""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..session import Session
    from ..store import Run, Store


def prepare_session(args: argparse.Namespace) -> tuple[Session, bool]:
    """Validate every option before the database is touched."""
    from ..backends.registry import BACKENDS, BackendError, default_backend, make_backend
    from ..session import Session
    from ..store import Store, StoreError
    from ..workloads import Workload
    from ._options import dpdk_options, restrict, topology_of

    args.backend = args.backend or default_backend(args.machine, args.topology)
    topo = restrict(topology_of(args), args)  # --contexts: the contexts tasks may use
    workload = Workload(args.workload, args.instances)
    if args.backend not in BACKENDS:
        raise BackendError(f"unknown backend {args.backend!r} (known: {', '.join(BACKENDS)})")
    workload.check_fits(topo, args.allow_colocate, args.backend)
    backend = make_backend(args.backend, topo, workload, seed=args.seed, noise=args.noise,
                           model_params=args.model_params, allow_colocate=args.allow_colocate,
                           dpdk=dpdk_options(args) if args.backend == "dpdk" else None)
    if args.run is not None and not os.path.exists(args.db):
        raise StoreError(f"results database {args.db} does not exist (it cannot hold --run {args.run})")
    store = Store(args.db)
    session, created = Session.open(store, topo, workload, backend, args.seed, args.allow_colocate, args.run)
    session.repeat_every = getattr(args, "repeat_every", session.repeat_every)
    return session, created


def run_values(store: Store, args: argparse.Namespace) -> tuple[Run, list[float]]:
    """The run --run names (or the only one) and its values; refuses a run
    that holds none yet."""
    run = store.run(args.run)
    values = store.values(run.id)
    if not values:
        raise ValueError(f"{args.db} run {run.id} holds no successful measurements yet")
    return run, values


def load_values(args: argparse.Namespace) -> tuple[list[float], str, str, int]:
    """(values, label, where, values left out) from --db/--run or --csv; left out:
    the values of cluster workers flagged as differing (store.excluded_count)."""
    if args.csv:
        from ..valuefile import read_values

        if args.run is not None:
            raise ValueError("--run goes with --db, not with --csv")
        return read_values(args.csv), args.kind, args.csv, 0
    from ..store import Store

    with Store(args.db, readonly=True) as store:
        run, values = run_values(store, args)
        excluded = store.excluded_count(run.id)
    return values, run.kind, f"{args.db} run {run.id}", excluded
