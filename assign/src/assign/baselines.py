"""Baseline assignments to compare with the estimated optimum (paper, sec. 2
and its Figure 1), scored by the run's backend.

  naive (random)   tasks on random contexts, i.e. what the random sample
                   itself is; its score is the mean of the sample
  Linux-like       the load balancer's view: tasks spread evenly over the
                   topology one level at a time (cores first, then
                   pipelines within a core, then contexts), in task order
  one core         the three stages of each instance kept on one core
                   (instance i on core i mod cores, one stage per context of
                   that core, sharing a context when the core has fewer)
  best found       the best single value of the sample (one measurement)
  chosen           the placement `assign best` chose, its mean over the
                   selection's rounds (when a selection was made)
  optimum of means the estimated optimum of placement means and its
                   interval (evt/optimum.py): what every gap is to
  UPB              the paper's estimate from single values, kept for
                   comparison (with noise: the luckiest measurement's bound)

Two ways to score them, one type (`Baseline`) for both:

* `scored` (`assign baselines`, the report): Linux-like evaluated once by
  the run's backend (measured or modelled) and stored as "linux-like".
* `measured` (`assign baselines --measured`, alias `assign compare`): a dpdk
  run's Linux-like and one-core assignments measured --reps times with the
  run's own protocol; the mean is stored in the run's baselines (names
  "compare:...") with every value and reused on the next call, so nothing is
  measured twice or lost.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .topology import Node, Topology

if TYPE_CHECKING:
    from .backends.dpdk.backend import DpdkBackend
    from .evt import Estimate
    from .store import Measurement, Run, Store


@dataclass
class Baseline:
    """One bar: a value (None: not available, `note` says why) and what it is."""

    name: str
    value: float | None
    note: str
    label: str = ""                 # measured / modelled / estimated
    sd: float | None = None         # spread of repeated measurements (measured baselines)
    contexts: list[int] | None = None
    gap_pct: float | None = None    # (reference - value) / reference, percent (estimated; Reference says which)
    ci: tuple[float, float] | None = None  # an estimated bar's interval (upper end inf: one-sided)

    def to_dict(self) -> dict:
        return {"name": self.name, "value": self.value, "sd": self.sd, "label": self.label, "note": self.note,
                "contexts": self.contexts, "gap_pct": self.gap_pct,
                "ci": None if self.ci is None else [self.ci[0], None if self.ci[1] == float("inf") else self.ci[1]]}


OPTIMUM = "optimum of means"
PAPER_UPB = "UPB (paper's, single values)"
CHOSEN = "chosen placement"


@dataclass
class Reference:
    """What gaps are measured to: the optimum of placement means where the run
    measured its noise, else the paper's UPB (and the bars of both)."""

    value: float | None
    name: str
    optimum: object | None          # evt.optimum.OptimumMean
    paper: Estimate | None

    def gap(self, v: float | None) -> float | None:
        if v is None or self.value is None or self.value == 0:
            return None
        return 100.0 * (self.value - v) / self.value

    def bars(self) -> list[Baseline]:
        out = []
        o = self.optimum
        if o is not None and o.estimate is not None:
            out.append(Baseline(OPTIMUM, o.estimate, f"{o.method}; noise {o.noise.describe()}", "estimated",
                                ci=(o.ci_low, o.ci_high)))
        p = self.paper
        if p is not None and p.upb is not None:
            out.append(Baseline(PAPER_UPB, p.upb, "EVT of single values, status " + p.status
                                + " (with noise: the luckiest measurement's bound, not a placement's mean)",
                                "estimated", ci=(p.upb_ci_low, math.inf if p.one_sided else p.upb_ci_high)))
        return out


def gap_words(gap: float | None, ref_name: str) -> str:
    """"; X% below the reference (estimated)", or above it."""
    if gap is None:
        return ""
    return f"; {abs(gap):.2f}% {'below' if gap >= 0 else 'above'} {ref_name} (estimated)"


def reference(store: Store, run: Run, paper: Estimate | None, confidence: float = 0.95) -> Reference:
    """The run's optimum of means (or, without a noise figure, the paper's UPB)."""
    from .evt import EstimateError
    from .run_sample import run_optimum

    try:
        opt = run_optimum(store, run, confidence)
    except EstimateError:
        opt = None
    if opt is not None and opt.estimate is not None:
        return Reference(opt.estimate, "the optimum of means", opt, paper)
    return Reference(paper.upb if paper is not None else None, "the paper's UPB (the run's noise is not measured)",
                     opt, paper)


