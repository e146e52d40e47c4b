"""`assign characterize`: what a workload costs on this machine, measured.

Timer floor, cycles per packet per role (alone, repeated to a 95% CI
target), the CPU-time breakdown by category, the slowdown of each role by
sharing level and co-runner, and the pressure point (see
characterize/harness.py for the protocol).  Needs a build made with
`-Dprofile=true` (tools/setup.sh --asan makes build-profile/)."""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from ._args import at_least, figure_file, output_file, positive_int, positive_number
from ._options import add_capture_option, add_rules_option, add_workload_choice, rules_arg
from ._save import save, save_figure

at_least_two = at_least(2, "{text!r}: a confidence interval needs at least 2 repetitions")


def default_profile_build() -> Path:
    from ..backends.dpdk.options import REPO

    return Path(os.environ.get("PIPEPLACE_PROFILE_BUILD", REPO / "build-profile")).resolve()


def add_characterize_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("characterization runs (dpdk, one instance, measured)")
    g.add_argument("--build", metavar="DIR",
                   help="Meson build configured with -Dprofile=true (default: $PIPEPLACE_PROFILE_BUILD or "
                        "build-profile/)")
    g.add_argument("--packets", type=positive_int, default=200_000, metavar="N",
                   help="window of each run: N packets (default: 200,000)")
    g.add_argument("--min-reps", type=at_least_two, default=3, help="baseline repetitions at least (default: 3)")
    g.add_argument("--max-reps", type=at_least_two, default=10,
                   help="baseline repetitions at most, when the CI target is not met (default: 10)")
    g.add_argument("--target-ci", type=positive_number, default=1.0, metavar="PCT",
                   help="stop repeating when every role's 95%% CI half-width is <= PCT%% of its mean (default: 1)")
    add_rules_option(g)
    add_capture_option(g)


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("characterize", help="measure what a workload costs here: cycles/packet, breakdown, "
                                            "slowdown by sharing level, pressure point",
                       description="Characterize a workload on this machine (dpdk, one instance, all figures "
                                   "measured): the timer floor (TSC rate, cost of a TSC read, of a loop "
                                   "iteration, of a profile mark); how steady each context is (a compute and a "
                                   "memory kernel over 100 ms windows) and the handoff between the first "
                                   "context and each other one (a cache line passed back and forth); for each role R, P, T the work cycles per "
                                   "packet alone, repeated until the 95% CI half-width meets --target-ci or "
                                   "--max-reps; the CPU time of each task by category (empty poll, receive, "
                                   "ring, process, transmit, back-pressure wait) per packet; the slowdown of "
                                   "each role when it shares each level of the topology (pu: the same context "
                                   "by co-location; the others: a context beside it) with each other role and "
                                   "with a memory-heavy and a compute-heavy stressor (tools/stressor.c); and "
                                   "the pressure point. Needs a build configured with -Dprofile=true.")
    add_workload_choice(p)
    p.add_argument("--json", type=output_file, metavar="FILE",
                   help="write the characterization as JSON (input of assign calibrate)")
    p.add_argument("--plot", type=figure_file, metavar="FILE", help="figure: breakdown per role and slowdowns by level")
    add_characterize_options(p)
    return p


def settings_of(args: argparse.Namespace):
    from ..characterize.harness import Settings

    if args.min_reps > args.max_reps:
        raise ValueError(f"--min-reps {args.min_reps} is more than --max-reps {args.max_reps}")
    build = Path(args.build).resolve() if args.build else default_profile_build()
    return Settings(build=build, packets=args.packets, min_reps=args.min_reps, max_reps=args.max_reps,
                    target_ci_pct=args.target_ci, rules=rules_arg(args), capture_packets=args.capture_packets)


def characterize(args: argparse.Namespace) -> dict:
    from ..characterize.harness import Harness
    from ..topology import get_machine
    from ..workloads import Workload

    Workload(args.workload, 1)  # unknown workload: refused before anything runs
    h = Harness(get_machine("local"), args.workload, settings_of(args))
    try:
        return h.characterize()
    finally:
        h.close()


def run(args: argparse.Namespace) -> int:
    result = characterize(args)
    rc = 0
    if args.json:
        if save(args.json, lambda f: json.dump(result, f, indent=2), "characterization"):
            print(f"characterization written to {args.json}")
        else:
            rc = 1
    if args.plot:
        if save_figure(lambda path: plot(result, path), args.plot):
            print(f"figure written to {args.plot}")
        else:
            rc = 1
    return rc


def plot(result: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..characterize.harness import CATEGORIES

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    roles = list(result["roles"])
    bottom = [0.0] * len(roles)
    for i, c in enumerate(CATEGORIES):
        v = [result["roles"][r]["breakdown"][c] for r in roles]
        ax1.bar(roles, v, bottom=bottom, label=c, color=f"C{i}")
        bottom = [b + x for b, x in zip(bottom, v)]
    ax1.set_ylabel("TSC cycles per packet (measured)")
    ax1.set_title(f"{result['workload']}: CPU time by category (measured)")
    ax1.legend(fontsize="small")
    labels, values = [], []
    for level, pairs in result["sharing"].items():
        for k, v in pairs.items():
            labels.append(f"{level}:{k}")
            values.append(v)
    ax2.barh(labels, values, color="C0")
    ax2.axvline(1.0, color="k", lw=0.8)
    ax2.set_xlabel("slowdown factor (measured ratio)")
    ax2.set_title(f"sharing; pressure point: {result['pressure_point']}")
    ax2.tick_params(axis="y", labelsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
