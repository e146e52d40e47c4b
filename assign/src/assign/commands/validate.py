"""`assign validate`: the calibrated model against measured placements it was not fitted on."""
from __future__ import annotations

import argparse
import json

from ._args import at_least, figure_file, output_file
from ._options import add_capture_option, add_rules_option, add_workload_choice, rules_arg
from ._save import save, save_figure

# issue 10's goal for the model against measurements (also in the figures' lines)
GOAL_MEDIAN_PCT, GOAL_P90_PCT = 10.0, 15.0

MIN_N = 5
TOP_POOL = 1000  # candidates the model ranks for --top
# the window of a file from before calibrate recorded its own (calibration.placement_packets): the
# fixed default of both commands then
OLD_WINDOW_PACKETS = 100_000
at_least_n = at_least(MIN_N, "{text!r}: validation needs at least " + str(MIN_N)
                      + " placements (a rank correlation and a p90 of fewer mean nothing)")


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("validate", help="compare the model's predictions with measured placements",
                       description="Measure --n random placements of 1 to K co-located instances on this machine (K: "
                                   "the calibration's --max-instances) "
                                   "(dpdk, measured; none of those assign calibrate used) and compare them with "
                                   "the model's predictions (modelled, noise-free) with --model-params: median "
                                   "and 90th-percentile absolute error in percent, Spearman rank correlation "
                                   "(scipy), and whether the model's top 10 holds the measured best.")
    add_workload_choice(p)
    p.add_argument("--model-params", required=True, metavar="FILE", help="parameters from assign calibrate")
    p.add_argument("--n", type=at_least_n, required=True, help=f"placements to measure (at least {MIN_N})")
    p.add_argument("--json", type=output_file, metavar="FILE", help="write the figures and every placement as JSON")
    p.add_argument("--plot", type=figure_file, metavar="FILE", help="predicted-vs-measured figure")
    p.add_argument("--packets", type=at_least(1), metavar="N",
                   help="window of each placement: N packets per instance (default: the calibration's, from "
                        f"--model-params; {OLD_WINDOW_PACKETS:,} for a file that does not say)")
    p.add_argument("--reps", type=at_least(1), default=3, metavar="K",
                   help="measure every placement once per round, K rounds, and compare the model with "
                        "each one's median; the rounds' spread is printed as the measurement noise the "
                        "errors include, and the noise floor it sets (default: 3)")
    p.add_argument("--drift-reference", nargs="?", const="fused", choices=("none", "fused", "both"), default="both",
                   metavar="both|fused|none",
                   help="measure a reference placement (one instance fused on each of up to K contexts) "
                        "before the first placement and after every one, and compare the model also with "
                        "each placement scaled by the calibration's median reference (from --model-params, "
                        "when calibrate used --drift-reference; else this run's) over the references around "
                        "it (drift-corrected, printed beside the raw figures; doubles the measurements); "
                        "--drift-reference both: also a crossing one (each instance split over two contexts) "
                        "for the placements with a split instance, scaled likewise (triples them). "
                        "With --reps 2 or more, every read of the rounds (raw, the fused reference alone, both) "
                        "is printed with its noise over rounds, and the steadiest is named: chosen by the "
                        "repeated measurements alone (JSON: drift_corrected.reads, steadiest_read). Default: both, "
                        "the protocol that validated best (assign/CALIBRATE.md); none: no reference")
    p.add_argument("--top", type=at_least(0), default=5, metavar="K",
                   help="also measure, in the same rounds, the model's K best-ranked placements of "
                        f"{TOP_POOL:,} other random ones (all of them where there are fewer), and report their "
                        "errors apart (JSON: model_top): "
                        "a random sample rarely holds the placements the model ranks first, which are the "
                        "ones a guided search measures (default: 5)")
    p.add_argument("--build", metavar="DIR", help="Meson build of the apps (default: $PIPEPLACE_BUILD or build/)")
    add_rules_option(p)
    add_capture_option(p)
    return p


