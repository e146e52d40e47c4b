"""`assign compare`: baselines measured with a dpdk run's own protocol, each
with its gap to the optimum EVT estimates from the run (the paper's
Figure 1: naive and Linux-like assignments against the optimal
performance).

  naive (random)   the mean of the run's random assignments (measured)
  Linux-like       tasks spread evenly, cores first (baselines.linux_like)
  one core         the three stages of each instance kept on one core
                   (instance i on core i mod cores, one stage per context of
                   that core, sharing a context when the core has fewer)
  best found       the best assignment of the sample (measured)
  UPB              the estimated optimum and its confidence interval

Linux-like and one-core are measured --reps times; their mean is stored in
the run's baselines (names "compare:...") with every value, and reused on
the next call, so nothing is measured twice or lost.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from .argtypes import number as _float, positive_int as _pos_int
from .baselines import linux_like
from .dpdk_backend import DpdkBackend, DpdkOptions, RUNNERS, summarize
from .topology import Topology
from .workloads import Workload


@dataclass
class Bar:
    name: str
    value: float | None
    sd: float | None
    label: str          # measured / estimated
    note: str
    contexts: list[int] | None = None
    gap_pct: float | None = None


def one_core(topo: Topology, n_tasks: int) -> list[int]:
    """Context index per task: instance i's R, P, T on core i mod n_cores,
    on that core's contexts in order (wrapping, i.e. sharing, when it has
    fewer free than three)."""
    core_ids = topo.level_ids[2]
    cores: dict[int, list[int]] = {}
    for v in range(topo.n_contexts):
        cores.setdefault(int(core_ids[v]), []).append(v)
    order = list(cores.values())
    cursor = [0] * len(order)
    out = []
    for t in range(n_tasks):
        k = (t // 3) % len(order)
        ctxs = order[k]
        out.append(ctxs[cursor[k] % len(ctxs)])
        cursor[k] += 1
    return out






def add_compare_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="naive, Linux-like and one-core baselines vs the estimated optimum "
                                       "(dpdk run, as the paper's Figure 1)",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True, metavar="FILE", help="SQLite results database of a dpdk run")
    p.add_argument("--run", type=_pos_int, metavar="ID", help="run in the database (needed when it holds several)")
    p.add_argument("--reps", type=_pos_int, default=5, help="measurements of each baseline (default: 5)")
    p.add_argument("--confidence", type=_float, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--plot", metavar="FILE", help="bar chart like the paper's Figure 1 (.png or .svg)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    g = p.add_argument_group("dpdk backend (the window, warm-up and traffic are the run's)")
    g.add_argument("--build", metavar="DIR", help="Meson build with the apps (default: $PIPEPLACE_BUILD or build/)")
    g.add_argument("--runner", choices=RUNNERS, default="auto", help="serve or process (default: auto)")
    g.add_argument("--timeout", type=float, metavar="S", help="per attempt (default: from the window)")
    return p


def _measured_baseline(store, run, be: DpdkBackend, name: str, ctx_idx: list[int], reps: int) -> Bar:
    key = f"compare:{name}"
    got = store.baseline(run.id, key)
    note = ""
    if got is None:
        contexts = [int(be.topo.os_index[c]) for c in ctx_idx]
        values, reasons = [], []
        for _ in range(reps):
            r = be.measure_one(contexts)
            (values.append(float(r.value)) if r.status == "ok" else reasons.append(r.reason or ""))
        s = summarize(values)
        extra = {"kind": "measured", "reps": reps, "values": values, "failures": reasons, "summary": s}
        if values:
            store.add_baseline(run.id, key, contexts, s["mean"], "ok", None, extra)
        else:
            store.add_baseline(run.id, key, contexts, None, "failed", f"all {reps} measurements failed: "
                               f"{reasons[0]}", extra)
        got = store.baseline(run.id, key)
    else:
        note = " (stored earlier)"
    s = got.extra.get("summary", {})
    n = s.get("n", 0)
    if got.status != "ok":
        return Bar(name, None, None, "measured", f"measurement failed: {got.reason}", got.assignment)
    sd = s.get("std") if n > 1 else None
    return Bar(name, got.value, sd, "measured", f"mean of {n} measurement(s){note}", got.assignment)


def run_compare(args: argparse.Namespace) -> int:
    from .evt import EstimateError, estimate
    from .store import Store

    with Store(args.db) as store:
        run = store.run(args.run)
        if run.backend != "dpdk":
            raise ValueError(f"{args.db} {run.label()}: compare measures baselines with the run's dpdk protocol; "
                             f"this run's backend is {run.backend} (use `assign baselines`)")
        values = store.values(run.id)
        if not values:
            raise ValueError(f"{args.db} run {run.id} holds no successful measurements yet")
        try:
            est = estimate(values, confidence=args.confidence)
            est_note = None
        except EstimateError as e:
            est, est_note = None, str(e)
        topo = Topology.from_json(run.topology)
        workload = Workload(run.workload, run.instances)
        overrides = {"runner": args.runner, "timeout": args.timeout}
        if args.build:
            from pathlib import Path
            overrides["build_dir"] = Path(args.build)
        opts = DpdkOptions.from_params(run.params, **overrides)
        with DpdkBackend(topo, workload, opts) as be:
            lin = _measured_baseline(store, run, be, "Linux-like", linux_like(topo, workload.n_tasks), args.reps)
            one = _measured_baseline(store, run, be, "one core per instance", one_core(topo, workload.n_tasks),
                                     args.reps)
        best = store.best(run.id)
    sample = summarize(values)
    # no error bar for naive: the sample's spread is the population's, not measurement noise
    bars = [Bar("naive (random)", sample["mean"], None, "measured",
                f"mean of the run's {len(values)} random assignments (their sd: {sample['std']:,.0f})"),
            lin, one,
            Bar("best found", best.value, None, "measured", f"draw {best.idx} of the sample", best.assignment)]
    upb = est.upb if est is not None else None
    if upb is not None:
        for b in bars:
            if b.value is not None:
                b.gap_pct = 100.0 * (upb - b.value) / upb
        lo = "?" if est.upb_ci_low is None else f"{est.upb_ci_low:,.0f}"
        hi = "inf" if est.one_sided else ("?" if est.upb_ci_high is None else f"{est.upb_ci_high:,.0f}")
        ci = f"{lo} .. {hi}"
        bars.append(Bar("UPB (optimum)", upb, None, "estimated",
                        f"EVT, {100 * args.confidence:g}% interval {ci}, status {est.status}"))
    if args.plot:
        plot(bars, args.plot, f"{run.workload} x{run.instances} on {run.machine}", est)
    if args.json:
        print(json.dumps({"run": run.id, "bars": [b.__dict__ for b in bars],
                          "estimate": est.to_dict() if est is not None else None, "estimate_error": est_note},
                         indent=2, default=str))
        return 0
    print(run.label())
    if upb is None:
        print(f"no EVT estimate ({est_note}); gaps to the optimum not shown")
    for b in bars:
        v = "n/a" if b.value is None else f"{b.value:,.0f}"
        sd = f" +- {b.sd:,.0f}" if b.sd is not None and b.sd == b.sd else ""
        gap = f"; {b.gap_pct:.2f}% below the optimum (estimated)" if b.gap_pct is not None else ""
        print(f"  {b.name:22s} {v:>14s}{sd} packets/s ({b.label}): {b.note}{gap}")
    if args.plot:
        print(f"figure: {args.plot}")
    return 0


def plot(bars: list[Bar], path: str, title: str, est) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [b for b in bars if b.value is not None]
    fig, ax = plt.subplots(figsize=(7, 4))
    colors = ["#999999" if b.label == "measured" else "#cc4444" for b in shown]
    errs = [[0 for _ in shown], [0 for _ in shown]]
    for i, b in enumerate(shown):
        if b.label == "estimated" and est is not None:
            errs[0][i] = b.value - est.upb_ci_low if est.upb_ci_low is not None else 0
            errs[1][i] = 0 if est.one_sided or est.upb_ci_high is None else est.upb_ci_high - b.value
        elif b.sd is not None and b.sd == b.sd:
            errs[0][i] = errs[1][i] = b.sd
    ax.bar(range(len(shown)), [b.value / 1e6 for b in shown], color=colors,
           yerr=[[e / 1e6 for e in errs[0]], [e / 1e6 for e in errs[1]]], capsize=4)
    ax.set_xticks(range(len(shown)), [f"{b.name}\n({b.label})" for b in shown], fontsize=8)
    for i, b in enumerate(shown):
        if b.gap_pct is not None and b.label == "measured":
            ax.text(i, b.value / 1e6, f"-{b.gap_pct:.1f}%", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("Mpackets/s")
    ax.set_title(f"{title}: baselines vs the estimated optimum" if est is not None
                 else f"{title}: baselines (no EVT estimate yet)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
