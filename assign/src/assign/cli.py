"""The `assign` command line."""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sqlite3
import sys

from . import __version__
from .commands import NAMES

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
  assign baselines --measured --db local.db --plot fig1.png

A workload of your own (an app on runtime/pp_app.h, or a binary with other
options): --workload-file FILE instead of --workload (assign/WORKLOADS.md).

Typical use on the model of the T2:

  assign sample --n 5000 --workload ipfwd-mem --machine ultrasparc-t2 --db t2.db
  assign estimate --db t2.db
  assign report --db t2.db --out t2-report
"""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given the command line, only the parser of
    the command it names (when it names one): a command's start-up then pays
    only for what that command imports (`assign estimate` needs neither the
    backends nor hwloc)."""
    parser = argparse.ArgumentParser(prog="assign", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"assign {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    first = next((a for a in argv or [] if not a.startswith("-")), None) if argv else None
    for name in (first,) if first in NAMES and argv and argv[0] == first else NAMES:
        module = importlib.import_module(f".commands.{name}", __package__)
        module.register(sub).set_defaults(handler=module.run)
    return parser


def run_command(argv: list[str] | None = None) -> int:
    """Parse and run one command; its errors propagate (tests call this)."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    return args.handler(args)


def main(argv: list[str] | None = None) -> int:
    """The `assign` command: 0 on success, 2 on bad input, 130 on Ctrl-C.
    A reader that goes away (`assign count ... | head -1`) ends the command
    quietly with status 0, as it would a Unix tool whose output was taken as
    far as wanted: what a command stores is stored per measurement or batch,
    never because its output was read.  SIGTERM (a `timeout`, a job
    scheduler) ends it like Ctrl-C: through the interpreter's exit, so the
    backends' finalizers stop the app and generator processes they started
    instead of leaving them orphaned."""
    signal.signal(signal.SIGTERM, _terminated)
    try:
        try:
            status = _main(argv)
        except SystemExit:  # --help, --version, usage errors: their output too
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # inside the try: a reader gone is seen here, not at interpreter exit
        return status
    except BrokenPipeError:
        _reader_gone()
        return 0


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _reader_gone() -> None:
    """stdout's reader went away: what is still buffered can go nowhere, and
    the interpreter's last flush must not fail on it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout already closed or not a file
        pass


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    try:
        return args.handler(args)
    # every input error of the package is a ValueError (EstimateError, ValueFileError,
    # StoreError, ModelError, TopologyError, ContextsError, WorkloadError, BackendError)
    except ValueError as e:
        print(f"assign {args.command}: error: {e}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as e:  # damage found past the header, while reading rows
        print(f"assign {args.command}: error: results database {getattr(args, 'db', None)} is damaged: {e}",
              file=sys.stderr)
        return 2
    except RuntimeError as e:
        from .session import SampleError  # not imported up front: estimate does not need tqdm

        if not isinstance(e, SampleError):
            raise
        print(f"assign {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"assign {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:  # a file the command reads or writes (a path checked at parse time can still fail)
        if e.errno is None or isinstance(e, BrokenPipeError):  # the reader gone: main() ends quietly
            raise
        where = f": {e.filename}" if e.filename else ""
        print(f"assign {args.command}: error: {e.strerror}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
