#!/usr/bin/env python3
"""Benchmark of apps/stateful, all figures measured in this one run:

1. The P task's packets per second on one hardware context, through the app,
   with 64, 512 and 1500-byte packets (ordinary traffic, nProbe hash):
   P packets / P busy seconds (the runtime's per-task busy cycles), best of
   --repeat runs, and the pipeline's forwarded rate beside it.
2. The hash-flooding comparison through the app: every flow has the same
   nProbe hash value (source address + k, source port - k); P task Mpps with
   the nProbe hash and with the keyed hash (SipHash), and their ratio.
3. The same comparison on the flow table alone (stateful-flood: parse, hash,
   locked update; no rings, no mbufs), ordinary and flood traffic.
4. The P task with IPFIX export on (to a UDP socket on 127.0.0.1 that this
   script opens and never reads: the datagrams cost what they cost to send),
   64-byte ordinary traffic, nProbe hash: with the default timeouts (flows
   end only at shutdown: the cost of the end hook's presence) and with
   --active-timeout 0.01 (every flow exported every 10 ms: the hook, the
   queue and the writer under load), beside section 1's rate without export.
5. The P task with application detection (--dpi, nDPI), 64-byte ordinary
   traffic, nProbe hash, export off and on, beside runs without --dpi in
   the same section: P Mpps, P cycles per packet (P busy cycles / P packets)
   and the difference with and without --dpi, and nDPI's own cycles per
   packet it inspected (TSC read around each ndpi_detection_process_packet
   call, from the app's statistics).  The replay loops over the same flows,
   so nDPI sees only the first packets of each flow (up to 80 for TCP) and
   the rest pass uninspected: the per-packet difference is the amortised
   cost; the per-inspected-packet figure is what a flow's first packets pay.

Usage: bench/apps-stateful.py [--build DIR] [--duration S] [--repeat N] [--flows N]
                          [--rounds R] [--json FILE]
Needs a release build with -Dparts including runtime,stateful (default
$PIPEPLACE_BUILD or ./build).  Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
import harness  # noqa: E402  (tests/harness: pcap files, placements, run_app)


def frame(src: int, dst: int, sport: int, dport: int, size: int) -> bytes:
    """Ethernet/IPv4/TCP(ACK) frame of size - 4 bytes (size on the wire
    counts the 4-byte FCS, as RFC 2544 sizes do)."""
    flen = size - 4
    ip_len = flen - 14
    eth = bytes.fromhex("020000000002" "020000000001") + struct.pack("!H", 0x0800)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 6, 0,
                     src.to_bytes(4, "big"), dst.to_bytes(4, "big"))
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1, 1, 0x50, 0x10, 65535, 0, 0)
    return (eth + ip + tcp).ljust(flen, b"\0")


def ordinary(n: int, size: int) -> list[bytes]:
    rng = random.Random(1)
    return [frame(0x0A000000 | rng.getrandbits(24), 0xC0A80001,
                  rng.randrange(1024, 65535), 80, size) for _ in range(n)]


def colliding(n: int, size: int) -> list[bytes]:
    # src + sport is constant: one nProbe bucket for every flow
    return [frame(0x0A000000 + k, 0xC0A80001, 60000 - k, 80, size) for k in range(n)]


def best_run(exe: Path, tmp: Path, pcap: Path, n_frames: int, duration: float,
             hash_name: str, repeat: int, extra: tuple[str, ...] = ()) -> dict:
    """The run with the highest P rate of `repeat`: on a shared machine the
    least-disturbed run is the closest to what the code can do."""
    runs = [run_app(exe, tmp, pcap, n_frames, duration, hash_name, extra)
            for _ in range(repeat)]
    best = max(runs, key=lambda r: r["p_mpps"])
    best["p_mpps_all_runs"] = [r["p_mpps"] for r in runs]
    return best


def run_app(exe: Path, tmp: Path, pcap: Path, n_frames: int, duration: float,
            hash_name: str, extra: tuple[str, ...] = ()) -> dict:
    # One instance, R and T sharing a context, P on its own.
    r = harness.run_app(exe, f"stbench{uuid.uuid4().hex[:8]}", tmp,
                        [f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null0"],
                        harness.placement("stateful", 1),
                        ["--warmup", "0.5", "--mbufs", str(n_frames + 8192), "--hash", hash_name, *extra],
                        duration=duration, timeout=duration + 120)
    if r.rc != 0 or r.stats is None:
        sys.exit(f"apps-stateful: {' '.join(r.cmd)} failed ({r.rc}):\n{r.stderr[-2000:]}")
    s = r.stats
    ptask = next(t for t in s["tasks"] if t["role"] == "P")
    hz = s["app_stats"]["tsc_hz"]
    busy_s = ptask["cycles"] / hz
    return {"p_mpps": ptask["packets"] / busy_s / 1e6 if busy_s > 0 else 0.0,
            "p_cycles_per_packet": ptask["cycles"] / ptask["packets"] if ptask["packets"] else 0.0,
            "p_packets": ptask["packets"],
            "dpi": s["app_stats"].get("dpi"),
            "pipeline_mpps": s["total"]["pps"] / 1e6,
            "avg_probe": s["app_stats"]["avg_probe_length"],
            "longest_chain": s["app_stats"]["longest_chain"],
            "flows": s["app_stats"]["flows_active"],
            "ipfix": s["app_stats"].get("ipfix"),
            "accounting_ok": s["accounting_ok"]}


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path,
                    default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
    ap.add_argument("--duration", type=float, default=1.0, help="seconds per app run (1)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="app runs per figure; the best P rate is reported (3)")
    ap.add_argument("--flows", type=int, default=4096,
                    help="flows per traffic kind (4096; flood flows must be <= 50000)")
    ap.add_argument("--rounds", type=int, default=128,
                    help="stateful-flood: times each flow's packet is replayed (128)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    if not 1 <= a.flows <= 50000:
        ap.error(f"--flows {a.flows}: expected 1..50000")
    if a.repeat < 1:
        ap.error(f"--repeat {a.repeat}: expected >= 1")
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: expected >= 1")
    if a.duration <= 0:
        ap.error(f"--duration {a.duration}: expected > 0")
    exe = a.build / "apps" / "stateful" / "stateful"
    flood = a.build / "apps" / "stateful" / "stateful-flood"
    for f in (exe, flood):
        if not f.is_file():
            sys.exit(f"apps-stateful: {f} not found: build with -Dparts=runtime,stateful "
                     f"(or pass --build)")
    if (a.build / "meson-info").is_dir():
        opts = json.loads((a.build / "meson-info" / "intro-buildoptions.json").read_text())
        san = next((o["value"] for o in opts if o["name"] == "b_sanitize"), "none")
        btype = next((o["value"] for o in opts if o["name"] == "buildtype"), "?")
        if san != "none" or btype != "release":
            print(f"warning: build {a.build} is {btype}, sanitize={san}: figures are not "
                  f"representative", file=sys.stderr)

    out: dict = {"kind": "measured", "flows": a.flows, "duration_s": a.duration,
                 "sizes": {}, "flood_app": {}, "flood_table": None}
    with tempfile.TemporaryDirectory(prefix="stbench") as td:
        tmp = Path(td)
        print(f"apps/stateful benchmark (all figures measured), {a.flows} flows, "
              f"{a.duration} s per run, best of {a.repeat} runs, "
              f"contexts R+T={harness.two_contexts()[0]} P={harness.two_contexts()[1]}")
        print("P Mpps = P task packets / P busy seconds (runtime's per-task cycles); "
              "pipeline Mpps = forwarded packets / window")
        print("\n1. P task through the app, ordinary traffic, nProbe hash")
        print(f"   {'size':>6} {'P Mpps':>8} {'pipeline Mpps':>14} {'P Gb/s':>8}")
        for size in (64, 512, 1500):
            pcap = tmp / f"ordinary{size}.pcap"
            harness.write_pcap(pcap, ordinary(a.flows, size))
            r = best_run(exe, tmp, pcap, a.flows, a.duration, "nprobe", a.repeat)
            r["p_gbps"] = r["p_mpps"] * size * 8 / 1e3
            out["sizes"][str(size)] = r
            print(f"   {size:>6} {r['p_mpps']:>8.3f} {r['pipeline_mpps']:>14.3f} "
                  f"{r['p_gbps']:>8.2f}")

        print("\n2. Hash flood through the app (64-byte packets, every flow in one nProbe bucket)")
        print(f"   {'traffic':<10} {'hash':<7} {'P Mpps':>8} {'avg probe':>10} {'longest':>8}")
        pcaps = {"ordinary": tmp / "ordinary64.pcap", "colliding": tmp / "colliding64.pcap"}
        harness.write_pcap(pcaps["colliding"], colliding(a.flows, 64))
        for traffic in ("ordinary", "colliding"):
            for h in ("nprobe", "keyed"):
                r = best_run(exe, tmp, pcaps[traffic], a.flows, a.duration, h, a.repeat)
                out["flood_app"][f"{traffic}/{h}"] = r
                print(f"   {traffic:<10} {h:<7} {r['p_mpps']:>8.3f} {r['avg_probe']:>10.2f} "
                      f"{r['longest_chain']:>8}")
        fa = out["flood_app"]
        out["flood_app_ratio_keyed_over_nprobe"] = (
            fa["colliding/keyed"]["p_mpps"] / fa["colliding/nprobe"]["p_mpps"])
        print(f"   under the flood, keyed / nProbe P throughput: "
              f"{out['flood_app_ratio_keyed_over_nprobe']:.1f}x (measured)")
        out["flood_app_keyed_flood_over_keyed_ordinary"] = (
            fa["colliding/keyed"]["p_mpps"] / fa["ordinary/keyed"]["p_mpps"])
        print(f"   keyed table, flood / ordinary traffic, same {a.flows} concurrent flows: "
              f"{out['flood_app_keyed_flood_over_keyed_ordinary']:.2f}x (measured; "
              f"issue 15's goal: >= 0.9x)")

        print("\n3. Flow table alone (stateful-flood), same comparison")
        proc = subprocess.run([str(flood), "--no-shconf", "--no-huge", "-m", "512", "--no-pci",
                               "--no-telemetry", "-l", str(harness.two_contexts()[1]), "--log-level=error",
                               "--", "--flows", str(a.flows), "--rounds", str(a.rounds), "--json"],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            sys.exit(f"apps-stateful: stateful-flood failed:\n{proc.stderr[-2000:]}")
        ft = json.loads(proc.stdout)
        out["flood_table"] = ft
        print(f"   {'traffic':<10} {'hash':<7} {'Mpps':>8} {'avg probe':>10} {'longest':>8}")
        by = {}
        for r in ft["results"]:
            by[(r["traffic"], r["hash"])] = r
            print(f"   {r['traffic']:<10} {r['hash']:<7} {r['mpps']:>8.3f} "
                  f"{r['avg_probe']:>10.2f} {r['longest_chain']:>8}")
        out["flood_table_ratio_keyed_over_nprobe"] = (
            by[("colliding", "keyed")]["mpps"] / by[("colliding", "nprobe")]["mpps"])
        print(f"   under the flood, keyed / nProbe table throughput: "
              f"{out['flood_table_ratio_keyed_over_nprobe']:.1f}x (measured)")
        out["flood_table_keyed_flood_over_keyed_ordinary"] = (
            by[("colliding", "keyed")]["mpps"] / by[("ordinary", "keyed")]["mpps"])
        print(f"   keyed table alone, flood / ordinary traffic, same {a.flows} flows: "
              f"{out['flood_table_keyed_flood_over_keyed_ordinary']:.2f}x (measured)")
        print("\n4. P task with IPFIX export on (64-byte ordinary traffic, nProbe hash)")
        print(f"   {'export':<34} {'P Mpps':>8} {'flows ended':>12} {'exported':>10} "
              f"{'queue drops':>12} {'lost':>6}")
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind(("127.0.0.1", 0))
        collector = f"127.0.0.1:{sink.getsockname()[1]}"
        # Two runs of the same configuration without export, for the noise.
        out["export"] = {"off (section 1)": out["sizes"]["64"],
                         "off (section 2)": out["flood_app"]["ordinary/nprobe"]}
        for label in ("off (section 1)", "off (section 2)"):
            print(f"   {label:<34} {out['export'][label]['p_mpps']:>8.3f}")
        for label, extra in (("on, default timeouts", ("--ipfix-collector", collector)),
                             ("on, --active-timeout 0.01",
                              ("--ipfix-collector", collector, "--active-timeout", "0.01"))):
            r = best_run(exe, tmp, pcaps["ordinary"], a.flows, a.duration, "nprobe",
                         a.repeat, extra)
            out["export"][label] = r
            x = r["ipfix"]
            print(f"   {label:<34} {r['p_mpps']:>8.3f} "
                  f"{sum(x['flows_ended_in_run'].values()):>12} {x['records_exported']:>10} "
                  f"{x['export_dropped_queue_full']:>12} {x['records_lost']:>6}")
        print("   (flows ended: in the run, before shutdown; exported and lost count IPFIX "
              "records; all measured)")

        print("\n5. P task with application detection (--dpi, nDPI; 64-byte ordinary traffic, "
              "nProbe hash)")
        print(f"   {'run':<28} {'P Mpps':>8} {'P cyc/pkt':>10} {'inspected':>10} "
              f"{'of P pkts':>10} {'nDPI cyc/inspected pkt':>23}")
        out["dpi"] = {}
        configs = (("--dpi off, export off", ()),
                   ("--dpi on,  export off", ("--dpi",)),
                   ("--dpi off, export on", ("--ipfix-collector", collector)),
                   ("--dpi on,  export on", ("--dpi", "--ipfix-collector", collector)))
        # Interleaved (one run of each configuration per round, best of the
        # rounds): on a shared machine the load drifts between runs, and the
        # configurations compared should see the same drift.
        runs: dict[str, list[dict]] = {label: [] for label, _ in configs}
        for _ in range(a.repeat):
            for label, extra in configs:
                runs[label].append(run_app(exe, tmp, pcaps["ordinary"], a.flows, a.duration,
                                           "nprobe", extra))
        for label, _extra in configs:
            r = max(runs[label], key=lambda x: x["p_mpps"])
            r["p_mpps_all_runs"] = [x["p_mpps"] for x in runs[label]]
            out["dpi"][label] = r
            d = r["dpi"]
            insp = f"{d['packets_inspected']:>10}" if d else f"{'-':>10}"
            # nDPI counts from the start, P packets from the end of the warm-up:
            # the share is an upper bound.
            share = (f"{min(1.0, d['packets_inspected'] / max(1, r['p_packets'])):>10.1%}"
                     if d else f"{'-':>10}")
            cyc = f"{d['ndpi_cycles_per_inspected_packet']:>23.0f}" if d else f"{'-':>23}"
            print(f"   {label:<28} {r['p_mpps']:>8.3f} {r['p_cycles_per_packet']:>10.1f} "
                  f"{insp} {share} {cyc}")
        sink.close()
        dd = out["dpi"]
        for exp in ("off", "on"):
            on, off = dd[f"--dpi on,  export {exp}"], dd[f"--dpi off, export {exp}"]
            out[f"dpi_cost_cycles_per_packet_export_{exp}"] = (
                on["p_cycles_per_packet"] - off["p_cycles_per_packet"])
            print(f"   export {exp}: --dpi on / off P rate {on['p_mpps'] / off['p_mpps']:.2f}x, "
                  f"P cycles/packet {on['p_cycles_per_packet']:.1f} vs "
                  f"{off['p_cycles_per_packet']:.1f} ({on['p_cycles_per_packet'] - off['p_cycles_per_packet']:+.1f}"
                  f" amortised over all packets; measured)")
        print("   (nDPI cyc/inspected pkt: TSC cycles inside ndpi_detection_process_packet "
              "per packet given to it, measured by the app. Each of the flows is inspected "
              "for its first 81 packets (TCP cap 80, as ndpiReader), so a short run is "
              "mostly inspection and a long one mostly not: the amortised difference "
              "depends on the run length, the per-inspected-packet cost does not)")
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
