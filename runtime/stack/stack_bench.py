"""What the benchmarks of the TCP apps share (bench/netdedup.py,
bench/netferret.py): ours (R on lwIP) against the same pipeline on kernel
sockets, in alternating rounds on one placement.  Here: the placement's
options and its default (R, P and T fused on the last context this process
may use, the others left to the client and the kernel's work), the
contexts it uses, the rounds, and the lines that say where the client's
kernel work ran and what ours / kernel came to per round and per context."""
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import netns_harness as h

Round = dict[str, dict[str, Any]]  # configuration -> its figures


def add_placement_options(ap: argparse.ArgumentParser, app: str) -> None:
    ap.add_argument("--placement", type=Path,
                    help="placement JSON for both pipelines (default: R, P and T fused on the "
                         "last context this process may use, leaving the others to the client "
                         f"and the kernel's work; --split: run_{app}'s default)")
    ap.add_argument("--split", action="store_true",
                    help=f"run_{app}'s default placement (R and T, P apart)")


def fuse_by_default(a: argparse.Namespace, app: str, prefix: str) -> None:
    """Without --placement or --split: a.placement is a file with R, P and
    T on the last context (in a directory of its own, named after prefix,
    removed at exit)."""
    if a.placement is not None or a.split:
        return
    last = max(os.sched_getaffinity(0))
    d = Path(tempfile.mkdtemp(prefix=f"{prefix}-bench-"))
    atexit.register(shutil.rmtree, d, True)
    a.placement = d / "fused.json"
    a.placement.write_text(json.dumps({
        "app": app, "allow_colocate": True,
        "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 0, "queue": 0},
                       "tasks": {"R": last, "P": last, "T": last}}]}))


def placement(a: argparse.Namespace, app: str) -> dict[str, Any]:
    """The placement both pipelines ran with (--split: the runner's default)."""
    return json.loads(a.placement.read_text()) if a.placement else h.default_placement(1, app)


def contexts(place: dict[str, Any]) -> int:
    """How many contexts the placement's tasks are on."""
    return len({c for i in place["instances"] for c in i["tasks"].values()})


def alternate(cfgs: list[str], n_rounds: int, measure: Callable[[str, int], dict[str, Any]],
              say: Callable[[Round], str]) -> list[Round]:
    """n_rounds of every configuration, measure(cfg, round), each round
    started by the next one (none always goes first); say(round) on stderr."""
    rounds: list[Round] = []
    for k in range(n_rounds):
        order = cfgs[k % len(cfgs):] + cfgs[:k % len(cfgs)]
        got = {c: measure(c, k) for c in order}
        rounds.append(got)
        print(f"round {k + 1}: {say(got)}", file=sys.stderr)
    return rounds


def steering_line(steer: dict[str, Any] | None) -> str:
    """Where the client's kernel work ran (netns_harness.steer_client_rx)."""
    steer = steer or {}
    return "the client's kernel work (both pipelines): " + (
        f"on contexts {steer['contexts']} ({steer['how']})" if steer.get("contexts")
        else f"unsteered: {steer.get('why', '?')}")


def ratio_line(rounds: list[Round], key: str) -> str:
    """ours / kernel of the figure key, per round, its median, and per
    context each pipeline used."""
    ratios = [r["ours"][key] / r["kernel"][key] for r in rounds]
    ctx = rounds[0]["ours"]["contexts"], rounds[0]["kernel"]["contexts"]
    return (f"ours / kernel pipeline, per round: {', '.join(f'{x:.3f}' for x in ratios)}; "
            f"median {statistics.median(ratios):.3f}; per context used ({ctx[0]} and {ctx[1]}): "
            f"{statistics.median(ratios) * ctx[1] / ctx[0]:.3f} (goal >= 1.0)")