def chosen_bar(store: Store, run: Run, ref: Reference) -> Baseline | None:
    """The placement the run's last finished selection chose (assign best), as a bar."""
    done = [r for _, _, r in store.selections(run.id) if r is not None]
    if not done:
        return None
    c = done[-1]["chosen"]
    sd = None
    if c.get("ci_low") is not None and c.get("rounds", 0) > 1:
        sd = (c["mean"] - c["ci_low"]) / 2.0  # about: the bar shows the interval's half as +-
    return Baseline(CHOSEN, c["mean"], f"`assign best`: mean of {c['rounds']} selection rounds"
                    + ("" if done[-1].get("certified") else " (not certified)"), c.get("kind", run.kind), sd,
                    c["contexts"], ref.gap(c["mean"]))


# --- the assignments ------------------------------------------------------------

def linux_like(topo: Topology, n_tasks: int) -> list[int]:
    """Context index per task: each task descends the tree into the child
    holding the fewest tasks so far (ties: the first), like a balanced
    scheduler filling scheduling domains."""
    index = {id(p): i for i, p in enumerate(topo.pus)}
    load: dict[int, int] = {}
    capacity: dict[int, int] = {}

    def cap(n: Node) -> int:
        if id(n) not in capacity:
            capacity[id(n)] = 1 if n.is_pu else sum(cap(c) for c in n.children)
        return capacity[id(n)]

    if n_tasks > topo.n_contexts:  # co-location: fill the machine, then go round again
        once = linux_like(topo, topo.n_contexts)
        return [once[t % topo.n_contexts] for t in range(n_tasks)]
    out = []
    for _ in range(n_tasks):
        node = topo.root
        while not node.is_pu:
            load[id(node)] = load.get(id(node), 0) + 1
            free = [c for c in node.children if load.get(id(c), 0) < cap(c)]
            # fewest tasks relative to size, so a big subtree is not starved
            node = min(free, key=lambda c: load.get(id(c), 0) / cap(c))
        load[id(node)] = 1
        out.append(index[id(node)])
    return out


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


def naive_score(values: list[float]) -> float:
    """Expected throughput of a random assignment: the sample mean."""
    return float(np.mean(values))


# --- scored once by the run's backend (assign baselines, the report) --------------

def _linux_like_stored(store: Store, run: Run) -> Measurement | Exception:
    """The Linux-like baseline of a run, evaluated once and stored."""
    from .backends.base import BackendError, MeasureRequest
    from .backends.registry import make_backend
    from .workloads import stored_workload

    got = store.baseline(run.id, "linux-like")
    if got is not None:
        return got
    topo = Topology.from_json(run.topology)
    workload = stored_workload(run.workload, run.instances, run.params)
    try:
        dpdk = None
        if run.backend == "dpdk":
            from .backends.dpdk.options import DpdkOptions

            dpdk = DpdkOptions.from_params(run.params)
        backend = make_backend(run.backend, topo, workload, seed=run.seed, noise=run.params.get("noise_rel_sd"),
                               allow_colocate=run.allow_colocate, dpdk=dpdk)
    except BackendError as e:
        return e  # reported as "not measured", the rest of the report stands
    ctx = linux_like(topo, workload.n_tasks)
    contexts = [int(topo.os_index[c]) for c in ctx]
    # a draw index no sample uses, so model noise is that of one more measurement
    res = backend.measure([MeasureRequest(2**40, tuple(contexts))])[0]
    store.add_baseline(run.id, "linux-like", contexts, res.value if res.status == "ok" else None, res.status,
                       res.reason, res.extra)
    return store.baseline(run.id, "linux-like")


