"""`assign best`: the placement to deploy, chosen by measuring the leading
placements of a run again (assign/choice.py), written as a placement JSON."""
from __future__ import annotations

import argparse
import json
import math
import sys

from ._args import output_file, positive_int, number
from ._options import RUNNERS, add_db
from ..search import SAMPLERS
from ._save import save

DESCRIPTION = """\
Choose the placement to deploy from a stored run. First a search from the
run's leading placements (--sampler, default surrogate: a local search that
converges under noise, guided by a surrogate fitted to every measurement;
its budget is printed), since random draws rarely reach the top of a large
space. Then the leading distinct placements, drawn or found (by the mean of
everything measured of them so far), are measured again in interleaved
rounds, every candidate once a round in a shuffled order, until Kim and
Nelson's fully sequential procedure (KN) leaves one.
KN guarantees, with probability --confidence, that the chosen placement's
mean is within the indifference zone of the best candidate's. The chosen
placement's mean (measured over the rounds) comes with its interval and its
gap to the optimum of placement means (estimated and certified against
every placement measured, as `assign estimate`). Every measurement is
stored as it comes; an interrupted search or selection resumes where it
stopped, and a finished one is not measured again.
Contexts in the file are PU os_index; instance i receives on port 0 queue i
and transmits on port 1 queue i (runtime/PLACEMENT.md)."""


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("best", help="choose the placement to deploy by re-measuring the leading ones, and write it",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_db(p)
    p.add_argument("--out", required=True, type=output_file, metavar="FILE", help="placement JSON to write (for a program we did not write, also the program's own form "
                        "of it, FILE with the suffix .deploy.sh: assign/WORKLOADS.md)")
    p.add_argument("--candidates", type=positive_int, default=None, metavar="M",
                   help="leading distinct placements to choose among (default: 10)")
    p.add_argument("--indifference", type=number, default=None, metavar="PCT",
                   help="indifference zone, percent of the leading mean (default: one noise sd of a measurement, "
                        "as the run's repetitions measured it, at least 0.1%%)")
    p.add_argument("--confidence", type=number, default=0.95,
                   help="probability of correct selection, and level of the intervals (default: 0.95)")
    p.add_argument("--first-stage", type=positive_int, default=None, metavar="N0",
                   help="rounds before KN eliminates (default: 10; at least 2)")
    p.add_argument("--max-measurements", type=positive_int, default=None, metavar="N",
                   help="stop the selection after this many measurements, uncertified (default: 12%% of the "
                        "run's draws, at least enough for the first stage and 5 rounds)")
    p.add_argument("--sampler", choices=(*SAMPLERS, "none"), default=None,
                   help="the search before the selection (default: surrogate; none: choose among the draws only)")
    p.add_argument("--search-budget", type=positive_int, default=None, metavar="N",
                   help="measurements the search may spend (default: as many as the run has draws, at least 200)")
    p.add_argument("--single", action="store_true",
                   help="no selection: the draw with the best single value (the paper's choice; one lucky "
                        "measurement, not a placement's mean)")
    p.add_argument("--json", action="store_true", help="print the selection's result as one JSON object")
    g = p.add_argument_group("measuring (the run's backend and protocol)")
    g.add_argument("--model-params", metavar="FILE", help="a model run's parameter file, when not the packaged one")
    g.add_argument("--build", metavar="DIR", help="dpdk: Meson build with the apps (default: $PIPEPLACE_BUILD or build/)")
    g.add_argument("--runner", choices=RUNNERS, default=None, help="dpdk: serve or process (default: auto)")
    g.add_argument("--timeout", type=float, metavar="S", help="dpdk: per attempt (default: from the window)")
    return p


def run(args: argparse.Namespace) -> int:
    from ..placement import placement
    from ..store import Store
    from ..units import value_unit
    from ..workloads import stored_workload

    if not 0.5 <= args.confidence < 1.0:
        raise ValueError(f"--confidence {args.confidence}: expected a probability in [0.5, 1)")
    if args.indifference is not None and not args.indifference > 0:
        raise ValueError(f"--indifference {args.indifference}: expected a percentage > 0")
    if args.first_stage is not None and args.first_stage < 2:
        raise ValueError(f"--first-stage {args.first_stage}: KN needs at least 2 rounds to estimate a variance")
    if args.candidates is not None and args.candidates < 2 and not args.single:
        raise ValueError(f"--candidates {args.candidates}: a selection needs at least 2 candidates")
    with Store(args.db) as store:
        run_ = store.run(args.run)
        workload = stored_workload(run_.workload, run_.instances, run_.params)
        if args.single:
            best = store.best(run_.id)
            if best is None:
                raise ValueError(f"{args.db} run {run_.id} holds no successful measurements")
            doc = placement(workload, best.assignment, run_.allow_colocate)
            if not save(args.out, lambda f: f.write(json.dumps(doc, indent=2) + "\n"), "placement"):
                return 1
            print(f"wrote {args.out}: the best single value of {run_.label()}: draw {best.idx}, "
                  f"{best.value:,.1f} {value_unit(run_.workload, run_.params)} ({run_.kind}, one measurement: "
                  f"the paper's choice, not a placement's mean; without --single, `assign best` chooses by re-measuring)")
            _deploy_form(args, workload, best.assignment, run_)
            return 0
        res = choose(store, run_, args)
    chosen = res["chosen"]
    doc = placement(workload, chosen["contexts"], run_.allow_colocate)
    if args.json:
        print(json.dumps(res, indent=2, default=str))
    if not save(args.out, lambda f: f.write(json.dumps(doc, indent=2) + "\n"), "placement"):
        return 1
    if not args.json:
        for line in describe(res, run_.kind, value_unit(run_.workload, run_.params)):
            print(line)
        print(f"wrote {args.out}")
    _deploy_form(args, workload, chosen["contexts"], run_)
    return 0


def _deploy_form(args, workload, contexts, run_) -> None:
    """A program we did not write: its own form of the placement, written beside --out and printed."""
    from ..deploy_form import write_for_best

    for line in write_for_best(args.out, workload, contexts, run_.topology, args.build):
        print(line, file=sys.stderr if args.json else sys.stdout)


def choose(store, run_, args) -> dict:
    """Run or resume the selection (or reuse a finished one with the same parameters); its result."""
    from ..choice import Settings, choose as choose_on
    from ..run_backend import backend_for_run

    settings = Settings(candidates=args.candidates, indifference_pct=args.indifference, confidence=args.confidence,
                        first_stage=args.first_stage, max_measurements=args.max_measurements, sampler=args.sampler,
                        search_budget=args.search_budget,
                        predict=model_predict(run_, args.model_params) if args.sampler == "model" else None)
    return choose_on(store, run_, lambda: backend_for_run(run_, model_params=args.model_params, build=args.build,
                                                          runner=args.runner, timeout=args.timeout),
                     settings, close=True, quiet=args.json)


def model_predict(run_, model_params: str | None):
    """The performance model's noise-free prediction on the run's machine, for --sampler model."""
    from ..backends.model import ModelBackend, load_params
    from ..search.stored import space_of
    from ..workloads import Workload

    _, topo = space_of(run_)
    wl = Workload(run_.workload, run_.instances)
    m = ModelBackend(topo, wl, load_params(wl.name, model_params, topo), noise_rel_sd=0.0)
    return lambda ctx: m.predict(ctx)[0]


WIDE_ZONE_PCT = 10.0  # a certificate within more than this of the best candidate's mean is said to be weak


def describe(res: dict, kind: str, unit: str = "packets/s") -> list[str]:
    """The selection's result in words, every figure labelled."""
    from ..evt.estimate import _fmt
    from ..run_sample import describe_cost

    from ..choice import describe_search

    c = res["chosen"]
    lines = []
    if res.get("search"):
        lines.append(describe_search(res["search"]))
    if res.get("candidates"):
        zone = res["indifference_zone"]
        lines.append(f"selection {res['selection']} ({res['procedure']}{', stored earlier' if res.get('reused') else ''}): "
                     f"{len(res['candidates'])} candidates, {res['rounds']} rounds, {res['measurements']} "
                     f"measurements")
        if res["certified"]:
            lines.append(f"  certified: with probability >= {res['probability_correct_selection']:.0%} the chosen "
                         f"placement's mean is within the indifference zone {_fmt(zone)} {unit} "
                         f"({res['indifference_zone_pct']:.2g}%, {res['indifference_source']}) of the best "
                         f"candidate's")
            if res["indifference_zone_pct"] > WIDE_ZONE_PCT:
                lines.append(f"  note: a zone of {res['indifference_zone_pct']:.2g}% says little: every candidate may "
                             f"lie within it. Name a narrower zone (--indifference) with more rounds "
                             f"(--max-measurements); longer windows (`sample --duration`) help only where the "
                             f"noise arises within a window")
        else:
            lines.append(f"  NOT certified: the budget of rounds ran out with {len(res['survivors'])} candidates "
                         f"left (draws {', '.join(map(str, res['survivors']))}); the chosen one has the highest "
                         f"mean of them (raise --max-measurements or --indifference)")
    ci = "" if c.get("ci_low") is None or (isinstance(c["ci_low"], float) and math.isnan(c["ci_low"])) else \
        f", {res.get('probability_correct_selection', 0.95):.0%} interval [{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}]"
    lines.append(f"chosen placement: {c.get('label') or 'draw ' + str(c['draw'])}, mean {_fmt(c['mean'])} {unit} ({c['kind']}, "
                 f"{c['rounds']} rounds){ci}")
    opt = res.get("optimum_mean")
    if opt is not None and opt.get("estimate") is not None:
        hi = "infinity" if opt.get("ci_high") is None else _fmt(opt["ci_high"])
        lines.append(f"optimum of placement means (estimated): {_fmt(opt['estimate'])} {unit}, interval "
                     f"[{_fmt(opt['ci_low'])}, {hi}] ({opt['method']}, status {opt['status']})")
        if res.get("gap_pct_is_lower_bound"):
            lines.append(f"gap of the chosen placement to the optimum of means: at least {res['gap_pct']:.2f}% "
                         f"(measured: to the best placement's lower bound); the estimate is refuted, so no upper "
                         f"end is stated")
        else:
            lines.append(gap_line(res["gap_pct"], res.get("gap_pct_high"), "the chosen placement"))
    elif "gap_pct" not in res and res.get("candidates"):
        lines.append("no estimate of the optimum of means (too few draws, or the noise is not measured yet)")
    if "cost" in res:
        lines.append("cost: " + describe_cost(res["cost"]))
    return lines


def gap_line(gap: float, high: float | None, what: str) -> str:
    """The gap of a placement's mean to the optimum of means, in words (estimated)."""
    text = f"gap of {what} to the optimum of means (estimated): "
    if gap < 0:
        text += (f"{gap:.2f}%: its mean lies above the estimate, within the noise; it may be an optimal "
                 f"placement")
    else:
        text += f"{gap:.2f}%"
    if high is not None:
        text += f" (at most {max(high, 0.0):.2f}% at the ends of both intervals)"
    return text
