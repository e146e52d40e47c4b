#!/usr/bin/env python3
"""Seconds per measured assignment of `assign sample --backend dpdk`, and the
measurement noise, for one ipfwd-l1 instance co-located on this machine.

In one run, side by side:
  1. serve:   N random assignments through the sampler into a database, the
              app kept running (--serve) and re-pinned per assignment;
  2. process: M assignments, one app process each (EAL start and tear-down
              every time);
  3. noise:   --reps measurements of two placements (all stages on one
              context; stages split over two contexts), CV = sd / mean;
  4. the paper's window (3 million packets per instance) once, for scale;
  5. traffic: the same placement (all three tasks on one context, the
              generator on another) measured --tgen-reps times per block with
              the embedded pcap replay and with pp-tgen over net_memif (one
              generator per block, the link kept up), alternating
              --tgen-blocks blocks, for a timed window and for a packet
              window: seconds per assignment and CV side by side, and their
              ratios (goal: tgen within 1.5x of pcap's seconds, same noise);
  6. programs: seconds per measured placement of the programs we did not
              write (assign/WORKLOADS.md), sampled through the same sampler
              beside ipfwd-l1's serve mode, every one with the same window:
              testpmd-io and ovs-dpdk placed while they run (goal: at most
              0.3 s per placement), l3fwd started per placement (its
              start and stop, the restart's cost, reported apart); and
              l3fwd's deploy form (`assign best`'s command line) run on the
              chosen placement, its rate beside the backend's.
Per assignment: wall seconds (draw, measure, store), the window and warm-up,
and the overhead (everything else), all measured; the time for 5000
assignments is projected from the measured mean (estimated).

  bench/assign-dpdk.py [--build DIR] [--n 60] [--n-process 15] [--reps 30]
                    [--duration 0.1] [--warmup 0.05] [--tgen-reps 20]
                    [--tgen-blocks 3] [--tgen-packets 1000000]
                    [--only traffic|programs] [--programs-n 40] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# A bench/assign.py in this folder must not hide the assign package.
sys.path[:] = [d for d in sys.path if Path(d or ".").resolve() != REPO / "bench"]
sys.path.insert(0, str(REPO / "tests"))
import harness  # noqa: E402  (tests/harness: run_app, pcap files, exit quietly in a pipe)
sys.path.insert(0, str(REPO / "assign" / "src"))

from assign.backends.base import summarize  # noqa: E402
from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions  # noqa: E402
from assign.session import Session  # noqa: E402
from assign.store import Store  # noqa: E402
from assign.backends.dpdk.tgen import default_tgen_contexts  # noqa: E402
from assign.topology import get_machine, restrict_topology  # noqa: E402
from assign.workloads import Workload  # noqa: E402

TARGET_N, TARGET_S = 5000, 30 * 60


def sample(build: Path, cache: Path, db: Path, n: int, runner: str, duration: float, warmup: float) -> dict:
    topo = get_machine()
    opts = DpdkOptions(build_dir=build, cache_dir=cache, duration=duration, warmup=warmup, runner=runner)
    t0 = time.perf_counter()
    with DpdkBackend(topo, Workload("ipfwd-l1", 1), opts, allow_colocate=True) as be:
        t_ready = time.perf_counter()
        session, _ = Session.open(Store(str(db)), topo, be.workload, be, 1, True)
        t1 = time.perf_counter()
        added, failed = session.sample_until(n, show_progress=False)
        t2 = time.perf_counter()
        mode = be.runner.mode
        starts = getattr(be.runner, "start_s", [])
    t_end = time.perf_counter()
    ms = session.store.measurements(session.run.id)
    ok = [m for m in ms if m.status == "ok"]
    per = (t2 - t1) / max(1, added + failed)
    return {
        "runner": mode, "n": added, "failed": failed,
        "wall_per_assignment_s": per,  # draw + measure + store, measured around the sampler
        "window_s": statistics.mean(m.extra["window_s"] for m in ok),
        "warmup_s": warmup,
        "overhead_s": statistics.mean(m.extra["overhead_s"] for m in ok),
        "overhead_median_s": statistics.median(m.extra["overhead_s"] for m in ok),
        "sampler_and_store_s": per - statistics.mean(m.extra["wall_s"] for m in ok),
        "wall_median_s": statistics.median(m.extra["wall_s"] for m in ok),
        "backend_setup_s": t_ready - t0, "close_s": t_end - t2,
        "serve_start_s": starts[0] if starts else None,
        "values": [m.value for m in ok],
    }


def program_sample(workload: str, db: Path, n: int, duration: float, warmup: float) -> dict:
    """n placements of a workload through the sampler (co-location allowed), timed as sample() does."""
    topo = get_machine()
    opts = DpdkOptions(duration=duration, warmup=warmup)
    t0 = time.perf_counter()
    with DpdkBackend(topo, Workload(workload, 1), opts, allow_colocate=True) as be:
        t_ready = time.perf_counter()
        session, _ = Session.open(Store(str(db)), topo, be.workload, be, 1, True)
        session.repeat_every = 0
        t1 = time.perf_counter()
        added, failed = session.sample_until(n, show_progress=False)
        t2 = time.perf_counter()
        mode = be.runner.mode
    ms = session.store.measurements(session.run.id)
    ok = [m for m in ms if m.status == "ok"]
    per = (t2 - t1) / max(1, added + failed)
    med = lambda key: statistics.median(m.extra[key] for m in ok if key in m.extra) \
        if any(key in m.extra for m in ok) else None  # noqa: E731
    walls = [m.extra["wall_s"] for m in ok]
    w = (med("window_s") or 0.0) + warmup
    return {"workload": workload, "runner": mode, "n": added, "failed": failed,
            "s_per_placement": per,                      # draw + measure + store, around the sampler
            "wall_median_s": statistics.median(walls),   # the backend's own, one placement
            "overhead_median_s": statistics.median(x - w for x in walls),
            "start_median_s": med("start_s"), "stop_median_s": med("stop_s"), "pin_median_s": med("pin_s"),
            "setup_s": t_ready - t0, "value_median": statistics.median(m.value for m in ok) if ok else None,
            "values": [m.value for m in ok], "best": max(ok, key=lambda m: m.value).assignment if ok else None}


def programs_compare(build: Path, cache: Path, tmp: Path, n: int, duration: float, warmup: float) -> dict:
    """Seconds per placement: ipfwd-l1 (serve) beside testpmd-io, ovs-dpdk (placed while running) and l3fwd
    (restarted), the same window for all; then l3fwd's deploy form against the backend on one placement."""
    import shutil

    out: dict = {}
    print(f"\nprograms: {n} placements each through the sampler, window {duration} s after {warmup} s "
          f"(all measured, one after the other in this run)")
    print(f"  {'workload':12s} {'runner':8s} {'s/placement':>11s} {'median wall':>11s} {'overhead':>9s} "
          f"{'start':>7s} {'stop':>7s} {'pin':>7s} {'failed':>6s}  value median")
    rows = {}
    todo = ["ipfwd-l1", "testpmd-io", "ovs-dpdk", "l3fwd"]
    for wl in todo:
        # where the workload finds it: Debian's package directory, then PATH (a test bed bundle's ovs/bin)
        if wl == "ovs-dpdk" and shutil.which("ovs-vswitchd-dpdk", path="/usr/lib/openvswitch-switch-dpdk:"
                                             + os.environ.get("PATH", "")) is None:
            print(f"  {wl:12s} skipped: openvswitch-switch-dpdk not installed (tools/setup.sh) nor bundled")
            continue
        if wl == "testpmd-io" and shutil.which("dpdk-testpmd") is None:
            print(f"  {wl:12s} skipped: dpdk-testpmd not installed")
            continue
        if wl == "ipfwd-l1":
            r = sample(build, cache, tmp / "p-ipfwd.db", n, "serve", duration, warmup)
            r = {"workload": wl, "runner": "serve", "n": r["n"], "failed": r["failed"],
                 "s_per_placement": r["wall_per_assignment_s"], "wall_median_s": r["wall_median_s"],
                 "overhead_median_s": r["overhead_median_s"], "start_median_s": r["serve_start_s"],
                 "stop_median_s": None, "pin_median_s": None, "setup_s": r["backend_setup_s"],
                 "value_median": statistics.median(r["values"]) if r["values"] else None}
        else:
            r = program_sample(wl, tmp / f"p-{wl}.db", n, duration, warmup)
        rows[wl] = r
        f = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        print(f"  {wl:12s} {r['runner']:8s} {r['s_per_placement']:11.3f} {r['wall_median_s']:11.3f} "
              f"{r['overhead_median_s']:9.3f} {f(r['start_median_s']):>7s} {f(r['stop_median_s']):>7s} "
              f"{f(r['pin_median_s']):>7s} {r['failed']:6d}  {(r['value_median'] or 0) / 1e6:.2f} M/s")
    for wl in ("testpmd-io", "ovs-dpdk"):
        if wl in rows:
            s = rows[wl]["s_per_placement"]
            print(f"  {wl}: {s:.3f} s per placement, re-placed while it runs (goal <= 0.3 s: "
                  f"{'met' if s <= 0.3 else 'not met'}; {s / rows['ipfwd-l1']['s_per_placement']:.2f}x ipfwd "
                  f"--serve's, measured side by side)")
    if "l3fwd" in rows:
        r = rows["l3fwd"]
        cost = (r["start_median_s"] or 0) + (r["stop_median_s"] or 0)
        print(f"  l3fwd: {r['s_per_placement']:.3f} s per placement, restarted each time: its start (EAL, ports, "
              f"until every lcore thread and port is up) {r['start_median_s']:.3f} s and stop "
              f"{r['stop_median_s']:.3f} s, {cost:.3f} s the restart costs per placement (median, measured)")
        out["l3fwd_deploy"] = l3fwd_deploy(r["best"], duration, warmup, tmp)
    out["rows"] = {k: {kk: vv for kk, vv in v.items() if kk not in ("values", "best")} for k, v in rows.items()}
    return out


