"""`assign enumerate`: every distinct assignment of a small workload, evaluated (the true optimum)."""
from __future__ import annotations

import argparse

from ._args import nonneg_int, output_file, positive_int
from ._options import add_backend, add_dpdk_options, add_machine, add_workload, dpdk_options, topology_of
from ._save import save

ENUMERATE_LIMIT = 200_000


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("enumerate", help="evaluate every distinct assignment of a small workload (true optimum)",
                       description="Every distinct assignment (one representative with its multiplicity, the "
                                   "number of raw placements it stands for), evaluated by the backend. Model noise "
                                   "is off unless --noise is given, so the optimum is the model's true optimum.")
    add_machine(p)
    add_workload(p, instances_default=2)
    add_backend(p, "model: relative measurement noise (default here: 0)")
    add_dpdk_options(p, contexts=False)
    p.add_argument("--limit", type=positive_int, default=ENUMERATE_LIMIT,
                   help=f"refuse populations larger than this (default: {ENUMERATE_LIMIT})")
    p.add_argument("--top", type=nonneg_int, default=5, help="print the best K assignments (default: 5)")
    p.add_argument("--out", type=output_file, metavar="CSV", help="write every representative: multiplicity, value, contexts")
    return p


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..backends.base import MeasureRequest
    from ..backends.registry import default_backend, make_backend
    from ..counting import count_assignments, raw_placements
    from ..enumeration import representatives
    from ..workloads import Workload, WorkloadError

    topo = topology_of(args)
    workload = Workload(args.workload, args.instances)
    args.backend = args.backend or default_backend(args.machine, args.topology)
    if args.allow_colocate:
        raise WorkloadError("enumerate counts assignments with one task per context; drop --allow-colocate")
    workload.check_fits(topo, False, args.backend)
    total = count_assignments(topo, workload.n_tasks)
    if total > args.limit:
        raise WorkloadError(f"{workload.name} x{workload.instances} on {topo.name} has {total:.3g} distinct "
                            f"assignments, more than --limit {args.limit}: use fewer --instances or sample instead")
    backend = make_backend(args.backend, topo, workload, seed=args.seed,
                           noise=0.0 if args.noise is None else args.noise, model_params=args.model_params,
                           dpdk=dpdk_options(args) if args.backend == "dpdk" else None)

    reps, mults = representatives(topo, workload.n_tasks)
    os_idx = topo.os_index[np.array(reps, dtype=np.int64)]
    requests = [MeasureRequest(i, tuple(int(x) for x in os_idx[i])) for i in range(len(reps))]
    results = []
    for i in range(0, len(requests), max(1, backend.batch_size)):
        results.extend(backend.measure(requests[i:i + backend.batch_size]))
    ok = [i for i, r in enumerate(results) if r.status == "ok"]
    label = backend.kind
    print(f"{len(reps)} distinct assignments of {workload.n_tasks} tasks ({workload.name} x{workload.instances}) "
          f"on {topo.name}; multiplicities add up to {sum(mults)} raw placements "
          f"(expected {raw_placements(topo, workload.n_tasks)}; count {total})")
    if len(ok) < len(results):
        print(f"{len(results) - len(ok)} evaluations failed")
    if ok:
        vals = np.array([results[i].value for i in ok])
        w = np.array([mults[i] for i in ok], dtype=float)
        order = sorted(ok, key=lambda i: -results[i].value)
        best = results[order[0]].value
        print(f"optimum ({label}): {best:,.1f} packets/s")
        print(f"worst ({label}): {vals.min():,.1f}; mean of a random assignment ({label}): "
              f"{float(np.average(vals, weights=w)):,.1f}")
        share = float(w[vals >= best].sum() / w.sum())
        print(f"share of raw placements at the optimum: {share:.3g}")
        names = workload.task_names()
        for rank, i in enumerate(order[:args.top], start=1):
            where = " ".join(f"{n}@{c}" for n, c in zip(names, requests[i].contexts))
            print(f"  #{rank} {results[i].value:,.1f} ({label}) x{mults[i]}: {where}")
    if args.out:
        def write(f) -> None:
            f.write("multiplicity,value,status," + ",".join(workload.task_names()) + "\n")
            for i, r in enumerate(results):
                v = "" if r.value is None else repr(r.value)
                f.write(f"{mults[i]},{v},{r.status}," + ",".join(str(c) for c in requests[i].contexts) + "\n")
        if not save(args.out, write, "representatives"):
            return 1
        print(f"all {len(reps)} written to {args.out}")
    return 0