def scored(store: Store, run: Run, values: list[float], est: Estimate | None,
           confidence: float = 0.95) -> list[Baseline]:
    """naive, Linux-like (the run's backend, once), best single value, the chosen
    placement, the optimum of means and the paper's UPB; gaps to the optimum of
    means (or, without a noise figure, to the paper's UPB)."""
    out = []
    ref = reference(store, run, est, confidence)

    def gap(v):
        return gap_words(ref.gap(v), ref.name)

    naive = naive_score(values)
    out.append(Baseline("naive (random)", naive, f"mean of the {len(values)} random assignments ({run.kind})"
                        + gap(naive), run.kind, gap_pct=ref.gap(naive)))
    lin = _linux_like_stored(store, run)
    if isinstance(lin, Exception):
        out.append(Baseline("Linux-like", None, f"not measured: {lin}", run.kind))
    elif lin.status == "ok":
        out.append(Baseline("Linux-like", lin.value, f"balanced over cores, then pipelines ({run.kind}, one "
                            f"measurement)" + gap(lin.value), run.kind, contexts=lin.assignment,
                            gap_pct=ref.gap(lin.value)))
    else:
        out.append(Baseline("Linux-like", None, f"measurement failed: {lin.reason}", run.kind))
    from .program_baselines import program_bars

    for fields in program_bars(store, run):  # a program we did not write: its own answers (its file's baselines)
        b = Baseline(**fields)
        b.gap_pct = ref.gap(b.value)
        b.note += gap(b.value)
        out.append(b)
    best = max(values)
    out.append(Baseline("best found", best, f"best single value of the sample ({run.kind}, one measurement: "
                        f"a lucky one, not a placement's mean)" + gap(best), run.kind, gap_pct=ref.gap(best)))
    chosen = chosen_bar(store, run, ref)
    if chosen is not None:
        chosen.note += gap(chosen.value)
        out.append(chosen)
    out += ref.bars()
    return out


# --- measured --reps times with a dpdk run's protocol (baselines --measured) ---------

def _measured_one(store: Store, run: Run, be: DpdkBackend, name: str, ctx_idx: list[int], reps: int) -> Baseline:
    from .backends.base import summarize

    key = f"compare:{name}"
    got = store.baseline(run.id, key)
    note = ""
    if got is None:
        contexts = [int(be.topo.os_index[c]) for c in ctx_idx]
        values, reasons, _ = be.repeat(contexts, reps)
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
        return Baseline(name, None, f"measurement failed: {got.reason}", "measured", contexts=got.assignment)
    sd = s.get("std") if n > 1 else None
    return Baseline(name, got.value, f"mean of {n} measurement(s){note}", "measured", sd, got.assignment)


def measured(store: Store, run: Run, values: list[float], est: Estimate | None, confidence: float, reps: int,
             build: str | None = None, runner: str = "auto", timeout: float | None = None) -> list[Baseline]:
    """naive, Linux-like and one core (each measured `reps` times), best found
    and UPB with its interval, each with its gap to UPB, for a dpdk run."""
    from .backends.base import summarize
    from .backends.dpdk.backend import DpdkBackend
    from .backends.dpdk.options import DpdkOptions
    from .workloads import stored_workload

    topo = Topology.from_json(run.topology)
    workload = stored_workload(run.workload, run.instances, run.params)
    overrides: dict = {"runner": runner, "timeout": timeout}
    if build:
        overrides["build_dir"] = Path(build)
    opts = DpdkOptions.from_params(run.params, **overrides)
    with DpdkBackend(topo, workload, opts) as be:
        lin = _measured_one(store, run, be, "Linux-like", linux_like(topo, workload.n_tasks), reps)
        one = None if workload.spec.program is not None else \
            _measured_one(store, run, be, "one core per instance", one_core(topo, workload.n_tasks), reps)
    from .program_baselines import program_bars

    own = [Baseline(**f) for f in program_bars(store, run, max(reps, 2), build, runner, timeout)]  # its own
    best = store.best(run.id)
    sample = summarize(values)
    ref = reference(store, run, est, confidence)
    # no error bar for naive: the sample's spread is the population's, not measurement noise
    bars = [Baseline("naive (random)", sample["mean"],
                     f"mean of the run's {len(values)} random assignments (their sd: {sample['std']:,.0f})",
                     "measured"),
            lin, *([one] if one is not None else []), *own,
            Baseline("best found", best.value, f"draw {best.idx} of the sample: its single value (a lucky one, "
                     f"not a placement's mean)", "measured", contexts=best.assignment)]
    chosen = chosen_bar(store, run, ref)
    if chosen is not None:
        bars.append(chosen)
    for b in bars:
        b.gap_pct = ref.gap(b.value)
    return bars + ref.bars()
