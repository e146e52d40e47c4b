"""The command line every TCP app's runner shares (run_netdedup.py,
run_netstreamcluster.py, run_netferret.py): a tier or an input file, the
stack and port, clients, instances, placement, loss, build, cache, keep,
timeout, --json; --check for a harness that ran server and client itself,
and the client's JSON lines it reads.  The app gives what differs: how to
make a tier's input, run, check, the result's key that says the output is
right, and its summary line."""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from netns_harness import RunError

REPO = Path(__file__).resolve().parents[2]


@dataclass
class RunnerCli:
    app: str
    doc: str  # the runner's docstring: first paragraph the description, the rest the epilog
    tiers: Iterable[str]
    input_file: Callable[[str, int, Path], Path]  # tier, seed, cache dir
    # run(input, tier (None: a file), stack=, port=, clients=, instances=, placement=,
    # loss=, build=, keep=, timeout=, extra= (the app's own arguments))
    run: Callable[..., dict[str, Any]]
    check: Callable[[Path, Path, Path], dict[str, Any]]  # out dir, client JSON, input
    ok: str  # the result's key that says the output is right
    summary: Callable[[str, dict[str, Any]], str]  # tier or input, result
    check_help: str
    input_help: str
    keep_help: str


def main(cli: RunnerCli, argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=cli.doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=cli.doc.split("\n\n", 1)[1])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--tier", choices=list(cli.tiers))
    g.add_argument("--check", type=Path, metavar="DIR", help=cli.check_help)
    ap.add_argument("--input", type=Path, help=cli.input_help)
    ap.add_argument("--client-json", type=Path, help="--check: the client's JSON line(s)")
    ap.add_argument("--seed", type=int, default=0, help="the tier's seed (0)")
    ap.add_argument("--stack", choices=["lwip", "kernel"], default="lwip")
    ap.add_argument("--port", choices=["af_packet", "tap"], default="af_packet",
                    help="lwip's DPDK port: net_af_packet on a veth, or net_tap")
    ap.add_argument("--clients", type=int, default=1, help="clients at once, each sends the input")
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--placement", type=Path, help="placement JSON (default: contexts in turn)")
    ap.add_argument("--loss", type=float, default=0.0, help="percent random loss each way")
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--cache", type=Path, default=REPO / "results" / "inputs",
                    help="where tier inputs are made once")
    ap.add_argument("--keep", type=Path, help=cli.keep_help)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", action="store_true", help="print only the JSON object")
    a, extra = ap.parse_known_args(argv)
    # SIGTERM unwinds like SIGINT: the namespaces are removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if extra and extra[0] == "--":
        extra = extra[1:]
    name = f"run_{cli.app}"
    if a.clients < 1 or a.instances < 1 or not 0 <= a.loss < 100:
        print(f"{name}: --clients and --instances are >= 1, --loss 0..100", file=sys.stderr)
        return 2
    if a.input is not None and not a.input.exists():  # a file, or a directory (netferret's tiers)
        print(f"{name}: --input {a.input}: no such file or directory", file=sys.stderr)
        return 2
    if a.check is not None:
        if a.input is None or a.client_json is None or not a.check.is_dir():
            print(f"{name}: --check DIR needs an existing DIR, --input FILE and "
                  "--client-json FILE", file=sys.stderr)
            return 2
        try:
            res = cli.check(a.check, a.client_json, a.input)
        except (RunError, OSError, ValueError, KeyError) as e:
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
            return 1
        print(json.dumps(res))
        return 0 if res[cli.ok] else 1
    if (a.tier is None) == (a.input is None):
        print(f"{name}: give --tier or --input (see --help)", file=sys.stderr)
        return 2
    path = a.input or cli.input_file(a.tier, a.seed, a.cache)
    try:
        res = cli.run(path, a.tier, stack=a.stack, port=a.port, clients=a.clients,
                      instances=a.instances, placement=a.placement, loss=a.loss, build=a.build,
                      keep=a.keep, timeout=a.timeout, extra=extra)
        rc = 0 if res[cli.ok] else 1
    except (RunError, subprocess.TimeoutExpired, OSError) as e:
        res, rc = {"error": str(e)}, 1
    doc = {"app": cli.app, "tier": a.tier or str(a.input), "result": res}
    if a.json:
        print(json.dumps(doc))
    else:
        print(json.dumps(doc, indent=1) if "error" in res else cli.summary(doc["tier"], res))
    return rc


def client_lines(path: Path) -> list[str]:
    """--check: the client's JSON lines, blank ones left out; a file with
    none is a RunError naming it."""
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    if not lines:
        raise RunError(f"{path}: empty (no client JSON line)")
    return lines