def l3fwd_deploy(contexts: list[int] | None, duration: float, warmup: float, tmp: Path, reps: int = 5) -> dict:
    """The command `assign best` writes for l3fwd, run on the sample's best placement: its rate over the
    same window, `reps` times, beside the backend's `reps` measurements of that placement."""
    import signal
    import subprocess

    from assign.backends.program.value import Telemetry
    from assign.deploy_form import render

    if contexts is None:
        return {}
    topo = get_machine()
    allc = [int(topo.os_index[i]) for i in range(topo.n_contexts)]
    script = tmp / "l3fwd.deploy.sh"
    script.write_text(render(Workload("l3fwd", 1), contexts, allc))
    backend_vals, deploy_vals = [], []
    be = DpdkBackend(topo, Workload("l3fwd", 1), DpdkOptions(duration=duration, warmup=warmup), allow_colocate=True)
    for i in range(reps):  # alternating: the backend's start of l3fwd, then the deploy form's
        r = be.measure_one(contexts)
        if r.status == "ok":
            backend_vals.append(r.value)
        prefix = f"bench_l3d_{os.getpid()}_{i}"
        p = subprocess.Popen(["sh", str(script)], env={**os.environ, "FILE_PREFIX": prefix},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            tel = None
            while tel is None:
                try:
                    tel = Telemetry(prefix)
                    if not all(tel.port_started(q) for q in (0, 1)):
                        tel.close()
                        tel = None
                except Exception:  # not up yet
                    tel = None
                if time.monotonic() > deadline or p.poll() is not None:
                    raise RuntimeError("l3fwd's deploy form did not start")
                time.sleep(0.02)
            time.sleep(warmup)
            c0, t0 = tel.counter((0, 1), "opackets"), time.monotonic()
            time.sleep(duration)
            deploy_vals.append((tel.counter((0, 1), "opackets") - c0) / (time.monotonic() - t0))
            tel.close()
        finally:
            os.killpg(p.pid, signal.SIGINT)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            from assign.backends.dpdk.runners import cleanup_prefix

            cleanup_prefix(prefix)
    be.close()
    b, d = summarize(backend_vals), summarize(deploy_vals)
    print(f"  l3fwd's deploy form on placement {contexts}: {d['median'] / 1e6:.2f} M/s median of {d['n']} starts, "
          f"the backend {b['median'] / 1e6:.2f} M/s median of {b['n']}: ratio {d['median'] / b['median']:.2f} "
          f"(measured, alternating one start of each)")
    return {"contexts": contexts, "backend": b, "deploy": d, "ratio_median": d["median"] / b["median"]}


def traffic_block(build: Path, cache: Path, source: str, reps: int, window: dict, warmup: float,
                  app_ctx: list[int], gen_ctx: list[int]) -> dict:
    """reps measurements of [c, c, c] (c = app_ctx[0]) with one backend (one
    serve process; with tgen one generator for the block): seconds per
    assignment around each measure_one, the first (process and generator
    start, priming) apart."""
    topo = restrict_topology(get_machine(), app_ctx)
    opts = DpdkOptions(build_dir=build, cache_dir=cache, warmup=warmup, contexts=app_ctx, traffic=source,
                       tgen_contexts=gen_ctx if source == "tgen" else None, runner="serve", **window)
    c = app_ctx[0]
    secs, vals, fails = [], [], 0
    t0 = time.perf_counter()
    with DpdkBackend(topo, Workload("ipfwd-l1", 1), opts, allow_colocate=True) as be:
        for _ in range(reps):
            t = time.perf_counter()
            r = be.measure_one([c, c, c])
            secs.append(time.perf_counter() - t)
            if r.status == "ok":
                vals.append(float(r.value))
            else:
                fails += 1
    total = time.perf_counter() - t0
    link = be.tgen.sessions[-1] if be.tgen is not None and be.tgen.sessions else None
    return {"secs": secs, "values": vals, "failed": fails, "total_s": total, "link": link}


def traffic_compare(build: Path, cache: Path, reps: int, blocks: int, duration: float, warmup: float,
                    packets: int) -> dict:
    gen_ctx = default_tgen_contexts()
    app_ctx = [c for c in sorted(os.sched_getaffinity(0)) if c not in gen_ctx][:1]
    if not app_ctx:
        print("\ntraffic: skipped, one context only (the generator needs a context of its own)")
        return {}
    out: dict = {"app_contexts": app_ctx, "generator_contexts": gen_ctx}
    windows = {f"timed {duration} s": ({"duration": duration}, warmup),
               f"{packets:,} packets": ({"packets": packets}, 0.0)}
    print(f"\ntraffic: ipfwd-l1 x1, R, P, T on context {app_ctx[0]}, generator on {gen_ctx}; {blocks} blocks "
          f"of {reps} measurements per source, alternating pcap, tgen (all measured)")
    for wname, (win, wu) in windows.items():
        acc: dict[str, dict] = {src: {"secs": [], "first": [], "values": [], "cvs": [], "failed": 0, "links": []}
                                for src in ("pcap", "tgen")}
        for _ in range(blocks):
            for src in ("pcap", "tgen"):
                b = traffic_block(build, cache, src, reps, win, wu, app_ctx, gen_ctx)
                a = acc[src]
                a["first"].append(b["secs"][0])
                a["secs"] += b["secs"][1:]
                a["values"] += b["values"]
                if len(b["values"]) > 1:
                    a["cvs"].append(statistics.stdev(b["values"]) / statistics.mean(b["values"]))
                a["failed"] += b["failed"]
                if b["link"] is not None:
                    a["links"].append(b["link"])
        print(f"\n  window: {wname} (warm-up {wu} s)")
        print(f"  {'source':6s} {'s/assignment':>13s} {'first (start)':>14s} {'value median':>14s} "
              f"{'CV in block':>12s} {'CV all':>7s} {'failed':>6s}")
        row = {}
        for src, a in acc.items():
            med = statistics.median(a["secs"])
            allv = summarize(a["values"])
            cv_block = statistics.median(a["cvs"]) if a["cvs"] else float("nan")
            row[src] = {"s_per_assignment_median": med, "first_s_median": statistics.median(a["first"]),
                        "value_median": statistics.median(a["values"]) if a["values"] else None,
                        "cv_in_block_median": cv_block, "cv_all": allv["cv"], "failed": a["failed"],
                        "n": len(a["values"]), "links": a["links"]}
            print(f"  {src:6s} {med:13.3f} {row[src]['first_s_median']:14.3f} "
                  f"{(row[src]['value_median'] or 0) / 1e6:12.2f} M {100 * cv_block:11.1f}% "
                  f"{100 * allv['cv']:6.1f}% {a['failed']:6d}")
        p, t = row["pcap"], row["tgen"]
        ratio = t["s_per_assignment_median"] / p["s_per_assignment_median"]
        print(f"  tgen / pcap: seconds per assignment {ratio:.2f}x (goal <= 1.5x: "
              f"{'met' if ratio <= 1.5 else 'not met'}), CV in block {t['cv_in_block_median'] / p['cv_in_block_median']:.2f}x, "
              f"value {(t['value_median'] or 0) / (p['value_median'] or 1):.2f}x (measured side by side)")
        closed = [ln for ln in t["links"] if ln.get("closed")]
        print(f"  generator links: {len(closed)} of {len(t['links'])} closed exactly (generator tx = app rx + "
              f"drained at the end); first assignment of a block pays the start-up and the priming placement")
        row["ratio_s_per_assignment"] = ratio
        out[wname] = row
    return out


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
    ap.add_argument("--n", type=int, default=60, help="assignments with the serve runner (60)")
    ap.add_argument("--n-process", type=int, default=15, help="assignments with a process each (15)")
    ap.add_argument("--reps", type=int, default=30, help="noise: measurements per placement (30)")
    ap.add_argument("--duration", type=float, default=0.1, help="window seconds (0.1)")
    ap.add_argument("--warmup", type=float, default=0.05, help="warm-up seconds (0.05)")
    ap.add_argument("--tgen-reps", type=int, default=20, help="traffic: measurements per block (20)")
    ap.add_argument("--tgen-blocks", type=int, default=3, help="traffic: alternating blocks per source (3)")
    ap.add_argument("--tgen-packets", type=int, default=1_000_000,
                    help="traffic: the packet window per instance (1,000,000)")
    ap.add_argument("--only", choices=["traffic", "programs"], help="run only this part")
    ap.add_argument("--programs-n", type=int, default=40, help="programs: placements per workload (40)")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    a = ap.parse_args()
    if a.tgen_reps < 2 or a.tgen_blocks < 1:
        sys.exit("assign-dpdk.py: --tgen-reps must be at least 2 and --tgen-blocks at least 1")
    build = a.build.resolve()
    out: dict = {"machine": get_machine().summary(), "workload": "ipfwd-l1 x1, co-located",
                 "window_s": a.duration, "warmup_s": a.warmup, "load_avg_at_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench-assign-dpdk-") as tmp:
        cache = Path(tmp) / "captures"
        print(f"machine: {out['machine']}; load average {out['load_avg_at_start'][0]:.2f} (other work shares "
              f"these contexts: every figure below is measured under it)")
        print(f"ipfwd-l1, 1 instance, tasks co-located; window {a.duration} s after a {a.warmup} s warm-up")
        if a.only == "programs":
            out["programs"] = programs_compare(build, cache, Path(tmp), a.programs_n, a.duration, a.warmup)
            if a.json:
                a.json.write_text(json.dumps(out, indent=2, default=str))
            return 0
        if a.only == "traffic":
            out["traffic"] = traffic_compare(build, cache, a.tgen_reps, a.tgen_blocks, a.duration, a.warmup,
                                             a.tgen_packets)
            if a.json:
                a.json.write_text(json.dumps(out, indent=2))
            return 0
        res = {}
        for runner, n in (("serve", a.n), ("process", a.n_process)):
            r = sample(build, cache, Path(tmp) / f"{runner}.db", n, runner, a.duration, a.warmup)
            res[runner] = r
            print(f"\n[{r['runner']}] {r['n']} assignments ({r['failed']} failed), measured:")
            print(f"  seconds per assignment   {r['wall_per_assignment_s']:.3f}  (draw + run + store)")
            print(f"    window + warm-up       {r['window_s'] + r['warmup_s']:.3f}  ({r['window_s']:.3f} window)")
            print(f"    overhead               {r['overhead_s']:.3f}  (median {r['overhead_median_s']:.3f}; start, "
                  f"port set-up, drain, tear-down)")
            print(f"    sampler + database     {r['sampler_and_store_s']:.3f}  (Python draw, bookkeeping, one "
                  f"synchronous SQLite commit)")
            print(f"  median run (warm-up + window + overhead) {r['wall_median_s']:.3f}")
            if r["serve_start_s"] is not None:
                print(f"  serve process start-up {r['serve_start_s']:.3f} s once (in its first assignment)")
            proj = TARGET_N * r["wall_per_assignment_s"]
            print(f"  {TARGET_N} assignments: {proj / 60:.1f} min (estimated from the measured mean; target "
                  f"{TARGET_S / 60:.0f} min: {'met' if proj <= TARGET_S else 'not met'})")
            r["projected_5000_s"] = proj
        s, p = res["serve"], res["process"]
        print(f"\nserve vs process: overhead {p['overhead_s'] / max(s['overhead_s'], 1e-9):.0f}x smaller, "
              f"seconds per assignment {p['wall_per_assignment_s'] / s['wall_per_assignment_s']:.2f}x fewer "
              f"(measured side by side)")
        out["sample"] = {k: {kk: vv for kk, vv in v.items() if kk != "values"} for k, v in res.items()}

        topo = get_machine()
        ctx = [int(o) for o in topo.os_index]
        places = {"one context": [ctx[0]] * 3}
        if len(ctx) > 1:
            places["split"] = [ctx[0], ctx[1], ctx[0]]
        out["noise"] = {}
        opts = DpdkOptions(build_dir=build, cache_dir=cache, duration=a.duration, warmup=a.warmup)
        with DpdkBackend(topo, Workload("ipfwd-l1", 1), opts) as be:
            for name, c in places.items():
                vals, fails, _ = be.repeat(c, a.reps)
                sm = summarize(vals)
                out["noise"][name] = {"contexts": c, **sm, "failed": len(fails)}
                print(f"noise, {name} (R,P,T on {c}): {sm['n']} reps, mean {sm['mean']:,.0f} pps, "
                      f"CV {100 * sm['cv']:.1f}% (measured)")
        spread = summarize(s["values"])
        print(f"spread of the random sample itself: CV {100 * spread['cv']:.1f}% (measured, {spread['n']} values)")
        out["sample_spread_cv"] = spread["cv"]

        popts = DpdkOptions(build_dir=build, cache_dir=cache)  # the paper's 3M packets, all in the window
        with DpdkBackend(topo, Workload("ipfwd-l1", 1), popts) as be:
            be.measure_one([ctx[0]] * 3)  # the first pays the serve start-up; time the second
            t0 = time.perf_counter()
            r = be.measure_one([ctx[0]] * 3)
            dt = time.perf_counter() - t0
        out["paper_window"] = {"packets": 3_000_000, "seconds": dt, "window_s": r.extra.get("window_s"),
                               "pps": r.value}
        print(f"the paper's window (3,000,000 packets, all on one context, no warm-up): {dt:.2f} s "
              f"per assignment (measured; window {r.extra.get('window_s', float('nan')):.2f} s)")
        out["traffic"] = traffic_compare(build, cache, a.tgen_reps, a.tgen_blocks, a.duration, a.warmup,
                                         a.tgen_packets)
        out["programs"] = programs_compare(build, cache, Path(tmp), a.programs_n, a.duration, a.warmup)
    if a.json:
        a.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
