"""Option groups several subcommands share (machine, workload, backend,
database, the dpdk backend's protocol), and turning them into the objects
they name.  The parser of every command is built at each start of
`assign`, so what this imports at module level stays light (no scipy, no
matplotlib)."""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from ..backends.dpdk.options import DEFAULT_WARMUP_S, PAPER_PACKETS, RUNNERS, SLOWEST_PPS, TIMEOUT_MARGIN_S, TRAFFIC
from ..backends.dpdk.tgen import default_tgen_contexts
from ..backends.registry import BACKENDS
from ..topology import MACHINES, format_contexts
from ..workloads import DEFAULT_INSTANCES, PROGRAMS, WORKLOADS, DefaultInstances
from ._args import nonneg_int, nonneg_number, number, positive_int, positive_number

if TYPE_CHECKING:
    from pathlib import Path

    from ..backends.dpdk.options import DpdkOptions
    from ..topology import Topology


def add_machine(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--machine", default="local", metavar="NAME",
                   help=f"machine: {', '.join(MACHINES)} (default: local, this host through hwloc; "
                        f"ultrasparc-t2 is 'pack:1 core:8 group:2 pu:4')")
    g.add_argument("--topology", metavar="SYNTHETIC",
                   help='any hwloc synthetic topology, e.g. "pack:2 core:4 pu:2"')


class WorkloadFileAction(argparse.Action):
    """--workload-file FILE: read, check and register the file's workload, and
    name it as --workload would; a bad file is a usage error (exit 2) naming
    the file, the key and the value."""

    def __call__(self, parser, namespace, value, option_string=None) -> None:
        from ..workloads import WorkloadError, load_workload_file

        try:
            spec = load_workload_file(value)
        except WorkloadError as e:
            parser.error(str(e))
        setattr(namespace, self.dest, value)
        namespace.workload = spec.name


def add_workload_choice(p: argparse.ArgumentParser, help: str | None = None) -> None:
    """--workload NAME or --workload-file FILE, one of them required."""
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--workload", metavar="NAME", help=help or f"a packaged workload: {', '.join(WORKLOADS)}; "
                                                              f"programs we did not write: {', '.join(PROGRAMS)}")
    g.add_argument("--workload-file", metavar="FILE", action=WorkloadFileAction,
                   help="a workload of your own: a TOML file naming the app, its options, roles, traffic and "
                        "value (assign/WORKLOADS.md)")


def add_workload(p: argparse.ArgumentParser, instances_default: int = DEFAULT_INSTANCES) -> None:
    add_workload_choice(p)
    p.add_argument("--instances", type=positive_int, default=DefaultInstances(instances_default),
                   help=f"app instances, 3 tasks (R, P, T) each (default: {instances_default}; a program's "
                        f"workload has the tasks its file names, and no instances)")
    p.add_argument("--allow-colocate", action="store_true",
                   help="let several tasks share a hardware context (draws keep collisions)")


def add_backend(p: argparse.ArgumentParser, noise_help: str) -> None:
    p.add_argument("--backend", default=None, metavar="NAME",
                   help=f"{' or '.join(BACKENDS)} (default: dpdk on --machine local: runs the real app with "
                        f"each placement, figures 'measured'; model elsewhere: a performance predictor, figures "
                        f"'modelled')")
    p.add_argument("--seed", type=nonneg_int, default=1,
                   help="run seed: draw i depends only on (seed, i) (default: 1)")
    p.add_argument("--noise", type=number, default=None, metavar="SD", help=noise_help)
    p.add_argument("--model-params", metavar="FILE",
                   help="model parameter file (default: the packaged one, see assign/MODEL.md)")


def add_db(p: argparse.ArgumentParser, *, run: bool = True) -> None:
    p.add_argument("--db", required=True, metavar="FILE", help="SQLite results database")
    if run:
        p.add_argument("--run", type=positive_int, metavar="ID",
                       help="run in the database (needed when it holds several)")