def compare(predicted, measured) -> dict:
    """The validation figures of paired predictions and measurements."""
    import numpy as np
    from scipy.stats import spearmanr

    pr = np.asarray(predicted, dtype=float)
    me = np.asarray(measured, dtype=float)
    err = np.abs(pr / me - 1.0) * 100.0
    top = np.argsort(-pr)[:10]
    rho = float(spearmanr(pr, me)[0]) if me.size > 1 else float("nan")
    return {"n": int(me.size), "median_abs_err_pct": float(np.median(err)),
            "p90_abs_err_pct": float(np.percentile(err, 90)), "spearman": float(rho),
            "top10_holds_best": bool(int(np.argmax(me)) in set(top.tolist()))}


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import numpy as np

    if args.drift_reference == "none":
        args.drift_reference = None

    from ..backends.base import BackendError
    from ..backends.dpdk.options import DpdkOptions, capture_mismatch, rules_mismatch
    from ..backends.model import load_params
    from ..characterize.fit import MAX_INSTANCES, VAL_SEED, placement_space, predict, random_placements
    from ..characterize.meter import PlacementMeter
    from ..characterize.rounds import (crossing_reference_placement, measure_rounds, noise_floor, noise_of,
                                       reference_placement)
    from ..characterize.trust import stored_warnings
    from ..topology import get_machine
    from ..workloads import Workload

    Workload(args.workload, 1)
    topo = get_machine("local")
    load_params(args.workload, args.model_params, topo)  # refuses another machine's or workload's file
    with open(args.model_params) as f:
        doc = json.load(f)
    params = doc["workloads"][args.workload]
    cal_warnings = stored_warnings(doc.get("calibration", {}))  # load_params printed them

    def calibration_count(key: str, default: int | None) -> int | None:
        """A count the calibration file records, refused unless a positive integer."""
        v = doc.get("calibration", {}).get(key, default)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"--model-params {args.model_params}: calibration.{key} is {v!r}, "
                             "not a positive integer")
        return v

    cal_packets = calibration_count("placement_packets", None)
    packets = args.packets or cal_packets or OLD_WINDOW_PACKETS
    print(f"window: {packets:,} packets per instance ("
          + ("--packets" if args.packets else f"the calibration's, {args.model_params}" if cal_packets
             else f"the default: {args.model_params} does not say which window calibrate measured")
          + (f"; the calibration measured {cal_packets:,}: a window's start is a larger share of a shorter one, "
             "and the drift reference's level is the calibration's" if args.packets and cal_packets
             and args.packets != cal_packets else "") + ")")
    # the calibration's captures unless --capture-packets says otherwise (then they must agree)
    cal_capture = doc.get("calibrated_for", {}).get("capture_packets")
    if cal_capture is not None and (not isinstance(cal_capture, int) or isinstance(cal_capture, bool)
                                    or cal_capture < 1):
        raise ValueError(f"--model-params {args.model_params}: calibrated_for.capture_packets is {cal_capture!r}, "
                         "not a positive integer")
    capture = args.capture_packets if args.capture_packets is not None else cal_capture
    why = capture_mismatch(cal_capture, capture)
    if why:
        raise ValueError(f"--model-params {args.model_params} was calibrated for another capture size: {why}")
    opts = DpdkOptions(build_dir=Path(args.build) if args.build else None, packets=packets, warmup=0.0,
                       rules=rules_arg(args), capture_packets=capture)
    if capture is not None:
        print(f"captures of {capture:,} packets per instance (" + ("--capture-packets" if args.capture_packets
                                                                   else f"the calibration's, {args.model_params}")
              + ")")
    why = rules_mismatch(doc.get("calibrated_for", {}).get("rules"), opts.rules_identity())
    if why:
        raise ValueError(f"--model-params {args.model_params} was calibrated for another rule set: {why}")
    used = {(p["instances"], tuple(p["contexts"])) for p in doc.get("calibration", {}).get("placements", [])}
    # the range the model was fitted on (files before --max-instances: 4)
    kmax = calibration_count("max_instances", MAX_INSTANCES)
    print(f"placements of 1 to {kmax} instance(s), "
          + (f"as calibrated ({args.model_params})" if "max_instances" in doc.get("calibration", {})
             else f"the default: {args.model_params} predates calibrate --max-instances"))
    placements = random_placements(topo, VAL_SEED, args.n, skip=used, max_instances=kmax)
    n_random = len(placements)
    if args.top:
        # the model's best of other random placements, measured in the same rounds, reported apart
        # all the placements left where there are fewer than TOP_POOL (2 contexts, 1 to 3 instances: 584)
        taken = used | set(placements)
        n_pool = min(TOP_POOL, placement_space(topo, kmax) - len(taken))
        if n_pool > 0:
            pool = random_placements(topo, VAL_SEED + 1, n_pool, skip=taken, max_instances=kmax)
            pool_pred = predict(topo, args.workload, params, pool)
            placements = placements + [pool[i] for i in np.argsort(-pool_pred, kind="stable")[:args.top]]
    predicted = predict(topo, args.workload, params, placements)
    meter = PlacementMeter(topo, args.workload, opts)
    reference = reference_placement(topo, kmax) if args.drift_reference else None
    crossing = crossing_reference_placement(topo, kmax) if args.drift_reference == "both" else None
    cal_drift = doc.get("calibration", {}).get("drift", {})

    def level_of(ref, key: str, name: str) -> tuple[float | None, str]:
        """The scale the model was fitted on (the calibration's median of the same reference:
        calibration and validation run minutes apart), or this run's median."""
        cal = cal_drift.get(key)
        if ref is not None and cal and (cal["instances"], tuple(cal["contexts"])) == ref:
            lv = float(np.median(cal["measured_pps"]))
            return lv, f"the calibration's median {name} ({lv:,.0f} packets/s, {args.model_params})"
        return None, f"this run's median {name}"

    level, level_from = level_of(reference, "reference", "reference")
    xlevel, xlevel_from = level_of(crossing, "crossing_reference", "crossing reference")
    if crossing is not None:
        level_from += f" (placements with a split instance: {xlevel_from})"
    try:
        rounds = measure_rounds(placements, meter, args.reps, print, "placement", reference, predicted,
                                tolerate_failures=True, level=level, crossing=crossing, crossing_level=xlevel)
    finally:
        meter.close()
    no_huge = sorted(meter.no_hugepages)
    top = model_top(placements, predicted, rounds, n_random, n_pool, meter.task_cycles) if args.top else None
    placements, predicted = placements[:n_random], predicted[:n_random]
    kept = [j for j, v in enumerate(rounds.raw[:n_random]) if v]
    failed = [{"instances": k, "contexts": list(ctx), "reason": rounds.failed.get(j, "")}
              for j, (k, ctx) in enumerate(placements) if not rounds.raw[j]]
    need = max(3, (len(placements) + 1) // 2)
    if len(kept) < need:
        raise BackendError(f"only {len(kept)} of {len(placements)} placements were measured (at least "
                           f"{need} needed); first failure: {failed[0]['reason'] if failed else '-'}")
    reps = [rounds.raw[j] for j in kept]
    measured = [float(np.median(v)) for v in reps]
    placements = [placements[j] for j in kept]
    predicted = predicted[kept]
    figs = compare(predicted, measured)
    noise = noise_of(reps)
    print(f"{args.workload}: n {figs['n']}, median abs error {figs['median_abs_err_pct']:.1f}% (goal <= 10), "
          f"p90 abs error {figs['p90_abs_err_pct']:.1f}% (goal <= 15), Spearman {figs['spearman']:.3f} "
          f"(goal >= 0.8), model's top 10 holds the measured best: {'yes' if figs['top10_holds_best'] else 'no'} "
          f"(errors: modelled vs measured)")
    if noise is not None:
        print(f"measurement noise: median CV of a placement over {args.reps} rounds {noise:.1f}% (measured); "
              f"the errors above include it")
    floor = noise_floor(reps)
    if floor is not None:
        print(noise_floor_line(floor))
        print(explained_line(figs, floor, "raw"))
    char_kept = doc.get("calibration", {}).get("characterization", {})
    for key, kernel in (("steadiness_cv_pct", "a fixed integer kernel"),
                        ("steadiness_memory_cv_pct", "dependent loads over 64 MiB (the memory side)")):
        if char_kept.get(key):
            print("the contexts' own steadiness when characterized: CV "
                  + ", ".join(f"{v:.1f}% (context {c})" for c, v in char_kept[key].items())
                  + f" of {kernel} over 100 ms windows (measured): on a shared or virtual machine "
                  "that moves under every figure here")
    if char_kept.get("steadiness_handoff_cv_pct"):
        print("the handoff between contexts when characterized: CV "
              + ", ".join(f"{v:.1f}% (contexts {p})" for p, v in char_kept["steadiness_handoff_cv_pct"].items())
              + " of one cache line passed back and forth over 100 ms windows (measured): a placement that "
              "splits an instance over contexts moves with it")
    for line in largest_errors(placements, predicted, measured, meter.task_cycles):
        print(line)
    for note in (meter.retry_note(), meter.hugepage_warning()):
        if note:
            print(note)
    if top is not None:
        top["random_best_measured_pps"] = max(measured)
        print(f"the model's top {args.top} of {top['pool']:,} other random placements: "
              + (f"median abs error {top['median_abs_err_pct']:.1f}%, best {top['best_measured_pps']:,.0f} "
                 f"packets/s against the random sample's best {max(measured):,.0f} (measured; errors: modelled "
                 f"vs measured, not in the figures above)" if top["n"] else "none measured"))
    drift = None
    if rounds.corrected is not None:
        creps = [rounds.corrected[j] for j in kept]
        cfigs = compare(predicted, [float(np.median(v)) for v in creps])
        cnoise = noise_of(creps)
        drift = {**cfigs, "noise_cv_pct_median": cnoise, "scaled_to": level_from,
                 "reference": {"instances": reference[0], "contexts": list(reference[1]),
                               "measured_pps": rounds.reference},
                 **({"crossing_reference": {"instances": crossing[0], "contexts": list(crossing[1]),
                                            "measured_pps": rounds.crossing_reference}} if crossing else {})}
        print(f"drift reference: {reference[0]} instance(s) on {list(reference[1])}, measured "
              f"{len(rounds.reference)} times, {min(rounds.reference):,.0f} to {max(rounds.reference):,.0f} "
              f"packets/s (measured)")
        if crossing:
            print(f"crossing reference: {crossing[0]} instance(s) on {list(crossing[1])}, measured "
                  f"{len(rounds.crossing_reference)} times, {min(rounds.crossing_reference):,.0f} to "
                  f"{max(rounds.crossing_reference):,.0f} packets/s (measured); it corrects "
                  f"{sum(b == 'crossing' for b in rounds.corrected_by[:n_random])} of the {n_random} placements")
        print(f"{args.workload}, drift-corrected: median abs error {cfigs['median_abs_err_pct']:.1f}% (goal <= 10), "
              f"p90 abs error {cfigs['p90_abs_err_pct']:.1f}% (goal <= 15), Spearman {cfigs['spearman']:.3f} "
              f"(goal >= 0.8), model's top 10 holds the measured best: "
              f"{'yes' if cfigs['top10_holds_best'] else 'no'} (modelled vs measured, each measurement scaled by "
              f"{level_from} over the references just before and after it)"
              + (f"; noise over rounds {cnoise:.1f}% (raw {noise:.1f}%)" if cnoise is not None else ""))
        # a correction adds its reference's own movement: on a machine steadier than the reference
        # during the run, the raw figures are the better read (assign/notes/2026-11-24-drift-references.md, val23)
        drift["noisier_than_raw"] = cnoise is not None and noise is not None and cnoise > noise
        if drift["noisier_than_raw"]:
            print(f"the drift correction made the rounds noisier ({cnoise:.1f}% against {noise:.1f}% raw): the "
                  "machine was steadier than the reference(s) during this run, and the raw figures are the "
                  "better read")
        # every read of the same rounds, and the steadiest over rounds: a choice made from the repeated
        # measurements alone (no model figure enters it), so it does not flatter the model
        reads = {"raw": reps, ("both references" if crossing else "fused reference"): creps}
        if rounds.corrected_fused is not None:
            reads["fused reference"] = [rounds.corrected_fused[j] for j in kept]
        drift["reads"] = {name: {**compare(predicted, [float(np.median(v)) for v in r]),
                                 "noise_cv_pct_median": noise_of(r), "noise_floor": noise_floor(r)}
                          for name, r in reads.items()}
        noisy = {name: d["noise_cv_pct_median"] for name, d in drift["reads"].items()}
        drift["steadiest_read"] = (min(noisy, key=lambda k: noisy[k])
                                   if all(v is not None for v in noisy.values()) else None)
        if drift["steadiest_read"] is not None:
            print("the same rounds read three ways" if len(reads) == 3 else "the same rounds read two ways",
                  "(noise over rounds, measured; errors modelled vs measured): "
                  + "; ".join(f"{name}: noise {d['noise_cv_pct_median']:.1f}%, median {d['median_abs_err_pct']:.1f}%, "
                              f"p90 {d['p90_abs_err_pct']:.1f}%, Spearman {d['spearman']:.3f}, noise floor "
                              f"{d['noise_floor']['median_abs_err_pct']:.1f}% / {d['noise_floor']['p90_abs_err_pct']:.1f}%"
                              for name, d in sorted(drift["reads"].items(), key=lambda kv: noisy[kv[0]])))
            print(f"steadiest over rounds: {drift['steadiest_read']} (chosen by the repeated measurements alone, "
                  "no model figure)")
            sr = drift["reads"][drift["steadiest_read"]]
            if sr["noise_floor"] is not None:
                print(explained_line(sr, sr["noise_floor"], drift["steadiest_read"]))
        if top is not None and top.get("corrected_median_abs_err_pct") is not None:
            print(f"the model's top {args.top}, drift-corrected: median abs error "
                  f"{top['corrected_median_abs_err_pct']:.1f}% (raw {top['median_abs_err_pct']:.1f}%; not in the "
                  "figures above)")
    rc = 0
    if args.json:
        doc = {"workload": args.workload, "model_params": args.model_params, **figs,
               "kind": "modelled vs measured", "not_measured": failed, "reps": args.reps, "packets": packets,
               "max_instances": kmax,
               "calibration_warnings": cal_warnings,
               "noise_cv_pct_median": noise,
               "noise_floor": floor,
               # instance counts measured on 4 KiB pages (the --no-huge fallback)
               "no_hugepages_instances": no_huge,
               "hugepage_retries": meter.hugepage_retries,
               # what those placements first measured on 4 KiB pages (not used): kept, never dropped
               "discarded_measurements": meter.discarded,
               **({"drift_corrected": drift} if drift is not None else {}),
               **({"model_top": top} if top is not None else {}),
               "placements": [{"instances": k, "contexts": list(c), "measured_pps": m, "modelled_pps": float(p),
                               "measured_reps_pps": r,
                               # each task's cycles per packet (the median over the rounds, measured)
                               "task_cycles_per_packet": meter.task_cycles(k, c),
                               **({"corrected_reps_pps": rounds.corrected[j]} if drift is not None else {}),
                               **({"corrected_by": rounds.corrected_by[j]} if crossing else {})}
                              for (k, c), m, p, r, j in zip(placements, measured, predicted, reps, kept)]}
        if not save(args.json, lambda f: json.dump(doc, f, indent=2), "validation"):
            rc = 1
        else:
            print(f"written to {args.json}")
    if args.plot:
        if save_figure(lambda path: plot(predicted, measured, figs, args.workload, path), args.plot):
            print(f"figure written to {args.plot}")
        else:
            rc = 1
    return rc


def explained_line(figs: dict, floor: dict, read: str) -> str:
    """How much of the errors the machine's own noise explains: the noise floor against the errors."""
    def share(err: float, fl: float) -> str:
        return "all" if fl >= err else f"{100 * fl / err:.0f}%" if err > 0 else "-"
    return (f"summary ({read}): of the median abs error {figs['median_abs_err_pct']:.1f}% the machine's own noise "
            f"explains {share(figs['median_abs_err_pct'], floor['median_abs_err_pct'])} "
            f"({floor['median_abs_err_pct']:.1f}%), of the p90 {figs['p90_abs_err_pct']:.1f}% "
            f"{share(figs['p90_abs_err_pct'], floor['p90_abs_err_pct'])} ({floor['p90_abs_err_pct']:.1f}%); "
            f"the rest is the model's (estimated)")


def noise_floor_line(floor: dict) -> str:
    """What the noise floor says, and whether the goal can be judged above it."""
    line = (f"noise floor: a model exact for every placement would show median abs error "
            f"{floor['median_abs_err_pct']:.1f}%, p90 {floor['p90_abs_err_pct']:.1f}% from these rounds' noise "
            f"alone (estimated: each placement's rounds as normal noise around its level, "
            f"{floor['simulations']:,} simulations)")
    if floor["median_abs_err_pct"] > GOAL_MEDIAN_PCT or floor["p90_abs_err_pct"] > GOAL_P90_PCT:
        line += (f"; above the goal (median <= {GOAL_MEDIAN_PCT:g}, p90 <= {GOAL_P90_PCT:g}): this run cannot "
                 "judge the model, measure on a steadier machine or with more --reps")
    return line


LARGEST_ERRORS = 3  # placements whose tasks validate prints


def largest_errors(placements, predicted, measured, task_cycles, n: int = LARGEST_ERRORS) -> list[str]:
    """Lines for the n placements the model missed most, each with every task's cycles per packet
    (measured) summed per context: the runtime serves a context's tasks in turn, so the largest
    sum bounds every instance with a task there, and the tasks say which cost the model got wrong."""
    from ..characterize.meter import tasks_by_context

    err = [float(p) / m - 1.0 for p, m in zip(predicted, measured)]
    worst = sorted(range(len(err)), key=lambda j: -abs(err[j]))[:n]
    lines = []
    for j in worst:
        k, ctx = placements[j]
        tasks = task_cycles(k, ctx)
        per = ""
        if tasks:
            per = "; " + "; ".join(
                f"context {c}: " + " + ".join(f"{t['task']} {t['cycles_per_packet']:.0f}" for t in ts)
                + (f" = {sum(t['cycles_per_packet'] for t in ts):.0f}" if len(ts) > 1 else "")
                for c, ts in tasks_by_context(tasks).items())
        lines.append(f"  {k} instance(s) on {list(ctx)}: modelled {float(predicted[j]):,.0f}, measured "
                     f"{measured[j]:,.0f} packets/s ({100 * err[j]:+.1f}%){per}")
    if not lines:
        return []
    return [f"the {len(lines)} largest errors, with each task's cycles per packet (measured, the median over the "
            "rounds; a context serves its tasks in turn, so its sum bounds every instance with a task there):"] + lines


def model_top(placements, predicted, rounds, n_random: int, pool: int, task_cycles) -> dict:
    """The --top placements' figures (every one after the first n_random):
    modelled, measured (median of its rounds), its error; failures listed."""
    import numpy as np

    rows, failed = [], []
    for j in range(n_random, len(placements)):
        k, ctx = placements[j]
        if not rounds.raw[j]:
            failed.append({"instances": k, "contexts": list(ctx), "reason": rounds.failed.get(j, "")})
            continue
        m = float(np.median(rounds.raw[j]))
        row = {"instances": k, "contexts": list(ctx), "modelled_pps": float(predicted[j]), "measured_pps": m,
               "abs_err_pct": abs(float(predicted[j]) / m - 1.0) * 100.0, "measured_reps_pps": rounds.raw[j],
               "task_cycles_per_packet": task_cycles(k, ctx)}
        if rounds.corrected is not None:
            c = float(np.median(rounds.corrected[j]))
            row.update({"corrected_reps_pps": rounds.corrected[j], "corrected_pps": c,
                        "corrected_abs_err_pct": abs(float(predicted[j]) / c - 1.0) * 100.0})
        rows.append(row)
    errs = [r["abs_err_pct"] for r in rows]
    cerrs = [r["corrected_abs_err_pct"] for r in rows if "corrected_abs_err_pct" in r]
    return {"k": len(placements) - n_random, "pool": pool, "n": len(rows),
            "median_abs_err_pct": float(np.median(errs)) if errs else None,
            **({"corrected_median_abs_err_pct": float(np.median(cerrs)) if cerrs else None}
               if rounds.corrected is not None else {}),
            "best_measured_pps": max((r["measured_pps"] for r in rows), default=None),
            "placements": rows, "not_measured": failed}


def plot(predicted, measured, figs: dict, workload: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot(measured, predicted, "o", ms=4, label="placement")
    lo, hi = min(min(measured), min(predicted)), max(max(measured), max(predicted))
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="predicted = measured")
    ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="C2", alpha=0.15, label="+-10%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("throughput, packets/s (measured)")
    ax.set_ylabel("throughput, packets/s (modelled)")
    ax.set_title(f"{workload}: median err {figs['median_abs_err_pct']:.1f}%, "
                 f"Spearman {figs['spearman']:.2f}")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
