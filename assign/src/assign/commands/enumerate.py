"""`assign enumerate`: every distinct assignment of a small workload, evaluated;
with --reps K, measured K times in interleaved rounds: the ground truth of
the optimum of placement means."""
from __future__ import annotations

import argparse
import json
import math
import sys

from ._args import nonneg_int, output_file, positive_int
from ._options import add_backend, add_dpdk_options, add_machine, add_workload, dpdk_options, topology_of
from ._save import save

ENUMERATE_LIMIT = 200_000
TRUTH_KEY_BASE = 1 << 43  # model noise keys of enumerated measurements: no draw or repetition has them


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("enumerate", help="evaluate every distinct assignment of a small workload (true optimum); "
                                         "--reps K: measure each K times (ground truth of the optimum of means)",
                       description="Every distinct assignment (one representative with its multiplicity, the "
                                   "number of raw placements it stands for), evaluated by the backend. Model noise "
                                   "is off unless --noise is given, so the optimum is the model's true optimum. "
                                   "With --reps K every distinct placement is measured K times in interleaved "
                                   "rounds (each round measures every placement once, in a shuffled order, so that "
                                   "the machine's drift falls on all of them alike), and the optimum of placement "
                                   "means is printed with a simultaneous interval; with --db every measurement is "
                                   "stored as it comes and a run stopped midway resumes (a larger --reps adds "
                                   "rounds).")
    add_machine(p)
    add_workload(p, instances_default=2)
    add_backend(p, "model: relative measurement noise (default here: 0)")
    add_dpdk_options(p, contexts=False)
    p.add_argument("--limit", type=positive_int, default=ENUMERATE_LIMIT,
                   help=f"refuse populations larger than this (default: {ENUMERATE_LIMIT})")
    p.add_argument("--reps", type=positive_int, default=1, metavar="K",
                   help="measure every distinct placement K times, in interleaved rounds (default: 1)")
    p.add_argument("--db", metavar="FILE", help="store every measurement as it comes (resumable); with --reps")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the optimum's simultaneous interval (default: 0.95)")
    p.add_argument("--top", type=nonneg_int, default=5, help="print the best K assignments (default: 5)")
    p.add_argument("--out", type=output_file, metavar="CSV", help="write every representative: multiplicity, value, contexts")
    p.add_argument("--json", action="store_true", help="print one JSON object (the optimum, its interval, the top)")
    return p


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..backends.base import MeasureRequest
    from ..backends.registry import default_backend, make_backend
    from ..counting import count_assignments, raw_placements
    from ..enumeration import representatives, representatives_colocated
    from ..workloads import Workload, WorkloadError

    if not 0.5 <= args.confidence < 1.0:
        raise ValueError(f"--confidence {args.confidence}: expected a level in [0.5, 1)")
    topo = topology_of(args)
    workload = Workload(args.workload, args.instances)
    args.backend = args.backend or default_backend(args.machine, args.topology)
    workload.check_fits(topo, args.allow_colocate, args.backend)
    total = count_assignments(topo, workload.n_tasks, args.allow_colocate)
    if total > args.limit:
        raise WorkloadError(f"{workload.name} x{workload.instances} on {topo.name} has {total:.3g} distinct "
                            f"assignments, more than --limit {args.limit}: use fewer --instances or sample instead")
    if args.db and args.reps < 2:
        raise ValueError("--db stores the rounds of --reps K (K >= 2); a single evaluation is printed, not stored")
    backend = make_backend(args.backend, topo, workload, seed=args.seed,
                           noise=0.0 if args.noise is None else args.noise, model_params=args.model_params,
                           allow_colocate=args.allow_colocate or None,
                           dpdk=dpdk_options(args) if args.backend == "dpdk" else None)
    try:
        if args.allow_colocate:
            reps, mults = representatives_colocated(topo, workload.n_tasks)
        else:
            reps, mults = representatives(topo, workload.n_tasks)
        os_idx = topo.os_index[np.array(reps, dtype=np.int64)]
        contexts = [[int(x) for x in row] for row in os_idx]
        label = backend.kind
        head = (f"{len(reps)} distinct assignments of {workload.n_tasks} tasks ({workload.name} x{workload.instances}) "
                f"on {topo.name}{' with co-location' if args.allow_colocate else ''}; multiplicities add up to "
                f"{sum(mults)} raw placements (expected {raw_placements(topo, workload.n_tasks, args.allow_colocate)}; "
                f"count {total})")
        if args.reps == 1:
            return _once(args, backend, workload, contexts, mults, head, label)
        return _rounds(args, backend, topo, workload, contexts, mults, head, label)
    finally:
        if hasattr(backend, "close"):
            backend.close()


