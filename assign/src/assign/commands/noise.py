"""`assign noise`: how much repeated measurements of one placement spread.

The same placement is measured --reps times with the dpdk backend's
protocol; the mean, standard deviation and coefficient of variation (CV =
sd / mean) say which differences between two assignments are real on this
machine: two single measurements of one placement differ by more than
2.77 sd (= 1.96 * sqrt(2) sd) only 5% of the time, if the noise is normal.
"""
from __future__ import annotations

import argparse
import json
import math

from ._args import at_least
from ._options import WorkloadFileAction, add_dpdk_options, dpdk_options

at_least_two = at_least(2, "{text!r}: at least 2 repetitions are needed for a spread")
DIFF_FACTOR = 1.96 * math.sqrt(2.0)  # 95% band of the difference of two single measurements


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("noise", help="spread (CV) of repeated measurements of one placement (dpdk, measured)",
                       description="Measure one placement --reps times on this machine with the dpdk backend's "
                                   "protocol (same warm-up, window and traffic as `assign sample --backend dpdk`) "
                                   "and print mean, standard deviation and coefficient of variation, all "
                                   "measured. Ports and queues are assign's (instance i: port 0 queue i in, port "
                                   "1 queue i out); the file gives the app, variant, co-location and contexts.")
    p.add_argument("--placement", required=True, metavar="FILE", help="placement JSON (e.g. from `assign best`)")
    p.add_argument("--reps", type=at_least_two, default=30, help="measurements (default: 30)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--workload-file", metavar="FILE", action=WorkloadFileAction,
                   help="the placement's workload is one of your own, this file (assign/WORKLOADS.md); default: "
                        "the packaged workload of the placement's app and variant")
    add_dpdk_options(p, contexts=False)
    return p


def run(args: argparse.Namespace) -> int:
    from ..backends.base import summarize
    from ..backends.dpdk.backend import DpdkBackend
    from ..placement import contexts_of, load_placement
    from ..topology import get_machine

    doc = load_placement(args.placement)
    workload, ctx, colocate = contexts_of(doc, args.placement, getattr(args, "workload", None))
    topo = get_machine()
    have = {int(o) for o in topo.os_index}
    absent = sorted({c for c in ctx if c not in have})
    if absent:
        raise ValueError(f"--placement {args.placement}: context(s) {absent} are not hardware contexts of this "
                         f"machine ({sorted(have)})")
    with DpdkBackend(topo, workload, dpdk_options(args), allow_colocate=colocate or None) as be:
        values, failures, extras = be.repeat(ctx, args.reps)
        protocol = be.describe()
        runner = be.runner.mode
    s = summarize(values)
    overhead = summarize([e["overhead_s"] for e in extras])
    names = workload.task_names()
    if args.json:
        print(json.dumps({"placement": args.placement, "workload": workload.name, "instances": workload.instances,
                          "contexts": ctx, "kind": "measured", "reps": args.reps, "values": values,
                          "failures": failures, "summary": s, "protocol": protocol, "runner": runner,
                          "overhead_s_median": overhead["median"]}, indent=2))
    else:
        print(f"placement {args.placement}: {workload.name} x{workload.instances}, "
              + " ".join(f"{n}@{c}" for n, c in zip(names, ctx)))
        win = protocol["window"]
        print(f"{args.reps} repetitions, window {json.dumps(win)}, warm-up {protocol['warmup_s']} s, "
              f"runner {runner}")
        if s["n"] >= 2:
            print(f"mean {s['mean']:,.0f} {workload.spec.unit} (measured), sd {s['std']:,.0f} (measured), "
                  f"CV {100 * s['cv']:.2f}% (measured)")
            print(f"min {s['min']:,.0f}, max {s['max']:,.0f} {workload.spec.unit} (measured)")
            band = DIFF_FACTOR * s["std"]
            print(f"two single measurements of this placement differ by more than {band:,.0f} {workload.spec.unit} "
                  f"({100 * band / s['mean']:.1f}%) in 5% of cases (estimated, normal noise)")
        print(f"per-assignment overhead: {overhead['median']:.3f} s median (measured; port set-up, drain, "
              f"tear-down, and a start when the app process is new; not warm-up or window)")
        if failures:
            print(f"{len(failures)} of {args.reps} measurements failed (not counted): {failures[0]}")
    return 0 if s["n"] >= 2 else 1
