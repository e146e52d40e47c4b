#!/usr/bin/env python3
"""netdedup on the user-level stack beside its anchors, measured side by
side in alternating rounds on one tier:

  ours      netdedup, R on lwIP over net_af_packet on a veth (--port tap:
            over net_tap), the client in another namespace
  kernel    the same pipeline (same binary, placement, P and T) with R on
            kernel sockets, the same veth and namespaces (--stack kernel)
  kernel64k the kernel pipeline with SO_RCVBUF 65536 (its window near
            lwIP's: Debian builds lwIP with a 64 KiB TCP_WND), what the
            window alone costs
  iperf3    kernel to kernel over the same veth, 3 s of one stream: the
            transport's ceiling

Then one more run of ours with bench/malloc_probe.c preloaded: the
malloc/free calls of the lcores per input MB and the cycles they take,
beside R's (Debian's liblwip allocates its pbufs and segments with malloc;
our build of lwIP, tools/setup.sh's, from static pools).

Per configuration: MB/s (10^6 bytes of input over the client's wall time,
first byte sent to last receipt read; iperf3: its receiver's rate), the
coarse-chunk latency R -> T (p50, p99), and where the time goes: each
task's busy cycles per input MB (the runtime's per-task counters: cycles of
the polls that moved a chunk), and with --profile-build (a -Dprofile=true
build, e.g. build-profile) the poll categories of each task.  Then the
ratio ours / kernel per round, its median, and the same per context of the
placement (both use the same one).  Every round restores every stream and
checks it byte for byte.  In both pipelines the client's kernel work runs
on the contexts the placement leaves free (RPS on the client's interface;
the line "the client's kernel work" says where), not inside the server's
sends on the server's context.

    .venv/bin/python bench/netdedup.py --tier simsmall --rounds 5
    .venv/bin/python bench/netdedup.py --tier simmedium --zlib-level 0   # transport-bound
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "apps" / "netdedup"))
sys.path.insert(0, str(REPO / "runtime" / "stack"))
import netdedup_input  # noqa: E402
import run_netdedup as rn  # noqa: E402
import stack_bench as sb  # noqa: E402


def iperf3(seconds: float, timeout: float) -> dict[str, Any]:
    """iperf3 client (client namespace) to server (server namespace) over
    the veth of the kernel layout, one stream for `seconds`."""
    with rn.network("kernel") as net:
        srv = subprocess.Popen(["ip", "netns", "exec", net.ns_s, "iperf3", "-s", "-1", "-B",
                                rn.SERVER_IP, "-p", str(rn.PORT)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + timeout
            while True:
                p = subprocess.run(["ip", "netns", "exec", net.ns_c, "iperf3", "-c", rn.SERVER_IP,
                                    "-p", str(rn.PORT), "-t", str(seconds), "-J"],
                                   capture_output=True, text=True, timeout=timeout)
                try:
                    j = json.loads(p.stdout)
                except ValueError:
                    j = {"error": p.stderr.strip()}
                if "error" not in j or time.monotonic() > deadline:
                    break
                time.sleep(0.2)  # the server was not listening yet
            if "error" in j:
                raise rn.RunError(f"iperf3: {j['error']}")
            bps = j["end"]["sum_received"]["bits_per_second"]
            return {"mb_per_s": bps / 8e6, "seconds": j["end"]["sum_received"]["seconds"]}
        finally:
            rn.stop(srv)


def cycles_per_mb(res: dict[str, Any]) -> dict[str, float]:
    """Busy cycles per input MB: P and T from the runtime's per-task
    counters (cycles of the polls that moved a chunk); R from the stack's
    own (its polls that moved frames or bytes, split into stack in, app and
    stack out): R's poll also works when it hands over no chunk."""
    mb = res["input_bytes"] / 1e6
    out: dict[str, float] = {}
    for t in res.get("tasks") or []:
        if t["role"] != "R":
            out[t["role"]] = out.get(t["role"], 0) + t["cycles"] / mb
    rc = res["app_stats"]["stack"]["r_cycles"]
    for k in ("stack_in", "app", "stack_out"):
        out["R_" + k] = rc[k] / mb
    out["R"] = sum(rc[k] for k in ("stack_in", "app", "stack_out")) / mb
    return out


