#!/usr/bin/env python3
"""netferret on the user-level stack beside its anchor, measured side by
side in alternating rounds on one tier:

  ours      netferret, R on lwIP over net_af_packet on a veth (--port tap:
            over net_tap), the client in another namespace
  kernel    the same pipeline (same binary, placement, P and T, same
            database) with R on kernel sockets, the same veth and
            namespaces (--stack kernel)

Per configuration: queries/s (queries answered over the client's wall
time, first connect to last answer), the client's per-query latency p50
and p99 (connect to the answer's last byte), the server's own latency R ->
T, the share of each of P's five stages (decode, segment, extract, index,
rank: TSC cycles around each stage of every query) and each task's busy
cycles per query (the runtime's counters).  Then ours / kernel per round,
its median, and the same per context of the placement (both use the same
one).  The first round of each configuration compares every answer with
the Python reference (matches_reference); the others check that every
query was answered.  The client sends the tier's queries --repeat times
(simsmall's 16 are too few for a figure), --clients connections at once.

    .venv/bin/python bench/netferret.py --tier simsmall --rounds 3
    .venv/bin/python bench/netferret.py --tier simmedium --split       # R and T apart from P
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "apps" / "netferret"))
sys.path.insert(0, str(REPO / "runtime" / "stack"))
import netferret_input as ni  # noqa: E402
import run_netferret as rn  # noqa: E402
import stack_bench as sb  # noqa: E402

STAGES = ("decode", "segment", "extract", "index", "rank")


def one(cfg: str, tier: Path, a: argparse.Namespace, check: bool) -> dict[str, Any]:
    r = rn.run(tier, stack="kernel" if cfg == "kernel" else "lwip", port=a.port, clients=a.clients,
               build=a.build, timeout=a.timeout, placement=a.placement, repeat=a.repeat, check=check)
    if "error" in r or r.get("app_exit") != 0:
        raise rn.RunError(f"{cfg}: {json.dumps({k: r.get(k) for k in ('error', 'app_exit', 'app_stderr')})[:2000]}")
    a_st = r["app_stats"]
    want = json.loads((tier / "manifest.json").read_text())["queries"] * a.repeat
    if r["queries"] != want or a_st["answers"]["sent"] != want:
        raise rn.RunError(f"{cfg}: {r['queries']} of {want} queries answered")
    if check and not r["matches_reference"]:
        raise rn.RunError(f"{cfg}: answers differ from the reference: {json.dumps(r.get('differences'))[:2000]}")
    contexts = sb.contexts(sb.placement(a, "netferret"))
    busy = {t["role"]: t["cycles"] / want for t in r.get("tasks") or []}
    return {"queries_per_s": r["queries_per_s"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"],
            "server_p99_us": a_st["latency_us"]["p99"], "share": a_st["stages"]["share"],
            "stage_cycles": a_st["stages"]["cycles_per_query"], "busy_per_query": busy,
            "contexts": contexts, "matches_reference": r.get("matches_reference") if check else None,
            "precision_at_k": r.get("precision_at_k"), "steering": r.get("client_rx_steering")}


def fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):8.1f} ({min(xs):.1f}-{max(xs):.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--tier", default="simsmall", choices=list(ni.TIERS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10, help="the client sends the tier's queries this many times")
    ap.add_argument("--clients", type=int, default=2, help="connections at once (PARSEC's -t)")
    ap.add_argument("--port", choices=["af_packet", "tap"], default="af_packet")
    sb.add_placement_options(ap, "netferret")
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--cache", type=Path, default=REPO / "results" / "inputs")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", type=Path, help="write every round's figures here")
    a = ap.parse_args()
    sb.fuse_by_default(a, "netferret", rn.LAYOUT.prefix)
    tier = ni.input_file(a.tier, 0, a.cache, a.build)
    man = json.loads((tier / "manifest.json").read_text())
    cfgs = ["ours", "kernel"]
    rounds = sb.alternate(cfgs, a.rounds, lambda c, k: one(c, tier, a, check=k == 0),
                          lambda got: ", ".join(f"{c} {got[c]['queries_per_s']:.1f} queries/s" for c in cfgs))
    place = sb.placement(a, "netferret")
    print(f"netferret, tier {a.tier} ({man['queries']} queries x {a.repeat}, {man['images']:,} images, "
          f"{man['vectors']:,} region vectors, top {man['k']}), {a.clients} connection(s) at once, port "
          f"{a.port}, {a.rounds} alternating rounds; median (min-max), all measured; placement (both "
          f"pipelines) {json.dumps(place['instances'][0]['tasks'])}")
    print(f"answers equal to the Python reference (first round): ours "
          f"{rounds[0]['ours']['matches_reference']}, kernel {rounds[0]['kernel']['matches_reference']}; "
          f"precision at K {rounds[0]['ours']['precision_at_k']:.3f}")
    print(f"{'':7} {'queries/s':>22} {'per context':>12} {'p50 ms':>8} {'p99 ms':>8} {'server p99 us':>14}"
          f"   busy cycles per query: R / P / T")
    for c in cfgs:
        v = [r[c]["queries_per_s"] for r in rounds]
        busy = {role: statistics.median(r[c]["busy_per_query"].get(role, 0) for r in rounds) for role in "RPT"}
        print(f"{c:7} {fmt(v):>22} {statistics.median(v) / rounds[0][c]['contexts']:12.1f} "
              f"{statistics.median(r[c]['p50_ms'] for r in rounds):8.2f} "
              f"{statistics.median(r[c]['p99_ms'] for r in rounds):8.2f} "
              f"{statistics.median(r[c]['server_p99_us'] for r in rounds):14.0f}   "
              f"{busy['R'] / 1e6:.2f}M / {busy['P'] / 1e6:.2f}M / {busy['T'] / 1e6:.3f}M")
    for c in cfgs:
        sh = {s: statistics.median(r[c]["share"][s] for r in rounds) for s in STAGES}
        cy = {s: statistics.median(r[c]["stage_cycles"][s] for r in rounds) for s in STAGES}
        print(f"P's stages, {c}: " + ", ".join(f"{s} {sh[s]:.1%} ({cy[s] / 1e3:.0f}k cycles)" for s in STAGES))
    print(sb.steering_line(rounds[0]["ours"]["steering"]))
    print(sb.ratio_line(rounds, "queries_per_s"))
    if a.json:
        a.json.write_text(json.dumps(rounds, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
