"""`assign search --guide model`: part of the budget on the model's
best-ranked candidates, the rest on iid draws; the EVT estimate comes from
the iid draws alone (the guided ones are not a random sample)."""
from __future__ import annotations

import argparse
import json

from ._args import at_least, output_file, positive_int, positive_number
from ._options import add_backend, add_dpdk_options, add_machine, add_workload
from ._save import save


def share(text: str) -> float:
    v = positive_number(text)
    if not v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a fraction in (0, 1)")
    return v


def best_distinct(pool, order, k: int) -> list:
    """The first k distinct assignments of pool in the given order."""
    out, seen = [], set()
    for i in order:
        key = tuple(pool[i].tolist())
        if key not in seen:
            seen.add(key)
            out.append(pool[i])
            if len(out) == k:
                break
    return out


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("search", help="guided search: the model's best candidates plus iid draws (EVT on the iid)",
                       description="Spend --guide-share of --budget measurements on the assignments the model "
                                   "(--model-params, noise-free) ranks best among --pool random candidates, and "
                                   "the rest on iid random draws, all measured with the backend. The best found "
                                   "is the best of both; the EVT estimate of the optimum comes from the iid draws "
                                   "alone (a guided sample is not random, so the bound would not hold for it).")
    p.add_argument("--guide", choices=("model",), required=True, help="what ranks the guided candidates")
    p.add_argument("--budget", type=at_least(2), required=True, metavar="K", help="measurements in all")
    p.add_argument("--guide-share", type=share, default=0.2, metavar="F",
                   help="fraction of the budget spent on guided candidates (default: 0.2)")
    p.add_argument("--pool", type=positive_int, default=100_000, metavar="M",
                   help="random candidates the model ranks (default: 100,000)")
    p.add_argument("--json", type=output_file, metavar="FILE", help="write the result as JSON")
    add_machine(p)
    add_workload(p)
    add_backend(p, "model: relative measurement noise, sd (default: the workload's, see MODEL.md)")
    add_dpdk_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..backends.base import MeasureRequest
    from ..backends.model import ModelBackend, load_params
    from ..backends.registry import default_backend, make_backend
    from ..evt import EstimateError, estimate
    from ..sampling import draws
    from ..workloads import Workload
    from ._options import dpdk_options, restrict, topology_of

    args.backend = args.backend or default_backend(args.machine, args.topology)
    topo = restrict(topology_of(args), args)
    workload = Workload(args.workload, args.instances)
    workload.check_fits(topo, args.allow_colocate, args.backend)
    guide = ModelBackend(topo, workload, load_params(workload.name, args.model_params, topo), noise_rel_sd=0.0)
    backend = make_backend(args.backend, topo, workload, seed=args.seed, noise=args.noise,
                           model_params=args.model_params, allow_colocate=args.allow_colocate,
                           dpdk=dpdk_options(args) if args.backend == "dpdk" else None)
    n_guided = max(1, int(round(args.guide_share * args.budget)))
    n_iid = args.budget - n_guided
    if n_iid < 1:
        raise ValueError(f"--guide-share {args.guide_share} of --budget {args.budget} leaves no iid draw")
    # candidates: draws of another stream than the iid ones (seed + 1), ranked by the model
    pool = draws(args.seed + 1, 0, args.pool, workload.n_tasks, topo.n_contexts, args.allow_colocate)
    pred, _ = guide.predict(pool)
    order = np.argsort(-pred, kind="stable")
    guided = best_distinct(pool, order, n_guided)
    iid = draws(args.seed, 0, n_iid, workload.n_tasks, topo.n_contexts, args.allow_colocate)
    os_idx = topo.os_index

    def measure(ctx: np.ndarray, idx: int) -> float | None:
        r = backend.measure([MeasureRequest(idx, tuple(int(os_idx[c]) for c in ctx))])[0]
        return r.value if r.status == "ok" else None

    guided_v = [measure(c, 10_000_000 + i) for i, c in enumerate(guided)]
    iid_v = [measure(c, i) for i, c in enumerate(iid)]
    close = getattr(backend, "close", None)
    if close:
        close()
    kind = backend.kind
    g_ok = [v for v in guided_v if v is not None]
    i_ok = [v for v in iid_v if v is not None]
    best = max(g_ok + i_ok) if g_ok + i_ok else None
    print(f"{args.workload} x{args.instances} on {topo.name}, backend {args.backend} ({kind}): budget {args.budget} = "
          f"{len(guided)} guided (the model's best of {args.pool:,} candidates, modelled ranking) + {n_iid} iid")
    print(f"best guided {max(g_ok):,.1f}" if g_ok else "no guided measurement succeeded", end="")
    print(f", best iid {max(i_ok):,.1f}" if i_ok else ", no iid measurement succeeded", end="")
    print(f" {workload.spec.unit} ({kind})")
    result = {"workload": args.workload, "instances": args.instances, "machine": topo.name, "kind": kind,
              "budget": args.budget, "guided": len(guided), "iid": n_iid, "best": best,
              "best_guided": max(g_ok) if g_ok else None, "best_iid": max(i_ok) if i_ok else None,
              "estimate_from": "iid draws only"}
    try:
        est = estimate(i_ok, cross_checks=False)
        result["estimate"] = est.to_dict()
        if est.upb is not None and best is not None:
            result["gap_of_best_pct"] = 100.0 * (est.upb - best) / est.upb
        print(f"EVT estimate from the {len(i_ok)} iid draws alone (the guided measurements are not a random "
              f"sample and are left out):")
        print(est.format_text(kind))
        if "gap_of_best_pct" in result:
            print(f"gap of the best found (guided or iid) to the UPB: {result['gap_of_best_pct']:.2f}% (estimated)")
    except EstimateError as e:
        result["estimate_error"] = str(e)
        print(f"no EVT estimate from the {len(i_ok)} iid draws alone: {e}")
    if args.json:
        if not save(args.json, lambda f: json.dump(result, f, indent=2, default=float), "search result"):
            return 1
        print(f"written to {args.json}")
    return 0
