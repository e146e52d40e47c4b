"""The `pipeplace` command: PARSEC's parsecmgmt for this project.

Exit status: 0 done, 1 a runtime failure (a build that fails, a run that
measured nothing), 2 a usage error (unknown app, tier or option, a bad
workload or placement file)."""
from __future__ import annotations

import argparse
import os
import sys

from assign.commands._args import positive_int

from . import __version__

DESCRIPTION = """\
Manage pipeplace's apps and workloads, as parsecmgmt does PARSEC's:

  pipeplace list                                  apps, workloads and their input tiers
  pipeplace build [-p PART]                       the Meson build, or one part (an app, runtime, traffic-gen)
  pipeplace run -a APP -i TIER [-n N] [--placement FILE] [--json]
                                                  one measured run, set up and torn down
  pipeplace bench [-i TIER] [NAME [ARGS...]]      the benchmarks, or one of them
  pipeplace clean [--cache] [--builds]            what killed runs left; caches; the build
  pipeplace status [--json]                       build, hugepages, caches, leftovers

Tiers: test (CI seconds), simsmall, simmedium, simlarge (assign's default
protocol), native. A workload of your own: -a FILE.toml (assign/WORKLOADS.md).
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pipeplace", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"pipeplace {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help, description=help)
        s.add_argument("--build", metavar="DIR", help="Meson build (default: $PIPEPLACE_BUILD or build/)")
        return s

    s = add("list", "the apps, the workloads and their input tiers")
    s.add_argument("--json", action="store_true", help="one JSON object")
    s = add("build", "build everything configured, or one part (and what it needs)")
    s.add_argument("-p", "--part", metavar="PART", help="runtime, an app, traffic-gen, or a workload (its app)")
    s = add("run", "run a workload on an input tier once, measured; sets up and tears down its ports, "
                   "hugepages, namespaces and clients")
    s.add_argument("-a", "--app", required=True, metavar="APP",
                   help="a workload (ipfwd-l1, stateful, ...), an app with one workload, or a workload file")
    s.add_argument("-i", "--input", dest="tier", required=True, metavar="TIER",
                   help="input tier: test, simsmall, simmedium, simlarge, native")
    s.add_argument("-n", "--instances", type=positive_int, metavar="N", help="app instances (default: 1, or the "
                                                                          "placement's)")
    s.add_argument("--placement", metavar="FILE", help="placement JSON (e.g. from assign best); default: the "
                                                       "instances spread over this machine")
    s.add_argument("--json", action="store_true", help="print one JSON object with app, tier and result")
    s = add("bench", "list the benchmarks, or run one")
    s.add_argument("name", nargs="?", metavar="NAME", help="a benchmark (bench/NAME.py or .sh)")
    s.add_argument("-i", "--input", dest="tier", metavar="TIER", help="the tier, for a benchmark that takes one")
    s.add_argument("--json", action="store_true", help="the list as JSON")
    s.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the benchmark's own arguments")
    s = add("clean", "remove what runs that are gone left behind (namespaces, DPDK files, hugepages)")
    s.add_argument("--cache", action="store_true", help="also the generated captures and inputs")
    s.add_argument("--builds", action="store_true", help="also the Meson build directory (--build)")
    s = add("status", "the build, hugepages, caches and leftovers")
    s.add_argument("--json", action="store_true", help="one JSON object")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .catalog import UsageError

    try:
        if args.command == "list":
            from .listing import listing
            return listing(args)
        if args.command == "build":
            from .build import build
            return build(args)
        if args.command == "run":
            from .run import run
            return run(args)
        if args.command == "bench":
            from .bench import bench
            return bench(args)
        if args.command == "clean":
            from .housekeeping import clean
            return clean(args)
        from .housekeeping import status
        return status(args)
    except UsageError as e:
        print(f"pipeplace {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pipeplace {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`pipeplace list | head`): quietly, as a Unix tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
