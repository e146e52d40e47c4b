"""The `assign` command line."""
from __future__ import annotations

import argparse
import json
import os
import sys

from typing import TYPE_CHECKING

from . import __version__
from .argtypes import nonneg_int as _nonneg_int, number as _float, positive_int as _positive_int
from .backend import BACKENDS, BackendError, default_backend, make_backend
from .dpdk_backend import DpdkOptions, add_dpdk_options, options_from_args, restrict
from .dpdk_compare import add_compare_parser, run_compare
from .dpdk_noise import add_noise_parser, run_noise
from .topology import MACHINES, get_machine
from .workloads import DEFAULT_INSTANCES, WORKLOADS, Workload, WorkloadError

if TYPE_CHECKING:  # heavy imports (scipy, matplotlib) stay lazy at run time
    from .evt import Estimate
    from .report import Baseline
    from .runner import Session
    from .store import Measurement, Run, Store
    from .topology import Topology

DESCRIPTION = """\
Find near-optimal task assignments of pipelined packet-processing workloads
by measuring random assignments, and estimate the optimum with Extreme Value
Theory (Radojkovic et al., ASPLOS 2012).

Backends: 'dpdk' (runs the real apps on this machine with each placement and
measures packets per second; figures labelled "measured"; the default on
--machine local, see assign/DPDK_BACKEND.md) and 'model' (a documented
performance predictor, figures labelled "modelled"; the default on any other
machine). Machines come from hwloc: --machine local (this host, the default),
--machine ultrasparc-t2, or --topology "<hwloc synthetic>".
Typical use on this machine (two contexts: tasks share them):

  assign sample --n 5000 --workload ipfwd-l1 --instances 1 --allow-colocate --duration 0.1 --db local.db
  assign best --db local.db --out best.json
  assign noise --placement best.json --reps 30 --duration 0.1
  assign compare --db local.db --plot fig1.png

Typical use on the model of the T2:

  assign sample --n 5000 --workload ipfwd-mem --machine ultrasparc-t2 --db t2.db
  assign estimate --db t2.db
  assign report --db t2.db --out t2-report
"""

ENUMERATE_LIMIT = 200_000








def _add_machine(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--machine", default="local", metavar="NAME",
                   help=f"machine: {', '.join(MACHINES)} (default: local, this host through hwloc; "
                        f"ultrasparc-t2 is 'pack:1 core:8 group:2 pu:4')")
    g.add_argument("--topology", metavar="SYNTHETIC",
                   help='any hwloc synthetic topology, e.g. "pack:2 core:4 pu:2"')


def _add_workload(p: argparse.ArgumentParser, instances_default: int = DEFAULT_INSTANCES) -> None:
    p.add_argument("--workload", required=True, metavar="NAME", help=f"one of: {', '.join(WORKLOADS)}")
    p.add_argument("--instances", type=_positive_int, default=instances_default,
                   help=f"app instances, 3 tasks (R, P, T) each (default: {instances_default})")
    p.add_argument("--allow-colocate", action="store_true",
                   help="let several tasks share a hardware context (draws keep collisions)")


def _add_backend(p: argparse.ArgumentParser, noise_help: str) -> None:
    p.add_argument("--backend", default=None, metavar="NAME",
                   help=f"{' or '.join(BACKENDS)} (default: dpdk on --machine local: runs the real app with each "
                        f"placement, figures 'measured'; model elsewhere: a performance predictor, figures "
                        f"'modelled')")
    p.add_argument("--seed", type=_nonneg_int, default=1,
                   help="run seed: draw i depends only on (seed, i) (default: 1)")
    p.add_argument("--noise", type=_float, default=None, metavar="SD", help=noise_help)
    p.add_argument("--model-params", metavar="FILE",
                   help="model parameter file (default: the packaged one, see assign/MODEL.md)")