def profile(res: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {t["role"]: t["profile"] for t in res.get("tasks") or [] if "profile" in t}


def one(cfg: str, path: Path, a: argparse.Namespace,
        app_env: dict[str, str] | None = None) -> dict[str, Any]:
    extra = ["--zlib-level", str(a.zlib_level)]
    if cfg == "iperf3":
        return iperf3(3, a.timeout)
    stack = "kernel" if cfg.startswith("kernel") else "lwip"
    if cfg == "kernel64k":
        extra += ["--kernel-rcvbuf", "65536"]
    build = a.profile_build if a.profile_build else a.build
    r = rn.run(path, a.tier, stack=stack, port=a.port, clients=a.clients, build=build,
               timeout=a.timeout, extra=extra, placement=a.placement, app_env=app_env)
    if not r["restored_identical"]:
        raise rn.RunError(f"{cfg}: output not identical to the input: "
                          f"{json.dumps({k: r.get(k) for k in ('streams', 'app_exit', 'app_stderr')})[:2000]}")
    lat = r["app_stats"]["latency_us"]
    contexts = sb.contexts(sb.placement(a, "netdedup"))
    return {"mb_per_s": r["mb_per_s"], "lat_p50_us": lat["p50"], "lat_p99_us": lat["p99"],
            "input_bytes": r["input_bytes"], "rx_frames": r["app_stats"]["stack"].get("rx_frames"),
            "cycles_per_mb": cycles_per_mb(r), "profile": profile(r), "contexts": contexts,
            "dedup": r["app_stats"]["chunks"], "stack": r["app_stats"]["stack"],
            "steering": r.get("client_rx_steering"),
            "busy": (r.get("cpu") or {}).get("contexts_busy")}


def malloc_probe(path: Path, a: argparse.Namespace) -> str | None:
    """One run of ours with bench/malloc_probe.c preloaded."""
    if shutil.which("cc") is None:
        return "malloc probe: no C compiler, not measured"
    d = Path(tempfile.mkdtemp(prefix="pp41s-probe-"))
    try:
        so, out = d / "malloc_probe.so", d / "counts.json"
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(so),
                        str(REPO / "bench" / "malloc_probe.c")], check=True)
        try:
            r = one("ours", path, a, app_env={"LD_PRELOAD": str(so), "PP_MALLOC_PROBE_OUT": str(out)})
        except rn.h.RunError as e:
            return f"malloc probe: the run with the probe preloaded failed, not measured ({str(e)[-300:]})"
        c = json.loads(out.read_text())
        mb = r["input_bytes"] / 1e6
        return (f"malloc calls of ours's lcores (measured, one run with the probe): "
                f"{c['allocs'] / mb:.0f} allocations and {c['frees'] / mb:.0f} frees per MB "
                f"({c['allocs'] / max(1, r['rx_frames']):.2f} per frame received), "
                f"{c['cycles'] / mb / 1e6:.2f}M cycles per MB in them: "
                f"{c['cycles'] / mb / r['cycles_per_mb']['R']:.1%} of R's busy cycles in that run")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):8.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--tier", default="simsmall", choices=list(netdedup_input.TIERS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--port", choices=["af_packet", "tap"], default="af_packet")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--zlib-level", type=int, default=1)
    sb.add_placement_options(ap, "netdedup")
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--profile-build", type=Path,
                    help="a -Dprofile=true build (poll categories per task); slower polls")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", type=Path, help="write every round's figures here")
    a = ap.parse_args()
    sb.fuse_by_default(a, "netdedup", rn.LAYOUT.prefix)
    path = netdedup_input.input_file(a.tier, 0, REPO / "results" / "inputs")
    cfgs = ["ours", "kernel", "kernel64k", "iperf3"]
    rounds = sb.alternate(cfgs, a.rounds, lambda c, _k: one(c, path, a),
                          lambda got: ", ".join(f"{c} {got[c]['mb_per_s']:.2f} MB/s" for c in cfgs))
    size = path.stat().st_size * a.clients
    place = sb.placement(a, "netdedup")
    print(f"netdedup, tier {a.tier} ({size / 1e6:.1f} MB, {a.clients} client(s)), zlib level "
          f"{a.zlib_level}, port {a.port}, {a.rounds} alternating rounds; median (min-max), "
          f"all measured; placement (both pipelines) {json.dumps(place['instances'][0]['tasks'])}")
    print(f"ours's stack: {rounds[0]['ours']['stack'].get('stack')}")
    print(f"{'':9} {'MB/s':>22} {'MB/s per context':>18} {'chunk p50 us':>13} {'chunk p99 us':>13}"
          f"   busy cycles per MB: R / P / T")
    for c in cfgs:
        v = [r[c]["mb_per_s"] for r in rounds]
        if c == "iperf3":
            print(f"{c:9} {fmt(v):>22} {'(kernel to kernel)':>18}")
            continue
        ctx = rounds[0][c]["contexts"]
        cyc = {role: statistics.median(r[c]["cycles_per_mb"].get(role, 0) for r in rounds)
               for role in "RPT"}
        print(f"{c:9} {fmt(v):>22} {statistics.median(v) / ctx:18.2f} "
              f"{statistics.median(r[c]['lat_p50_us'] for r in rounds):13.0f} "
              f"{statistics.median(r[c]['lat_p99_us'] for r in rounds):13.0f}   "
              f"{cyc['R'] / 1e6:.1f}M / {cyc['P'] / 1e6:.1f}M / {cyc['T'] / 1e6:.1f}M")
    for c in ("ours", "kernel"):
        parts = {k: statistics.median(r[c]["cycles_per_mb"][k] for r in rounds)
                 for k in ("R_stack_in", "R_app", "R_stack_out")}
        print(f"R of {c}, busy cycles per MB: stack in {parts['R_stack_in'] / 1e6:.1f}M, "
              f"app (reading{' = recv()' if c == 'kernel' else ''}, chunking) "
              f"{parts['R_app'] / 1e6:.1f}M, stack out {parts['R_stack_out'] / 1e6:.1f}M")
    st = rounds[0]["ours"]["stack"]
    mb = rounds[0]["ours"]["input_bytes"] / 1e6
    print(f"ours's frames per MB: {st['rx_frames'] / mb:.0f} in, {st['tx_frames'] / mb:.0f} out "
          f"(one ACK per connection per poll that received)")
    print(sb.steering_line(rounds[0]["ours"]["steering"]))
    busy = {c: [r[c]["busy"] for r in rounds if r[c]["busy"]] for c in ("ours", "kernel")}
    if busy["ours"] and busy["kernel"]:
        print("contexts busy during the transfer (measured, /proc/stat ticks; the client and the "
              "kernel's work included): " + ", ".join(
                  f"{c} {statistics.median(v):.2f}" for c, v in busy.items()))
    ceil = [r["ours"]["mb_per_s"] / r["iperf3"]["mb_per_s"] for r in rounds]
    print(sb.ratio_line(rounds, "mb_per_s"))
    print(f"ours / iperf3 (the transport's ceiling): median {statistics.median(ceil):.3f}")
    w = [r["kernel64k"]["mb_per_s"] / r["kernel"]["mb_per_s"] for r in rounds]
    print(f"kernel pipeline with a 64 KiB window / with its own: median {statistics.median(w):.3f} "
          f"(what Debian's TCP_WND alone would cost the kernel)")
    probe = malloc_probe(path, a)
    if probe is not None:
        print(probe)
    d = rounds[0]["ours"]["dedup"]
    print(f"dedup: {d['fine']} fine chunks, {d['duplicate']} duplicate "
          f"({d['duplicate_bytes'] / max(1, d['raw_bytes']):.1%} of the bytes), stored "
          f"{d['stored_bytes'] / max(1, d['raw_bytes']):.1%} of the input")
    if rounds[0]["ours"]["profile"]:
        for c in ("ours", "kernel"):
            for role, p in rounds[0][c]["profile"].items():
                tot = sum(p.values()) or 1
                print(f"profile {c} {role}: " + ", ".join(
                    f"{k} {v / tot:.0%}" for k, v in p.items() if v))
    if a.json:
        a.json.write_text(json.dumps(rounds, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
