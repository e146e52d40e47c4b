#!/usr/bin/env python3
"""bench/ipfwd.py: packets per second of one ipfwd instance (variants l1 and
mem) next to dpdk-testpmd io forwarding over the same ports (the ceiling of
a forwarder that touches nothing), measured in one run, as absolute Mpps
and as a ratio.

Ports: net_pcap replaying a generated capture from memory (infinite_rx=1)
into net_null.  ipfwd's P task runs alone on one context; on a machine with
fewer than 3 contexts R and T share the other one (co-location), which the
output says.  Run with the project's venv: .venv/bin/python bench/ipfwd.py
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from harness import quiet_when_reader_goes  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "apps" / "ipfwd"))
try:
    import ipfwd_traffic  # noqa: E402
    import numpy as np  # noqa: E402
except ImportError as e:  # numpy missing: not the project's venv
    sys.exit(f"bench/ipfwd.py: {e}; run it with the project's venv: .venv/bin/python bench/ipfwd.py")

MBUF_DATA = 128  # small mbufs (64-byte packets): the mem capture is replayed from memory



def free_hugepage_mb() -> int:
    mounted = any(" hugetlbfs " in line for line in Path("/proc/mounts").read_text().splitlines())
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    free = int(info.get("HugePages_Free", "0").split()[0])
    size_kb = int(info.get("Hugepagesize", "0 kB").split()[0])
    return free * size_kb // 1024 if mounted else 0


def memory_args(mbufs: int) -> list[str]:
    """The same memory for testpmd and ipfwd: hugepages when enough are
    free for the pool, otherwise --no-huge for both."""
    need_mb = mbufs * (MBUF_DATA + 128 + 256) // (1 << 20) + 128
    return [] if free_hugepage_mb() >= need_mb else ["--no-huge", "-m", str(need_mb + 128)]


def run_testpmd(cap: Path, mbufs: int, mem: list[str], warmup: float, duration: float, ctx: int,
                tag: str) -> float:
    """Mean Tx-pps of the sink port, from testpmd's own 1 s statistics,
    over the samples after the warm-up."""
    cmd = ["dpdk-testpmd", "--no-pci", "--file-prefix", f"bench_tp_{tag}_{os.getpid()}",
           "-l", f"{0 if ctx != 0 else 1},{ctx}", "--main-lcore", str(0 if ctx != 0 else 1),
           "--log-level", "lib.eal:warning",
           "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", "net_null0", *mem,
           "--", "--forward-mode=io", "--auto-start", "--stats-period", "1",
           f"--total-num-mbufs={mbufs}", f"--mbuf-size={MBUF_DATA + 128}", "--nb-cores=1",
           "--rxq=1", "--txq=1", "--burst=32"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples: list[float] = []
    port = None
    start = None
    assert p.stdout is not None
    for line in p.stdout:
        m = re.search(r"NIC statistics for port (\d+)", line)
        if m:
            port = int(m.group(1))
            start = start or time.monotonic()
        m = re.search(r"Tx-pps:\s+(\d+)", line)
        if m and port == 1 and start is not None:
            if time.monotonic() - start >= warmup:
                samples.append(float(m.group(1)))
            if len(samples) >= max(1, round(duration)):
                break
    p.send_signal(signal.SIGINT)
    try:
        p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    if not samples:
        raise RuntimeError(f"testpmd gave no statistics (exit {p.returncode}): {' '.join(cmd)}")
    return statistics.fmean(samples)


def run_ipfwd(exe: Path, cap: Path, variant: str, mbufs: int, mem: list[str], warmup: float,
              duration: float, ctx_rt: int, ctx_p: int, tmp: Path, tag: str) -> dict:
    place = {"app": "ipfwd", "variant": variant, "allow_colocate": True,
             "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0},
                            "tasks": {"R": ctx_rt, "P": ctx_p, "T": ctx_rt}}]}
    pfile, sfile = tmp / f"place_{tag}.json", tmp / f"stats_{tag}.json"
    pfile.write_text(json.dumps(place))
    cmd = [str(exe), "--no-pci", "--file-prefix", f"bench_ipfwd_{tag}_{os.getpid()}",
           "--log-level", "lib.eal:warning", *mem,
           "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", "net_null0", "--",
           "--placement", str(pfile), "--duration", str(duration), "--warmup", str(warmup),
           "--mbufs", str(mbufs), "--mbuf-size", str(MBUF_DATA), "--stats", str(sfile)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=warmup + duration + 120)
    if p.returncode != 0:
        raise RuntimeError(f"ipfwd exit {p.returncode}: {p.stderr[-2000:]}")
    return json.loads(sfile.read_text())


@quiet_when_reader_goes
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")),
                    help="Meson build with apps/ipfwd/ipfwd (default $PIPEPLACE_BUILD or build/)")
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (3)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring (1)")
    ap.add_argument("--rounds", type=int, default=1, help="alternating ipfwd/testpmd rounds; medians (1)")
    ap.add_argument("--l1-packets", type=int, default=4096)
    ap.add_argument("--mem-packets", type=int, default=1 << 20,
                    help="mem capture: distinct random destinations; 2^20 x 64 B lines = 64 MiB (2^20)")
    a = ap.parse_args(argv)
    exe = a.build / "apps" / "ipfwd" / "ipfwd"
    if not exe.is_file():
        ap.error(f"--build {a.build}: no apps/ipfwd/ipfwd there (build with -Dparts=runtime,ipfwd)")
    opts = json.loads((a.build / "meson-info" / "intro-buildoptions.json").read_text())
    san = next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")
    btype = next((str(o["value"]) for o in opts if o["name"] == "buildtype"), "?")
    if san != "none":
        ap.error(f"--build {a.build} is a sanitizer build (b_sanitize={san}): its figures mean nothing")
    if a.duration < 1 or a.rounds < 1:
        ap.error("--duration must be >= 1 and --rounds >= 1")

    ctxs = sorted(os.sched_getaffinity(0))
    if len(ctxs) >= 3:
        ctx_r, ctx_p = ctxs[0], ctxs[1]
        layout = (f"R and T co-located on context {ctx_r}, P alone on context {ctx_p} "
                  "(the same two contexts testpmd uses)")
    elif len(ctxs) == 2:
        ctx_r, ctx_p = ctxs[0], ctxs[1]
        layout = (f"this machine has 2 contexts and a pipeline needs 3: R and T co-located "
                  f"on context {ctx_r}, P alone on context {ctx_p}")
    else:
        ap.error("need at least 2 contexts")
    print(f"bench/ipfwd.py: build {a.build} ({btype}); {layout}")
    print(f"testpmd io: main lcore on context {ctx_r}, its one forwarding lcore (rx+tx) on context {ctx_p}")
    print(f"ports: net_pcap infinite_rx=1 -> net_null; {a.warmup:g} s warm-up, {a.duration:g} s window, "
          f"{a.rounds} round(s)")
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_ipfwd_") as td:
        tmp = Path(td)
        rows = []
        for variant, n in (("l1", a.l1_packets), ("mem", a.mem_packets)):
            cap = tmp / f"{variant}.pcap"
            ipfwd_traffic.write_pcap_array(cap, ipfwd_traffic.valid_packets(
                variant, n, 16, 64, np.random.default_rng(1)))
            mbufs = n + 8192
            mem = memory_args(mbufs)
            if mem:
                print(f"{variant}: not enough free hugepages for {mbufs} mbufs: testpmd and ipfwd both run with "
                      + " ".join(mem))
            ip_pps, one_pps, tp_pps, stats = [], [], [], None
            for r in range(a.rounds):
                stats = run_ipfwd(exe, cap, variant, mbufs, mem, a.warmup, a.duration, ctx_r, ctx_p, tmp, f"{variant}{r}")
                if stats["accounting_ok"] is not True:
                    raise RuntimeError(f"ipfwd {variant}: accounting violated")
                ip_pps.append(stats["total"]["pps"])
                tp_pps.append(run_testpmd(cap, mbufs, mem, a.warmup, a.duration, ctx_p, f"{variant}{r}"))
                one = run_ipfwd(exe, cap, variant, mbufs, mem, a.warmup, a.duration, ctx_p, ctx_p, tmp, f"{variant}{r}one")
                one_pps.append(one["total"]["pps"])
            ip, tp = statistics.median(ip_pps), statistics.median(tp_pps)
            app = stats["app_stats"] if stats else {}
            rows.append((variant, n, app, ip, tp, statistics.median(one_pps)))
        print()
        print(f"{'variant':8} {'capture':>17} {'table':>22} {'ipfwd Mpps':>18} {'testpmd io Mpps':>20} "
              f"{'ratio':>16} {'ipfwd R+P+T on 1 ctx':>22}")
        for variant, n, app, ip, tp, one in rows:
            table = f"{app.get('table_entries', 0)} x 16 B = {app.get('table_bytes', 0) / 2**20:.3g} MiB"
            print(f"{variant:8} {n:>9} packets {table:>22} {ip / 1e6:>9.3f} measured {tp / 1e6:>11.3f} measured "
                  f"{ip / tp if tp else float('nan'):>7.3f} measured {one / 1e6:>13.3f} measured")
        print("ipfwd Mpps: the required layout (P alone on a context); ratio = ipfwd / testpmd io.")
        print(f"load average (1 min, measured) before/after: {load0:.2f} / {os.getloadavg()[0]:.2f} on "
              f"{os.cpu_count()} CPUs: other processes on these contexts stall a pipeline spread over two of "
              "them far more than a forwarder on one")
        print(f"last column: all three tasks co-located on context {ctx_p}, for comparison: what the "
              "pipeline pays for moving packets between contexts")
        for variant, n, app, ip, tp, one in rows:
            if variant == "mem":
                llc = app.get("llc_bytes", 0)
                print(f"note: mem touches at most {n} distinct table entries per replay pass "
                      f"({n * 64 / 2**20:.3g} MiB of cache lines, computed) against a {llc / 2**20:.3g} MiB LLC "
                      f"(hwloc) and a {app.get('table_bytes', 0) / 2**20:.3g} MiB table (configured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