def _add_db(p: argparse.ArgumentParser, *, run: bool = True) -> None:
    p.add_argument("--db", required=True, metavar="FILE", help="SQLite results database")
    if run:
        p.add_argument("--run", type=_positive_int, metavar="ID",
                       help="run in the database (needed when it holds several)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assign", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"assign {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("topology", help="show the machine as assign sees it (hwloc)")
    _add_machine(p)

    p = sub.add_parser("count", help="exact number of distinct assignments of T tasks",
                       description="Exact number of distinct assignments of T distinct tasks, one per context, where "
                                   "assignments that differ only by permuting identical siblings (cores, pipelines, "
                                   "contexts, ...) are one. The integer is the first line of output.")
    _add_machine(p)
    p.add_argument("--tasks", type=_nonneg_int, required=True, metavar="T", help="number of tasks")

    p = sub.add_parser("enumerate", help="evaluate every distinct assignment of a small workload (true optimum)",
                       description="Every distinct assignment (one representative with its multiplicity, the "
                                   "number of raw placements it stands for), evaluated by the backend. Model noise "
                                   "is off unless --noise is given, so the optimum is the model's true optimum.")
    _add_machine(p)
    _add_workload(p, instances_default=2)
    _add_backend(p, "model: relative measurement noise (default here: 0)")
    add_dpdk_options(p, contexts=False)
    p.add_argument("--limit", type=_positive_int, default=ENUMERATE_LIMIT,
                   help=f"refuse populations larger than this (default: {ENUMERATE_LIMIT})")
    p.add_argument("--top", type=_nonneg_int, default=5, help="print the best K assignments (default: 5)")
    p.add_argument("--out", metavar="CSV", help="write every representative: multiplicity, value, contexts")

    p = sub.add_parser("sample", help="measure N iid random assignments, stored as they come",
                       description="Draw iid random assignments as the paper does (a uniform context per task, the "
                                   "draw discarded on a collision), measure each with the backend and store it in "
                                   "the database at once. Running again with the same options continues the same "
                                   "run up to the new --n; a killed run loses at most the batch in flight.")
    p.add_argument("--n", type=_positive_int, required=True, help="successful measurements the run should hold")
    _add_machine(p)
    _add_workload(p)
    _add_backend(p, "model: relative measurement noise, sd (default: the workload's, see MODEL.md)")
    add_dpdk_options(p)
    _add_db(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser("estimate", help="EVT estimate of the optimum from a stored run or a value file",
                       description="Peaks-Over-Threshold: threshold u (automatic, at most 5% of the sample above "
                                   "it), GPD fit by maximum likelihood, the upper performance bound UPB and its "
                                   "profile-likelihood confidence interval, the gap of the best value to UPB.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--db", metavar="FILE", help="SQLite results database")
    src.add_argument("--csv", metavar="FILE", help="text file, one value per line ('#' comments allowed)")
    p.add_argument("--run", type=_positive_int, metavar="ID", help="run in the database")
    p.add_argument("--kind", choices=("measured", "modelled"), default="measured",
                   help="what the --csv values are, for the labels (default: measured)")
    p.add_argument("--threshold", type=_float, help="threshold u (default: chosen automatically)")
    p.add_argument("--confidence", type=_float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("iterate", help="the paper's loop: sample until the best is within X%% of the estimate",
                       description="Sample N_init assignments, estimate the optimum, stop when the best is within "
                                   "X% of it (point estimate), else add N_delta and repeat. Stored in the database "
                                   "and resumable. Exit status 0 when the target is reached, 3 when --max-n is hit "
                                   "first.")
    p.add_argument("--target-gap", type=_float, required=True, metavar="X", help="target gap in percent")
    p.add_argument("--n-init", type=_positive_int, default=1000, help="initial sample (default: 1000)")
    p.add_argument("--n-delta", type=_positive_int, default=100, help="added per step (default: 100)")
    p.add_argument("--max-n", type=_positive_int, default=20000, help="give up beyond this (default: 20000)")
    p.add_argument("--confidence", type=_float, default=0.95, help="confidence level (default: 0.95)")
    _add_machine(p)
    _add_workload(p)
    _add_backend(p, "model: relative measurement noise, sd (default: the workload's, see MODEL.md)")
    add_dpdk_options(p)
    _add_db(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser("report", help="figures (PNG and SVG) and a one-page HTML summary of a run")
    _add_db(p)
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the files")
    p.add_argument("--threshold", type=_float, help="threshold u (default: chosen automatically)")
    p.add_argument("--confidence", type=_float, default=0.95, help="confidence level (default: 0.95)")

    p = sub.add_parser("baselines", help="naive and Linux-like assignments, scored by the run's backend")
    _add_db(p)
    p.add_argument("--confidence", type=_float, default=0.95, help="confidence level (default: 0.95)")

    p = sub.add_parser("best", help="write the best assignment of a run as a placement JSON",
                       description="The best stored assignment as a placement file the apps run with (contract 1, "
                                   "runtime/PLACEMENT.md): contexts are PU os_index; instance i receives on port 0 "
                                   "queue i and transmits on port 1 queue i.")
    _add_db(p)
    p.add_argument("--out", required=True, metavar="FILE", help="placement JSON to write")

    add_noise_parser(sub)
    add_compare_parser(sub)
    return parser


# --- commands ---------------------------------------------------------------

def _topology(args: argparse.Namespace) -> Topology:
    return get_machine(None if args.topology else args.machine, args.topology)


def cmd_topology(args: argparse.Namespace) -> int:
    topo = _topology(args)
    from .topology import LEVELS

    print(topo.summary())
    print(f"{topo.n_contexts} hardware contexts (PU os_index): {' '.join(str(int(o)) for o in topo.os_index)}")
    ids = topo.level_ids
    for lvl in range(1, len(LEVELS) - 1):
        groups: dict[int, list[int]] = {}
        for v in range(topo.n_contexts):
            groups.setdefault(int(ids[lvl][v]), []).append(int(topo.os_index[v]))
        print(f"  {LEVELS[lvl]:8s} {len(groups):3d} x: " + " | ".join(",".join(map(str, g)) for g in groups.values()))
    return 0


def cmd_count(args: argparse.Namespace) -> int:
    from .counting import count_assignments, raw_placements

    topo = _topology(args)
    if args.tasks > topo.n_contexts:
        raise WorkloadError(f"--tasks {args.tasks} exceeds the {topo.n_contexts} hardware contexts of {topo.name}")
    c = count_assignments(topo, args.tasks)
    print(c)
    print(f"distinct assignments of {args.tasks} distinct tasks on {topo.summary()} "
          f"(exact; identical siblings identified; {float(c):.4g})")
    print(f"raw placements (injective maps, what random sampling draws from): {raw_placements(topo, args.tasks)}")
    return 0


def cmd_enumerate(args: argparse.Namespace) -> int:
    import numpy as np

    from .counting import count_assignments, raw_placements
    from .enumeration import representatives

    topo = _topology(args)
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
                           dpdk=options_from_args(args) if args.backend == "dpdk" else None)
    from .backend import MeasureRequest

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
        with open(args.out, "w") as f:
            f.write("multiplicity,value,status," + ",".join(workload.task_names()) + "\n")
            for i, r in enumerate(results):
                v = "" if r.value is None else repr(r.value)
                f.write(f"{mults[i]},{v},{r.status}," + ",".join(str(c) for c in requests[i].contexts) + "\n")
        print(f"all {len(reps)} written to {args.out}")
    return 0


def _prepare_session(args: argparse.Namespace) -> tuple[Session, bool]:
    """Validate every option before the database is touched."""
    from .runner import Session
    from .store import Store

    args.backend = args.backend or default_backend(args.machine, args.topology)
    topo = restrict(_topology(args), args)  # --contexts: the contexts tasks may use
    workload = Workload(args.workload, args.instances)
    if args.backend not in BACKENDS:
        raise BackendError(f"unknown backend {args.backend!r} (known: {', '.join(BACKENDS)})")
    workload.check_fits(topo, args.allow_colocate, args.backend)
    backend = make_backend(args.backend, topo, workload, seed=args.seed, noise=args.noise,
                           model_params=args.model_params, allow_colocate=args.allow_colocate,
                           dpdk=options_from_args(args) if args.backend == "dpdk" else None)
    if args.run is not None and not os.path.exists(args.db):
        from .store import StoreError

        raise StoreError(f"results database {args.db} does not exist (it cannot hold --run {args.run})")
    store = Store(args.db)
    session, created = Session.open(store, topo, workload, backend, args.seed, args.allow_colocate, args.run)
    return session, created


def cmd_sample(args: argparse.Namespace) -> int:
    session, created = _prepare_session(args)
    run = session.run
    nxt, ok, failed, _ = session.store.progress(run.id)
    print(f"{'new' if created else 'continuing'} {run.label()} in {args.db}"
          + ("" if created else f" ({ok} stored)"))
    try:
        added, fails = session.sample_until(args.n, show_progress=not args.quiet)
    except KeyboardInterrupt:
        _, ok, failed, best = session.store.progress(run.id)
        print(f"interrupted: run {run.id} holds {ok} values ({failed} failed), all stored; "
              f"run the same command again to continue", file=sys.stderr)
        return 130
    _, ok, failed, best = session.store.progress(run.id)
    best_text = "none" if best is None else f"{best:,.1f} packets/s ({run.kind})"
    print(f"run {run.id}: {ok} {run.kind} values stored ({added} new, {failed} failed), best {best_text}")
    return 0


def _run_values(store: "Store", args: argparse.Namespace) -> tuple["Run", list[float]]:
    """The run --run names (or the only one) and its values; refuses a run
    that holds none yet."""
    run = store.run(args.run)
    values = store.values(run.id)
    if not values:
        raise ValueError(f"{args.db} run {run.id} holds no successful measurements yet")
    return run, values


def _load_values(args: argparse.Namespace) -> tuple[list[float], str, str]:
    """(values, label, where) from --db/--run or --csv."""
    if args.csv:
        from .csvio import read_values

        if args.run is not None:
            raise ValueError("--run goes with --db, not with --csv")
        return read_values(args.csv), args.kind, args.csv
    from .store import Store

    with Store(args.db, readonly=True) as store:
        run, values = _run_values(store, args)
    return values, run.kind, f"{args.db} run {run.id}"


def cmd_estimate(args: argparse.Namespace) -> int:
    from .evt import EstimateError, estimate

    values, label, where = _load_values(args)
    try:
        est = estimate(values, threshold=args.threshold, confidence=args.confidence)
    except EstimateError as e:
        raise EstimateError(f"cannot estimate from {where}: {e}") from None
    if args.json:
        d = est.to_dict()
        d["source"] = where
        d["value_kind"] = label
        print(json.dumps(d, indent=2))
    else:
        print(f"source: {where} ({len(values)} {label} values)")
        print(est.format_text(label))
    return 0


def cmd_iterate(args: argparse.Namespace) -> int:
    from .iterate import iterate

    if args.target_gap <= 0:
        raise ValueError(f"--target-gap must be > 0 percent, got {args.target_gap}")
    session, created = _prepare_session(args)
    print(f"{'new' if created else 'continuing'} {session.run.label()} in {args.db}")

    said: set[str] = set()

    def show(step) -> None:
        # a note is printed the first time it appears, not at every step
        note = f"\n    {step.note}" if step.note and step.note not in said else ""
        said.add(step.note)
        if step.upb is not None and step.gap_pct is not None:
            print(f"n={step.n}: best {step.best:,.1f} ({session.run.kind}), UPB {step.upb:,.1f} (estimated), "
                  f"gap {step.gap_pct:.2f}% (estimated) [{step.status}]{note}")
        else:
            print(f"n={step.n}: best {step.best:,.1f} ({session.run.kind}), no usable estimate "
                  f"[{step.status}]{note}")

    reached, steps = iterate(session, args.target_gap, args.n_init, args.n_delta, args.max_n, args.confidence,
                             show_progress=not args.quiet, on_step=show)
    last = steps[-1]
    if reached:
        print(f"target reached: with n={last.n} the best is within {last.gap_pct:.2f}% of the estimated optimum "
              f"(target {args.target_gap}%)")
        return 0
    print(f"target {args.target_gap}% not reached by n={last.n} (--max-n {args.max_n})")
    return 3


def _linux_like(store: Store, run: Run) -> Measurement | Exception:
    """The Linux-like baseline of a run, measured once and stored."""
    from .backend import MeasureRequest
    from .baselines import linux_like
    from .topology import Topology

    got = store.baseline(run.id, "linux-like")
    if got is not None:
        return got
    topo = Topology.from_json(run.topology)
    workload = Workload(run.workload, run.instances)
    try:
        backend = make_backend(run.backend, topo, workload, seed=run.seed,
                               noise=run.params.get("noise_rel_sd"), allow_colocate=run.allow_colocate,
                               dpdk=DpdkOptions.from_params(run.params) if run.backend == "dpdk" else None)
    except BackendError as e:
        return e  # reported as "not measured", the rest of the report stands
    ctx = linux_like(topo, workload.n_tasks)
    contexts = [int(topo.os_index[c]) for c in ctx]
    # a draw index no sample uses, so model noise is that of one more measurement
    res = backend.measure([MeasureRequest(2**40, tuple(contexts))])[0]
    store.add_baseline(run.id, "linux-like", contexts, res.value if res.status == "ok" else None, res.status,
                       res.reason, res.extra)
    return store.baseline(run.id, "linux-like")


def _baselines(store: Store, run: Run, values: list[float], est: Estimate | None) -> list[Baseline]:
    from .baselines import naive_score
    from .report import Baseline

    out = []
    upb = est.upb if est is not None else None

    def gap(v):
        if v is None or upb is None:
            return ""
        return f"; {100 * (upb - v) / upb:.2f}% below UPB (estimated)"

    naive = naive_score(values)
    out.append(Baseline("naive (random)", naive, f"mean of the {len(values)} random assignments ({run.kind})"
                        + gap(naive)))
    lin = _linux_like(store, run)
    if isinstance(lin, Exception):
        out.append(Baseline("Linux-like", None, f"not measured: {lin}"))
    elif lin.status == "ok":
        out.append(Baseline("Linux-like", lin.value, f"balanced over cores, then pipelines ({run.kind})"
                            + gap(lin.value)))
    else:
        out.append(Baseline("Linux-like", None, f"measurement failed: {lin.reason}"))
    best = max(values)
    out.append(Baseline("best found", best, f"best of the sample ({run.kind})" + gap(best)))
    if upb is not None:
        out.append(Baseline("UPB", upb, "estimated optimum (EVT)"))
    return out


def cmd_baselines(args: argparse.Namespace) -> int:
    from .evt import EstimateError, estimate
    from .store import Store

    with Store(args.db) as store:
        run, values = _run_values(store, args)
        try:
            est = estimate(values, confidence=args.confidence)
        except EstimateError as e:
            est = None
            print(f"no EVT estimate ({e}); gaps to UPB not shown")
        print(run.label())
        for b in _baselines(store, run, values, est):
            v = "n/a" if b.value is None else f"{b.value:,.1f}"
            print(f"  {b.name:15s} {v:>16s} packets/s  {b.note}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .evt import EstimateError, estimate
    from .report import ReportInput, build
    from .store import Store

    with Store(args.db) as store:
        run, values = _run_values(store, args)
        try:
            est = estimate(values, threshold=args.threshold, confidence=args.confidence)
        except EstimateError:
            est = None
        baselines = _baselines(store, run, values, est)
        failures = store.failures(run.id)
    facts = [
        ("sample", run.label()),
        ("database", os.path.abspath(args.db)),
        ("machine", f"{run.machine}"),
        ("backend", f"{run.backend} ({run.kind}) {json.dumps(run.params)}"),
        ("values", f"{len(values)} {run.kind}, {len(failures)} failed measurements (not counted)"),
    ]
    out = build(ReportInput(f"assign report: {run.workload} x{run.instances} on {run.machine} ({run.kind})",
                            run.kind, values, args.confidence, args.threshold, baselines, facts), args.out)
    if est is None:
        print(out.estimate_text)
    print(f"report: {os.path.abspath(out.html)}")
    print(f"figures ({len(out.figures)}, PNG and SVG) in {os.path.abspath(args.out)}:")
    for p in out.figures:
        print(f"  {os.path.basename(p)}")
    for s in out.skipped:
        print(f"  not drawn: {s}")
    return 0


def cmd_best(args: argparse.Namespace) -> int:
    from .placement import placement
    from .store import Store

    with Store(args.db, readonly=True) as store:
        run = store.run(args.run)
        best = store.best(run.id)
    if best is None:
        raise ValueError(f"{args.db} run {run.id} holds no successful measurements")
    workload = Workload(run.workload, run.instances)
    doc = placement(workload, best.assignment, run.allow_colocate)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}: best of {run.label()}: draw {best.idx}, {best.value:,.1f} packets/s ({run.kind})")
    return 0


COMMANDS = {
    "topology": cmd_topology, "count": cmd_count, "enumerate": cmd_enumerate, "sample": cmd_sample,
    "estimate": cmd_estimate, "iterate": cmd_iterate, "report": cmd_report, "baselines": cmd_baselines,
    "best": cmd_best, "noise": run_noise, "compare": run_compare,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .runner import SampleError

    try:
        return COMMANDS[args.command](args)
    # every input error of the package is a ValueError (EstimateError, CsvError,
    # StoreError, ModelError, TopologyError, WorkloadError, BackendError)
    except (SampleError, ValueError) as e:
        print(f"assign {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"assign {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
