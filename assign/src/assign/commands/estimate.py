"""`assign estimate`: the EVT analysis of a stored run or a value file."""
from __future__ import annotations

import argparse
import json
from dataclasses import replace

from ..beside import Beside, beside
from ._args import nonneg_int, number, positive_int
from ._runs import load_values, run_values


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("estimate", help="EVT estimate of the optimum from a stored run or a value file",
                       description="The optimum of placement means (mu*), with its interval and the measurement "
                                   "noise it rests on (the run's planned repetitions), the placement `assign best` "
                                   "chose and its gap to mu*; then the paper's estimate from single values: "
                                   "Peaks-Over-Threshold, threshold u (automatic, at most 5% of the sample above "
                                   "it), GPD fit by maximum likelihood, the upper performance bound UPB and its "
                                   "profile-likelihood confidence interval (with noise, UPB bounds the luckiest "
                                   "measurement, not a placement's mean). assign/EVT.md. With --db, the paper's "
                                   "estimate and a read of every page of the store (a damaged one is refused) run "
                                   "in a forked process on a second core; ASSIGN_SERIAL=1 keeps them in this one.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--db", metavar="FILE", help="SQLite results database")
    src.add_argument("--csv", metavar="FILE", help="text file, one value per line ('#' comments allowed)")
    p.add_argument("--run", type=positive_int, metavar="ID", help="run in the database")
    p.add_argument("--kind", choices=("measured", "modelled"), default="measured",
                   help="what the --csv values are, for the labels (default: measured)")
    p.add_argument("--sitting", type=nonneg_int, metavar="K",
                   help="with --db: the values of one sitting of the run (each `assign sample` that measured into "
                        "it is one; 0: values from before sittings were recorded); the output lists them")
    p.add_argument("--threshold", type=number, help="threshold u (default: chosen automatically)")
    p.add_argument("--confidence", type=number, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--cross-check", action="store_true",
                   help="also refit with scipy.stats.genpareto and say whether it agrees (imports scipy: about a "
                        "second more)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args: argparse.Namespace) -> int:
    # one read-only store for the whole command: what it packs is read once (store.py, packs.py)
    store = None
    if args.db:
        from ..store import Store

        store = Store(args.db, readonly=True)
    try:
        return _run(args, store)
    finally:
        if store is not None:
            store.close()


def _run(args: argparse.Namespace, store) -> int:
    from ..evt import EstimateError, estimate
    from ..packs import walk

    values, label, where, excluded, groups = read_values(args, store)
    test = None
    if groups:
        from ..sittings import compare

        test = compare(groups)
    if args.sitting is not None:
        chosen = [g for g in groups if g.number == args.sitting]
        if not chosen:
            raise ValueError(f"--sitting {args.sitting}: {where} has " + (
                "values of sittings " + ", ".join(str(g.number) for g in groups) if groups else "no sittings"))
        values, where = chosen[0].values, f"{where} sitting {args.sitting}"

    def paper():
        """The paper's estimate, or why there is none (its fit is not printed: left behind)."""
        try:
            return replace(estimate(values, threshold=args.threshold, confidence=args.confidence,
                                    cross_checks=args.cross_check), fit=None), None
        except EstimateError as e:
            return None, str(e)

    def paper_and_pages():
        """paper(), and every page of the store's tables read (packs.walk): a damaged one raises."""
        out = paper()
        walk(args.db)
        return out

    # a stored run: the paper's estimate and the pages' check on another core while the optimum of means is
    # computed here
    paper_result = beside(paper_and_pages) if args.db else Beside(paper)
    try:
        noisy = optimum_section(args, values, store) if args.db else None
    except BaseException:
        paper_result.cancel()
        raise
    est, paper_error = paper_result()
    # with too few draws for the paper's fit, what a search and a selection measured is still said
    if est is None and ((noisy or {}).get("optimum_mean") or {}).get("estimate") is None \
            and (noisy or {}).get("chosen") is None:
        raise EstimateError(f"cannot estimate from {where}: {paper_error}")
    if args.json:
        d = est.to_dict() if est is not None else {"status": "no_estimate", "upb": None, "gap_pct": None,
                                                   "gap_upper_pct": None, "error": paper_error}
        d["source"] = where
        d["value_kind"] = label
        d["excluded_flagged_values"] = excluded
        d["upb_is"] = "the paper's estimate from single values (with noise: the luckiest measurement's bound)"
        # "the gap" is the chosen placement's mean against the optimum of means; the paper's is kept apart
        d["paper_gap_pct"], d["paper_gap_upper_pct"] = d.pop("gap_pct"), d.pop("gap_upper_pct")
        d["gap_pct"] = None
        if noisy is not None:
            d.update(noisy)
        else:
            d["optimum_mean"] = None
        if groups:
            d["sittings"] = [g.to_dict() for g in groups]
            d["sittings_test"] = test
        d.pop("text", None)
        print(json.dumps(d, indent=2))
    else:
        left_out = f"; {excluded} values of cluster workers flagged as differing left out" if excluded else ""
        print(f"source: {where} ({len(values)} {label} values{left_out})")
        if noisy is not None:
            for line in noisy["text"]:
                print(line)
            print()
            print("The paper's estimate, from single values (with measurement noise it bounds the luckiest "
                  "measurement, not a placement's mean):")
        print(est.format_text(label) if est is not None else f"  none: {paper_error}")
        # one sitting is listed too when cluster workers measured it: what they measured on
        if len(groups) > 1 or any(g.worker_grounds for g in groups):
            from ..sittings import describe

            print("sittings of the run (measured; each `assign sample` that measured into it):")
            for line in describe(groups, test):
                print(line)
    return 0


def _opened(args: argparse.Namespace, store):
    """The caller's open store (left open), or the run's database opened read-only for a with block."""
    from contextlib import nullcontext

    from ..store import Store

    return nullcontext(store) if store is not None else Store(args.db, readonly=True)


def read_values(args: argparse.Namespace, store=None) -> tuple[list[float], str, str, int, list]:
    """load_values's (values, label, where, values left out), and a measured run's values by
    sitting ([] for a value file or a modelled run): one open store, and a measured run's values
    read once, so the estimate and the sittings hold the same values.  store: the database, open
    read-only, where the caller has it."""
    if args.csv:
        if args.sitting is not None:
            raise ValueError("--sitting goes with --db, not with --csv")
        return (*load_values(args), [])
    from ..run_sample import sample_top

    with _opened(args, store) as store:
        run = store.run(args.run)
        if run.kind != "measured":
            if args.sitting is not None:
                raise ValueError(f"--sitting: {args.db} run {run.id} is modelled: it has no sittings")
            # the top of the values, all the paper's estimate reads, through the store's value index
            values = sample_top(store, run, args.threshold)
            if values is None:  # a store without it: every value
                _, values = run_values(store, args)
            return values, run.kind, f"{args.db} run {run.id}", store.excluded_count(run.id), []
        from ..sittings import split

        groups = split(store, run.id)
        excluded = store.excluded_count(run.id)
    # the sittings partition the values in draw order
    values = [v for g in groups for v in g.values]
    if not values:
        raise ValueError(f"{args.db} run {run.id} holds no successful measurements yet")
    return values, run.kind, f"{args.db} run {run.id}", excluded, groups


def optimum_section(args: argparse.Namespace, values, store=None) -> dict:
    """The optimum of placement means of the run (or of --sitting's draws), the chosen
    placement and its gap, the cost: JSON keys and the text lines that lead the output.
    values: read_values's (a list, or the top of a modelled run's values); store: as read_values's."""
    from ..evt import EstimateError
    from ..evt.optimum import optimum_of_means
    from ..evt.top import SampleTop
    from ..run_sample import describe_cost, measurement_cost, run_optimum, run_sample, tail_sample
    from ..evt.estimate import _fmt

    with _opened(args, store) as store:
        run = store.run(args.run)
        # only the draws the estimates read, where the store's value index gives them (run_sample.py)
        sample = None if args.sitting is not None else \
            tail_sample(store, run, values if isinstance(values, SampleTop) else None)
        if sample is None:
            sample = run_sample(store, run)
        cost = measurement_cost(store, run)
        chosen = None
        for sid, _, result in store.selections(run.id):
            if result is not None:
                chosen = dict(result["chosen"], selection=sid, certified=result.get("certified"))
        if args.sitting is not None:  # only the draws of the sitting, and the repetitions of those
            keep = {v for v in values}
            mask = [v in keep for v in sample.first.tolist()]
            import numpy as np

            sample.idx, sample.first = sample.idx[np.array(mask)], sample.first[np.array(mask)]
            drawn = set(sample.idx.tolist())
            sample.repeats = [(i, v) for i, v in sample.repeats if i in drawn]
            sample.space_size, sample.orbits = None, None
            chosen = None
        try:
            # the whole run: certified against every placement measured and its searches
            opt = optimum_of_means(sample, args.confidence) if args.sitting is not None else \
                run_optimum(store, run, args.confidence, sample=sample)
        except EstimateError as e:
            return {"optimum_mean": None, "optimum_mean_error": str(e), "chosen": None, "cost": cost,
                    "text": [f"optimum of placement means: none ({e})", "cost: " + describe_cost(cost)]}
    from ..units import value_unit

    unit = value_unit(run.workload, run.params)
    text = opt.format_text(run.kind, unit).splitlines()
    out: dict = {"optimum_mean": opt.to_dict(), "chosen": chosen, "cost": cost}
    if out["optimum_mean"].get("leading"):  # a mean of the run's values: modelled on the model backend
        out["optimum_mean"]["leading"]["kind"] = run.kind
    if chosen is not None:
        from .best import gap_line  # `assign best`'s module imports the searchers: only where a selection was made

        gap = opt.gap_pct(chosen["mean"])
        hi = (100.0 * (opt.ci_high - chosen["ci_low"]) / opt.ci_high
              if opt.ci_high is not None and chosen.get("ci_low") is not None and opt.ci_high != float("inf")
              else None)
        out["gap_pct"], out["gap_pct_high"] = gap, hi
        text.append(f"chosen placement (`assign best`, selection {chosen['selection']}"
                    + ("" if chosen.get("certified") else ", not certified") + f"): "
                    f"{chosen.get('label') or 'draw ' + str(chosen['draw'])}, mean "
                    f"{_fmt(chosen['mean'])} {unit} ({chosen['kind']}, {chosen['rounds']} rounds)")
        if gap is not None:
            text.append("  " + gap_line(gap, hi, "the chosen placement"))
    else:
        out["gap_pct"] = None
        lead = opt.leading
        if lead is not None:
            gap = opt.gap_pct(lead["mean"])
            text.append(f"leading placement (not certified): draw {lead['draw']}, mean {_fmt(lead['mean'])} {unit} "
                        f"of {lead['measurements']} measurements ({run.kind})"
                        + ("" if gap is None else f", {gap:.2f}% below the optimum of means (estimated)" if gap >= 0
                           else f", {-gap:.2f}% above the estimate of the optimum of means (its few measurements "
                                f"include the lucky first value that made it lead)"))
        text.append("  no placement chosen yet: `assign best` chooses the one to deploy by measuring the leading "
                    "placements again")
    text.append("cost: " + describe_cost(cost))
    out["text"] = text
    return out
