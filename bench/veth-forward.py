#!/usr/bin/env python3
"""ipfwd forwarding between real kernel interfaces against Linux forwarding
the same traffic between the same namespaces, in alternating rounds.

The test bed (assign.vethbed): namespaces gen, dut and sink joined by veth
pairs; pp-tgen sends from gen (port 0: the gen end) and receives in sink
(port 1: the sink end), one process, both ends attached with --attach.
Each round measures both devices under test with pp-tgen's RFC 2544 search
(throughput at zero loss: the highest offered rate whose trial lost nothing;
latency percentiles of that trial):

  kernel  Linux in dut: ip_forward=1, the route 198.19.1.0/24 via the sink;
          its forwarding runs on --kernel-context (RPS on d0), the context
          ipfwd gets, unless --unsteered
  ipfwd   ipfwd in dut (R, P and T on one context), --attach d0 --attach d1,
          --lookup lpm with the same route; the kernel's forwarding off

Both devices under test get one context.  Without the RPS steering, Linux's
forwarding runs inside the generator's veth send, on the generator's own
context, and the kernel's figure is the generator's (--unsteered shows it).
In both, a veth's driver receive (its NAPI poll and, for af_xdp, the XDP
program's redirect) runs in the sender's transmit, as a NIC's DMA would cost
the host nothing.

The generator and ipfwd attach with --attach-mode (auto: af_xdp, af_packet
where XDP is refused); the summary names what they got.  Prints each round,
the medians, and `summary: veth ipfwd / kernel forwarding = Y (attach: ...)`
(measured).  Run from the repository root after tools/setup.sh, as root:

    .venv/bin/python bench/veth-forward.py [--build build] [--rounds 3] [--trial 1]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from assign.vethbed import VethBed

REPO = Path(__file__).resolve().parent.parent


def tgen_rfc2544(args: argparse.Namespace, bed: VethBed, out: Path) -> dict:
    cmd = [str(args.build / "traffic-gen" / "pp-tgen"), "-l", args.tgen_lcores, "--no-pci",
           "--file-prefix", f"vfw{uuid.uuid4().hex[:8]}", "--log-level", "lib.eal:warning",
           "--log-level", "pmd.net.af_xdp:error", "--",
           "--attach", bed.attach("g0"), "--attach", bed.attach("s0"), "--attach-mode", args.mode,
           "--mode", "rfc2544", "--tx-port", "0", "--rx-port", "1", "--frame-sizes", str(args.frame_size),
           "--rate", str(args.max_rate), "--trial", str(args.trial), "--resolution", str(args.resolution),
           "--drain", "0.3", "--stats", str(out), *bed.tgen_fields()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"pp-tgen failed ({p.returncode}): {p.stderr[-2000:]}")
    return json.loads(out.read_text())


def start_ipfwd(args: argparse.Namespace, bed: VethBed, work: Path) -> tuple[subprocess.Popen, Path]:
    placement = work / "placement.json"
    placement.write_text(json.dumps({"app": "ipfwd", "variant": "l1", "allow_colocate": True, "instances": [
        {"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0},
         "tasks": {"R": args.ipfwd_context, "P": args.ipfwd_context, "T": args.ipfwd_context}}]}))
    stats = work / "ipfwd.json"
    stats.unlink(missing_ok=True)
    cmd = [str(args.build / "apps" / "ipfwd" / "ipfwd"), "--no-pci", "--file-prefix", f"vfw{uuid.uuid4().hex[:8]}",
           "--log-level", "lib.eal:warning", "--log-level", "pmd.net.af_xdp:error", "--",
           "--attach", bed.attach("d0"), "--attach", bed.attach("d1"), "--attach-mode", args.mode,
           "--placement", str(placement), "--lookup", "lpm", "--routes", str(bed.routes_file(work / "routes.txt")),
           "--stats", str(stats)]
    err = (work / "ipfwd-stderr.txt").open("w")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    err.close()
    # ready once it says how it attached (after its ports are set up)
    end = time.monotonic() + 60
    while "attached with" not in (work / "ipfwd-stderr.txt").read_text():
        if p.poll() is not None or time.monotonic() > end:
            p.kill()
            raise SystemExit(f"ipfwd did not come up: {(work / 'ipfwd-stderr.txt').read_text()[-2000:]}")
        time.sleep(0.05)
    time.sleep(0.5)
    return p, stats


def stop_ipfwd(p: subprocess.Popen, stats: Path) -> dict:
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raise SystemExit("ipfwd did not stop within 60 s of SIGINT")
    return json.loads(stats.read_text())


def result_of(stats: dict) -> dict:
    r = stats["results"][0]
    lat = r.get("latency_ns", {})
    return {"pps": r.get("throughput_pps", 0.0), "p50_us": lat.get("p50", 0) / 1e3,
            "p99_us": lat.get("p99", 0) / 1e3, "limited": r.get("generator_limited", False),
            "attach": sorted({a["attach"] for a in stats.get("attached", [])})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trial", type=float, default=1.0, help="seconds per RFC 2544 trial (default 1)")
    ap.add_argument("--resolution", type=float, default=2.0, help="search resolution, %% of --max-rate (2)")
    ap.add_argument("--max-rate", default="1M", help="the search's upper bound in pps (default 1M)")
    ap.add_argument("--frame-size", type=int, default=64)
    ap.add_argument("--mode", choices=("auto", "af_xdp", "af_packet"), default="auto", help="--attach-mode")
    ap.add_argument("--tgen-lcores", default="0,1", help="pp-tgen's EAL -l (default 0,1: its worker on CPU 1)")
    ap.add_argument("--ipfwd-context", type=int, default=0, help="ipfwd's context for R, P and T (0)")
    ap.add_argument("--kernel-context", type=int,
                    help="the context of Linux's forwarding, through RPS on d0 (default: --ipfwd-context)")
    ap.add_argument("--unsteered", action="store_true",
                    help="leave Linux's forwarding in the generator's send, on its context (no RPS)")
    args = ap.parse_args()
    if args.kernel_context is None:
        args.kernel_context = args.ipfwd_context
    cpus = os.sched_getaffinity(0)
    for name in ("ipfwd_context", "kernel_context"):
        if getattr(args, name) not in cpus:
            ap.error(f"--{name.replace('_', '-')} {getattr(args, name)}: not a context this process may use "
                     f"({sorted(cpus)})")
    # SIGTERM (a timeout) unwinds like Ctrl-C: the bed is removed on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if os.geteuid() != 0:
        print("veth-forward: needs root (network namespaces)", file=sys.stderr)
        return 2
    rows: dict[str, list[dict]] = {"kernel": [], "ipfwd": []}
    with tempfile.TemporaryDirectory(prefix="veth-forward-") as tmp, VethBed("ppvb") as bed:
        work = Path(tmp)
        print(f"bed {bed.prefix}: {bed.attach('g0')} -> dut {bed.ns['dut']} -> {bed.attach('s0')}, "
              f"{args.frame_size}-byte frames, trials of {args.trial:g} s, resolution {args.resolution:g}% "
              f"of {args.max_rate} pps (measured)")
        print(f"contexts: pp-tgen -l {args.tgen_lcores}, ipfwd {args.ipfwd_context}, Linux's forwarding "
              + ("unsteered (in the generator's send)" if args.unsteered
                 else f"{args.kernel_context} (RPS on {bed.ifname['d0']})"))
        for rnd in range(1, args.rounds + 1):
            order = ("kernel", "ipfwd") if rnd % 2 else ("ipfwd", "kernel")
            for who in order:
                if who == "kernel":
                    bed.kernel_forwarding(True)
                    if not args.unsteered:
                        bed.steer_rx("d0", [args.kernel_context])
                    r = result_of(tgen_rfc2544(args, bed, work / "tgen.json"))
                    bed.steer_rx("d0", [])
                    bed.kernel_forwarding(False)
                else:
                    p, st = start_ipfwd(args, bed, work)
                    try:
                        r = result_of(tgen_rfc2544(args, bed, work / "tgen.json"))
                    finally:
                        app = stop_ipfwd(p, st)
                    r["attach"] = sorted(set(r["attach"]) | {a["attach"] for a in app.get("attached", [])})
                    if not app.get("accounting_ok", app.get("total", {}).get("accounting_ok", True)):
                        print(f"  ipfwd's accounting did not close: {json.dumps(app.get('total'))}")
                rows[who].append(r)
                print(f"round {rnd} {who:6s}: {r['pps'] / 1e3:9.1f} kpps at zero loss, latency p50 "
                      f"{r['p50_us']:8.1f} us p99 {r['p99_us']:8.1f} us, attach {'+'.join(r['attach'])}"
                      f"{'  (generator-limited)' if r['limited'] else ''}")
    med = {k: statistics.median(x["pps"] for x in v) for k, v in rows.items()}
    per_round = [i["pps"] / k["pps"] for i, k in zip(rows["ipfwd"], rows["kernel"]) if k["pps"] > 0]
    attach = sorted({a for v in rows.values() for x in v for a in x["attach"]})
    for k, v in rows.items():
        print(f"{k:6s}: median {med[k] / 1e3:9.1f} kpps (min {min(x['pps'] for x in v) / 1e3:.1f}, "
              f"max {max(x['pps'] for x in v) / 1e3:.1f}), latency p99 median "
              f"{statistics.median(x['p99_us'] for x in v):.1f} us (measured)")
    if per_round:
        print(f"per-round ratios: {', '.join(f'{x:.2f}' for x in per_round)}")
    y = med["ipfwd"] / med["kernel"] if med["kernel"] > 0 else float("nan")
    where = "unsteered" if args.unsteered else f"on context {args.kernel_context}"
    print(f"summary: veth ipfwd / kernel forwarding = {y:.2f} (attach: {'|'.join(attach)}; "
          f"Linux's forwarding {where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
