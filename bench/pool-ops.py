#!/usr/bin/env python3
"""bench/pool-ops.py: the runtime's mbuf pool on DPDK's FIFO ring
(ring_mp_mc, DPDK's default) against its LIFO stack (stack, the runtime's
default), side by side in one run, for every workload `assign` measures and
every way one instance's three tasks can sit on two contexts.

Why it matters: a buffer that T frees on another context goes back through
the pool's common store.  A FIFO hands R the buffer freed longest ago, cold
in every cache; a LIFO hands back the one freed last.  The cost shows where a
task stands apart from R (bench figures in assign/README, "analyzer's buffers").

Each workload replays assign's default traffic for it (the same cached
captures, pool size and mbuf size as `assign sample --backend dpdk`) through
net_pcap (infinite_rx) into net_null, one instance.  Shapes, as the
contexts of R, P, T: 000 all on one, 010 P apart, 001 T apart, 011 R apart.
Within each round every (shape, driver) runs once, the two drivers of a shape
back to back, their order swapped every round: a change of the host's speed
between rounds (this shared machine has slow and fast minutes) hits both.
Printed: median Mpps (measured) per driver with min-max over the rounds; the
ratio stack / ring_mp_mc of the two runs of each round (paired: both ran in
the same minute), its median and min-max; and in how many rounds stack beat
ring_mp_mc.  `--drivers A,B` compares two other drivers (lf_stack, the
lock-free stack, on a machine with many contexts), the ratio then B / A.

Usage: .venv/bin/python bench/pool-ops.py [--build DIR] [--rounds N]
           [--workloads W,...] [--shapes S,...] [--duration S] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "assign" / "src"))
import harness  # noqa: E402  (tests/harness: run_app)
from assign.backends.dpdk.options import default_cache_dir  # noqa: E402
from assign.backends.dpdk.traffic import build_traffic  # noqa: E402
from assign.placement import placement  # noqa: E402
from assign.workloads import TIERS, Workload, input_label  # noqa: E402

DRIVERS = ("ring_mp_mc", "stack")
WORKLOADS = ("ipfwd-l1", "ipfwd-mem", "ahocorasick", "stateful", "analyzer")
SHAPES = ("000", "010", "001", "011")


def measure(build: Path, w: Workload, traffic, ctx: tuple[int, int], shape: str, driver: str,
            duration: float | None, warmup: float, tmp: Path, packets: int | None = None) -> tuple[float, str]:
    contexts = [ctx[int(c)] for c in shape]
    place = placement(w, contexts, True)
    exe = build / "apps" / w.app / w.app
    r = harness.run_app(exe, f"pool{uuid.uuid4().hex[:8]}", tmp, traffic.vdevs, place,
                        (["--packets", str(packets)] if packets else [])
                        + ["--warmup", str(warmup), "--mbufs", str(traffic.mbufs), "--mbuf-size",
                         str(traffic.mbuf_size), "--pool-ops", driver, *w.app_args],
                        duration=None if packets else duration, timeout=120)
    if r.rc != 0 or r.stats is None:
        raise RuntimeError(f"{w.name} failed (rc {r.rc}): {' '.join(r.cmd)}\n{r.stderr[-2000:]}")
    if r.stats.get("pool_ops") != driver:
        raise RuntimeError(f"{w.name}: asked for pool driver {driver}, the statistics say {r.stats.get('pool_ops')}")
    mem = "huge" if r.stats.get("hugepages") else "4k"
    return r.stats["total"]["pps"] / 1e6, mem


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
    ap.add_argument("--rounds", type=int, default=5, help="rounds (5, at least 3)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--drivers", default=",".join(DRIVERS),
                    help="the two mempool drivers compared, A,B (ring_mp_mc,stack); ratios are B / A")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="contexts of R, P, T, 0 or 1 each")
    ap.add_argument("--duration", type=float, default=1.0, help="measured seconds per run (1)")
    ap.add_argument("--warmup", type=float, default=0.5, help="seconds before the window (0.5)")
    ap.add_argument("--tier", choices=TIERS,
                    help="each workload's input tier: its capture and its window (packets per instance, no "
                         "warm-up) instead of the generator's own capture and --duration/--warmup")
    ap.add_argument("--cache", type=Path, default=default_cache_dir(),
                    help="where assign keeps its generated captures")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    a = ap.parse_args()
    if a.rounds < 3:
        ap.error(f"--rounds {a.rounds}: at least 3, for a median and a spread")
    drivers = tuple(a.drivers.split(","))
    if len(drivers) != 2 or not all(drivers) or drivers[0] == drivers[1]:
        ap.error(f"--drivers {a.drivers}: expected two different mempool driver names, A,B")
    shapes = a.shapes.split(",")
    for s in shapes:
        if len(s) != 3 or set(s) - {"0", "1"}:
            ap.error(f"--shapes {s}: expected three digits 0 or 1 (the contexts of R, P and T)")
    names = a.workloads.split(",")
    for n in names:
        if n not in WORKLOADS:
            ap.error(f"--workloads {n}: expected one of {', '.join(WORKLOADS)}")
    ctx = harness.two_contexts()
    build = a.build.resolve()
    tiers = {n: Workload(n, 1).spec.tier(a.tier) if a.tier else None for n in names}
    work = [(Workload(n, 1), build_traffic(build, Workload(n, 1), a.cache, tiers[n].capture_packets if tiers[n]
                                           else None)) for n in names]
    warmup = 0.0 if a.tier else a.warmup  # a --packets window counts from the start: a warm-up would eat it
    figures: dict[tuple[str, str, str], list[float]] = {}
    mems: set[str] = set()
    failure = None
    rounds = 0
    with tempfile.TemporaryDirectory(prefix="poolops") as d:
        for rnd in range(a.rounds):
            order = drivers if rnd % 2 == 0 else drivers[::-1]
            this: dict[tuple[str, str, str], float] = {}
            try:
                for w, traffic in work:
                    for shape in shapes:
                        for drv in order:
                            this[(w.name, shape, drv)], mem = measure(
                                build, w, traffic, ctx, shape, drv, a.duration, warmup, Path(d),
                                tiers[w.name].packets if tiers[w.name] else None)
                            mems.add(mem)
            except RuntimeError as e:  # the complete rounds before it are still printed
                failure = f"round {rnd + 1}: {e}"
                break
            for k, v in this.items():
                figures.setdefault(k, []).append(v)
            rounds += 1
            print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    if failure is not None:
        print(f"pool-ops: stopped, {failure}", file=sys.stderr)
        if rounds == 0:
            return 1
    load = os.getloadavg()
    da, db = drivers
    window = f"tier {a.tier}'s window" if a.tier else f"{a.duration:g} s window after {a.warmup:g} s"
    for w, traffic in work:
        t = tiers[w.name]
        print(input_label(w.name, t.capture_packets if t else None, t.packets if t else None,
                          None if t else a.duration))
    print(f"mbuf pool driver: {da} against {db}, Mpps measured, one instance, "
          f"{window}, {rounds} rounds, contexts {ctx[0]},{ctx[1]}; "
          f"memory: {'/'.join(sorted(mems))}; load average {load[0]:.1f} {load[1]:.1f}")
    print(f"{'workload':<12} {'R P T':>5} {da + ' median (min-max)':>28} "
          f"{db + ' median (min-max)':>28} {f'{db}/{da} by round: median (min-max)':>44} {db + ' ahead':>14}")
    rows = []
    for w, _ in work:
        for shape in shapes:
            fa, fb = figures[(w.name, shape, da)], figures[(w.name, shape, db)]
            ma, mb = statistics.median(fa), statistics.median(fb)
            ratios = [y / x for x, y in zip(fa, fb) if x > 0]
            mq = statistics.median(ratios) if ratios else float("nan")
            ahead = sum(y > x for x, y in zip(fa, fb))
            rows.append({"workload": w.name, "shape": shape, f"{da}_mpps": fa, f"{db}_mpps": fb,
                         "paired_ratios": ratios, "median_paired_ratio": mq, f"{db}_ahead_rounds": ahead})
            spread = f"{min(ratios):.3f}-{max(ratios):.3f}" if ratios else "-"
            print(f"{w.name:<12} {' '.join(shape):>5} "
                  f"{f'{ma:.2f} ({min(fa):.2f}-{max(fa):.2f})':>28} "
                  f"{f'{mb:.2f} ({min(fb):.2f}-{max(fb):.2f})':>28} "
                  f"{f'{mq:.3f} ({spread})':>44} {f'{ahead}/{rounds}':>14}")
    if a.json:
        a.json.write_text(json.dumps({"kind": "measured", "loadavg": load, "contexts": ctx,
                                      "rounds": rounds, "duration_s": a.duration, "warmup_s": a.warmup,
                                      "memory": sorted(mems), "rows": rows,
                                      "failure": failure}, indent=1))
    return 0 if failure is None else 1


if __name__ == "__main__":
    sys.exit(main())