def add_dpdk_options(p: argparse.ArgumentParser, *, contexts: bool = True) -> None:
    """The options of the dpdk backend, as one argument group."""
    g = p.add_argument_group("dpdk backend (runs the real app; figures are measured)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--packets", type=positive_int, metavar="N",
                   help=f"window: N packets per instance (default: {PAPER_PACKETS:,}, the paper's)")
    w.add_argument("--duration", type=positive_number, metavar="S",
                   help="window: S seconds instead of a packet count")
    g.add_argument("--warmup", type=nonneg_number, default=None, metavar="S",
                   help=f"seconds run before the window, not measured (default: {DEFAULT_WARMUP_S} with --duration "
                        f"or --traffic tgen; 0 with --packets, whose count starts with the run, so a warm-up "
                        f"shortens that window)")
    g.add_argument("--timeout", type=positive_number, metavar="S",
                   help=f"an attempt with no result after S seconds is killed and counts as hung (default: "
                        f"{TIMEOUT_MARGIN_S:g} s + warm-up + the window at {SLOWEST_PPS:,} packets/s per "
                        f"instance, or 3 x --duration)")
    g.add_argument("--runner", choices=RUNNERS, default="auto",
                   help="serve: one persistent app process re-pinned per assignment; process: one app process "
                        "per assignment (default: auto, serve when the app supports --serve)")
    g.add_argument("--build", metavar="DIR", help="Meson build with the apps (default: $PIPEPLACE_BUILD or build/)")
    add_rules_option(g)
    add_capture_option(g)
    if contexts:
        g.add_argument("--contexts", metavar="LIST",
                       help="hardware contexts (PU os_index) tasks may use, e.g. 0-1 or 2,4-7; leave out the "
                            "ones that run the traffic source or DPDK's main lcore (default: all; the embedded "
                            "pcap replay runs inside R and the main lcore sleeps, so neither holds one; with "
                            "--traffic tgen: all but the generator's)")
        g.add_argument("--traffic", choices=TRAFFIC, default="pcap",
                       help="traffic source: pcap = embedded capture replay from memory (net_pcap, inside R); "
                            "tgen = the traffic generator pp-tgen, a second DPDK process on --tgen-contexts, "
                            "one per sample with the serve runner (the app keeps the link up between "
                            "placements; windows are the app's own), sending at --rate max with back-pressure "
                            "over net_memif, one queue per instance; with --runner process one generator per "
                            "assignment sending the window's packets (--packets only); veth = pp-tgen through "
                            "veth pairs in network namespaces, the app attached to kernel interfaces "
                            "(assign.vethbed; root, ipfwd, one instance) (default: pcap)")
        g.add_argument("--tgen-contexts", metavar="LIST",
                       help="with --traffic tgen: the contexts pp-tgen runs on, excluded from the sampling space "
                            "(default: the highest context, here "
                            f"{format_contexts(default_tgen_contexts())}); --contexts may not overlap them")


def add_rules_option(g) -> None:
    """--rules FILE: the ahocorasick workload's rule set (the app loads it; its traffic plants its keywords)."""
    g.add_argument("--rules", metavar="FILE",
                   help="ahocorasick: the Snort rule set the app loads and its default traffic plants keywords "
                        "from; part of the run's identity, with the file's SHA-256 (default: $PIPEPLACE_RULES "
                        "where set, else the app's own, ../shared/data/snort/community.rules beside the source "
                        "tree)")