def _once(args, backend, workload, contexts, mults, head, label) -> int:
    import numpy as np

    from ..backends.base import MeasureRequest

    requests = [MeasureRequest(i, tuple(c)) for i, c in enumerate(contexts)]
    results = []
    for i in range(0, len(requests), max(1, backend.batch_size)):
        results.extend(backend.measure(requests[i:i + backend.batch_size]))
    ok = [i for i, r in enumerate(results) if r.status == "ok"]
    print(head)
    if len(ok) < len(results):
        print(f"{len(results) - len(ok)} evaluations failed")
    if ok:
        vals = np.array([results[i].value for i in ok])
        w = np.array([mults[i] for i in ok], dtype=float)
        order = sorted(ok, key=lambda i: -results[i].value)
        best = results[order[0]].value
        print(f"optimum ({label}): {best:,.1f} {workload.spec.unit}")
        print(f"worst ({label}): {vals.min():,.1f}; mean of a random assignment ({label}): "
              f"{float(np.average(vals, weights=w)):,.1f}")
        share = float(w[vals >= best].sum() / w.sum())
        print(f"share of raw placements at the optimum: {share:.3g}")
        names = workload.task_names()
        for rank, i in enumerate(order[:args.top], start=1):
            where = " ".join(f"{n}@{c}" for n, c in zip(names, contexts[i]))
            print(f"  #{rank} {results[i].value:,.1f} ({label}) x{mults[i]}: {where}")
    if args.out:
        def write(f) -> None:
            f.write("multiplicity,value,status," + ",".join(workload.task_names()) + "\n")
            for i, r in enumerate(results):
                v = "" if r.value is None else repr(r.value)
                f.write(f"{mults[i]},{v},{r.status}," + ",".join(str(c) for c in contexts[i]) + "\n")
        if not save(args.out, write, "representatives"):
            return 1
        print(f"all {len(contexts)} written to {args.out}")
    return 0


def _rounds(args, backend, topo, workload, contexts, mults, head, label) -> int:
    """K interleaved rounds over every distinct placement; the optimum of means."""
    import numpy as np
    from statistics import NormalDist

    from ..backends.base import MeasureRequest
    from ..evt.noise import estimate_noise
    from ..store import Store

    m, k = len(contexts), args.reps
    stored: dict[tuple[int, int], float | None] = {}
    store = truth = None
    if args.db:
        store = Store(args.db)
        store.set_durability(backend.kind)
        params = dict(backend.describe(), enumerate=True)
        truth, created = store.find_or_create_truth(
            workload=workload.name, instances=workload.instances, machine=topo.name, topology=topo.to_json(),
            backend=backend.name, kind=backend.kind, seed=args.seed, allow_colocate=args.allow_colocate,
            params=params)
        stored = store.truth_values(truth)
        if stored:
            print(f"continuing ground truth {truth} in {args.db} ({len(stored)} measurements stored)",
                  file=sys.stderr)
    values = np.full((k, m), np.nan)
    failed = 0
    try:
        for r in range(k):
            order = np.random.default_rng([args.seed, r]).permutation(m)
            for p in order.tolist():
                if (p, r) in stored:
                    v = stored[(p, r)]
                else:
                    key = TRUTH_KEY_BASE + r * m + p
                    res = backend.measure([MeasureRequest(key, tuple(contexts[p]))])[0]
                    v = res.value if res.status == "ok" else None
                    if store is not None:
                        store.add_truth_values(truth, [(p, r, mults[p], contexts[p], v, res.status, res.reason)])
                if v is None:
                    failed += 1
                else:
                    values[r, p] = v
            if not args.json:
                print(f"  round {r + 1} of {k} measured", file=sys.stderr)
    finally:
        if store is not None:
            store.close()
    counts = (~np.isnan(values)).sum(axis=0)
    seen = counts > 0
    with np.errstate(invalid="ignore"):
        means = np.nanmean(np.where(seen[None, :], values, 0.0), axis=0)
    noise = estimate_noise([values[~np.isnan(values[:, p]), p].tolist() for p in range(m)],
                           getattr(backend, "noise", None) if backend.kind == "modelled" else None)
    conf = args.confidence
    z = NormalDist().inv_cdf(1.0 - (1.0 - conf) / (2.0 * max(1, int(seen.sum()))))
    se = noise.cv * means / np.sqrt(np.maximum(counts, 1))
    best = int(np.nanargmax(np.where(seen, means, -np.inf)))
    lo = max(0.0, float(np.nanmax(np.where(seen, means - z * se, -np.inf))))  # a rate is never negative
    hi = float(np.nanmax(np.where(seen, means + z * se, -np.inf)))
    order = [int(i) for i in np.argsort(-np.where(seen, means, -np.inf))]
    names = workload.task_names()
    top = [{"placement": i, "mean": float(means[i]), "sd_of_mean": float(se[i]), "measurements": int(counts[i]),
            "multiplicity": mults[i], "contexts": contexts[i]} for i in order[:max(args.top, 1)]]
    out = {"placements": m, "reps": k, "kind": label, "failed": failed, "noise": noise.to_dict(),
           "optimum_mean": {"estimate": float(means[best]), "ci_low": lo, "ci_high": hi, "confidence": conf,
                            "method": "largest mean over every distinct placement, simultaneous (Bonferroni) "
                                      "interval with the pooled noise", "kind": label},
           "top": top}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(head)
        print(f"every distinct placement measured {k} times in interleaved rounds ({label}; {failed} failed)")
        print(f"optimum of placement means ({label}): {means[best]:,.0f} {workload.spec.unit}, {100 * conf:g}% simultaneous "
              f"interval [{lo:,.0f}, {hi:,.0f}]")
        print(f"measurement noise: {noise.describe()}")
        for rank, t in enumerate(top[:args.top], start=1):
            where = " ".join(f"{n}@{c}" for n, c in zip(names, t["contexts"]))
            print(f"  #{rank} {t['mean']:,.0f} +- {t['sd_of_mean']:,.0f} ({label}, {t['measurements']} rounds) "
                  f"x{t['multiplicity']}: {where}")
    if args.out:
        def write(f) -> None:
            f.write("multiplicity,mean,measurements," + ",".join(names) + "\n")
            for p in range(m):
                mv = "" if not seen[p] else repr(float(means[p]))
                f.write(f"{mults[p]},{mv},{int(counts[p])}," + ",".join(str(c) for c in contexts[p]) + "\n")
        if not save(args.out, write, "representatives"):
            return 1
    return 0 if not math.isnan(float(means[best])) else 1