def add_capture_option(g) -> None:
    """--capture-packets N: the packets of each instance's replayed capture."""
    g.add_argument("--capture-packets", type=positive_int, metavar="N",
                   help="packets in each instance's generated capture, which the pcap replay (and pp-tgen, for "
                        "the apps other than ipfwd) sends in a loop; part of the run's identity (default: the "
                        "workload's generator's: ipfwd-l1 4,096, ipfwd-mem 1,048,576, ahocorasick and analyzer "
                        "16,384, stateful 32,768). R copies every frame out of the capture, so one larger than "
                        "the caches puts memory misses on R, and on R tasks sharing a context, that a NIC's DMA "
                        "would not (measured: assign/notes/2026-11-26-capture-footprint.md)")


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Everything that opens a run to sample into (sample, iterate)."""
    from ..repeats import DEFAULT_REPEAT_EVERY

    add_machine(p)
    add_workload(p)
    add_backend(p, "model: relative measurement noise, sd (default: the workload's, see MODEL.md)")
    add_dpdk_options(p)
    add_db(p)
    p.add_argument("--repeat-every", type=nonneg_int, default=DEFAULT_REPEAT_EVERY, metavar="K",
                   help=f"after every K successful draws, measure a leading placement again: the run's noise "
                        f"figure and the exact means the optimum of means needs (default: {DEFAULT_REPEAT_EVERY}, "
                        f"i.e. {100 / (DEFAULT_REPEAT_EVERY + 1):.1f}%% of the measurements; 0: none, and no "
                        f"estimate of the optimum of means)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def topology_of(args: argparse.Namespace) -> Topology:
    """--machine / --topology as a Topology."""
    from ..topology import get_machine

    return get_machine(None if args.topology else args.machine, args.topology)


def _traffic_args(args: argparse.Namespace) -> tuple[str, list[int] | None]:
    from ..topology import parse_contexts

    traffic = getattr(args, "traffic", None) or "pcap"
    tg = getattr(args, "tgen_contexts", None)
    return traffic, parse_contexts(tg, "--tgen-contexts") if tg else None


def _contexts_arg(args: argparse.Namespace, topo: Topology | None = None) -> list[int] | None:
    """--contexts; with --traffic tgen and no --contexts: every context but the generator's."""
    from ..backends.base import BackendError
    from ..topology import parse_contexts

    ctx = getattr(args, "contexts", None)
    if ctx:
        return parse_contexts(ctx)
    traffic, tg = _traffic_args(args)
    if traffic not in ("tgen", "veth"):
        return None
    tg = tg or default_tgen_contexts()
    have = sorted(int(o) for o in topo.os_index) if topo is not None else sorted(os.sched_getaffinity(0))
    rest = [c for c in have if c not in tg]
    if not rest:
        raise BackendError(f"--traffic tgen: the generator's context(s) {format_contexts(tg)} leave no context "
                           f"for the app's tasks (this machine has {format_contexts(have)})")
    return rest


def dpdk_options(args: argparse.Namespace) -> DpdkOptions:
    """The dpdk backend's options from the command line."""
    from pathlib import Path

    from ..backends.dpdk.options import DpdkOptions

    traffic, tg = _traffic_args(args)
    return DpdkOptions(build_dir=Path(args.build) if getattr(args, "build", None) else None,
                       packets=args.packets, duration=args.duration, warmup=args.warmup, timeout=args.timeout,
                       runner=args.runner, contexts=_contexts_arg(args), traffic=traffic, tgen_contexts=tg,
                       rules=rules_arg(args), capture_packets=getattr(args, "capture_packets", None))


def rules_arg(args: argparse.Namespace) -> Path | None:
    """--rules as a Path; for the ahocorasick workload without it, $PIPEPLACE_RULES where set
    (a test bed's bundle names its copy of the rules there, tools/testbed-bundle.sh: the app's
    built-in default is a path of the machine that built it); else None."""
    import os
    from pathlib import Path

    rules = getattr(args, "rules", None)
    if rules:
        return Path(rules)
    env = os.environ.get("PIPEPLACE_RULES")
    if env and _reads_rules(getattr(args, "workload", None)):
        if not os.access(env, os.R_OK) or not os.path.isfile(env):
            raise ValueError(f"PIPEPLACE_RULES={env} (from the environment): not a readable file; "
                             "give --rules FILE or unset it")
        return Path(env)
    return None


def _reads_rules(name: str | None) -> bool:
    """Whether workload `name` reads a rule set (ahocorasick; a file's app.reads_rules)."""
    from ..workloads import WorkloadError, spec_of

    try:
        return name is not None and spec_of(name).reads_rules
    except WorkloadError:
        return False  # refused by name where the workload is made


def restrict(topo: Topology, args: argparse.Namespace) -> Topology:
    """The sampling space: `topo` limited to --contexts when given (with
    --traffic tgen: to the contexts the generator does not use)."""
    from ..topology import restrict_topology

    ctx = _contexts_arg(args, topo)
    return restrict_topology(topo, ctx) if ctx else topo
