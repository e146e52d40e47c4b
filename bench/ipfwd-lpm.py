#!/usr/bin/env python3
"""bench/ipfwd-lpm.py: ipfwd --lookup lpm against DPDK's l3fwd with the same
rule file, the same capture, the same ports and the same context, measured
side by side in one run (Mpps and ratio, alternating rounds, median and
spread).  ipfwd with its default hash lookup (variant l1) on the same
capture is one more row: what the route lookup costs.

Tables (tools/routegen.py, every next hop port 0):
  full  - a full-size modelled Internet table (default 1,000,000 prefixes):
          l3fwd --lookup fib (rte_fib DIR24_8, the library ipfwd uses) and
          ipfwd --lookup lpm;
  lpm   - a smaller one (default 65,536 prefixes, same distribution):
          l3fwd --lookup lpm (rte_lpm) and ipfwd --lookup lpm.  l3fwd's
          rte_lpm cannot load the full table in useful time: DPDK 22.11's
          rte_lpm_add scans the rules of the new rule's depth one by one
          (about 600,000 /24s: ~2e11 comparisons), so l3fwd LPM gets the
          table it can load, and ipfwd the same file.
Captures, one per table: 64-byte UDP packets to distinct destinations
inside routes drawn uniformly from that table (every packet has a route),
replayed by net_pcap (infinite_rx=1) into net_null.  Ports, in this order for every program: 0 = net_null (the sink
every route points at), 1 = net_pcap.  Each program forwards on one
context: l3fwd's one lcore (its main lcore), ipfwd's R, P and T all on it.

l3fwd is built at benchmark time from the installed examples
(/usr/share/dpdk/examples/l3fwd, Debian's dpdk-doc) into a temporary
directory with `make` (pkg-config libdpdk), never kept.  Its source is
changed in four places, for capacity and for these ports only: the rule
limits (IPV4_L3FWD_LPM_MAX_RULES 1024, FIB max_routes 65536) raised to the
table sizes, the mbuf pool given room for the capture net_pcap keeps in
mbufs, and no Rx checksum offload requested (net_pcap and net_null have
none; l3fwd then checks no IP checksum at all, ipfwd checks it in
software).  It runs with --parse-ptype: without it net_pcap's packets carry
no packet type and l3fwd 22.11 skips the lookup and sends every packet back
out of its input port.

Rates are measured the same way for both programs, from outside: the sink
port's transmitted packets read twice through DPDK telemetry
(/ethdev/stats), after a warm-up, over the measured window.  Beside them,
the same packets per second the process ran on a CPU in that window (the
scheduler's count, /proc/PID/task/*/schedstat): both programs poll on one
lcore without sleeping, so where other sessions keep more threads runnable
than there are CPUs, their load divides Mpps round by round while the
on-CPU rate moves far less.

--ipv6: IPv6 instead.  The table is tools/routegen.py's modelled global
IPv6 table (--routes6, default 200,000 prefixes, every next hop port 0),
written shortest prefix first (the order ipfwd adds routes in, so that
l3fwd's rte_fib6 reserves its groups the same way), the capture 64-byte
IPv6/UDP packets to distinct addresses inside its routes.  l3fwd --lookup
fib (rte_fib6 TRIE, the library and the bulk lookup ipfwd uses) with the
table as --rule_ipv6 against ipfwd --lookup lpm with the same file, plus
ipfwd's hash lookup on the capture.  Both also load the same one-route IPv4
file (l3fwd reads rule files only with both families given).  l3fwd's IPv6
FIB gets the table's route count and as many tbl8 groups as ipfwd starts
with (the groups the routes fill, plus half).  Both run with the same -m
(and --no-huge where free hugepages are short).  As shipped, l3fwd does no
IPv6 header check and leaves the hop limit alone (its RFC 1812 step is
IPv4 only); ipfwd checks the version, the payload length and the
extension header chain, and decrements the hop limit.  The last line:
`summary: ipv6 ipfwd / l3fwd = X`, the median of the per-round ratios of
Mpps, with the same for the on-CPU rates beside it.

Run with the project's venv: .venv/bin/python bench/ipfwd-lpm.py
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "apps" / "ipfwd"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "bench" / "lib"))
import harness  # noqa: E402  (tests/harness: placements, pcap files)
from l3fwd_build import build_l3fwd  # noqa: E402  (bench/lib)
try:
    import ipfwd_traffic  # noqa: E402
    import numpy as np  # noqa: E402
    import routegen  # noqa: E402
except ImportError as e:  # numpy missing: not the project's venv
    sys.exit(f"bench/ipfwd-lpm.py: {e}; run it with the project's venv: "
             ".venv/bin/python bench/ipfwd-lpm.py")

SINK_PORT, SOURCE_PORT = 0, 1


class Telemetry:
    """DPDK telemetry of a running process (its --file-prefix): port counters."""

    def __init__(self, file_prefix: str, timeout: float, proc: subprocess.Popen[str]) -> None:
        base = Path(os.environ.get("XDG_RUNTIME_DIR", "")) / "dpdk" if os.getuid() != 0 else Path("/var/run/dpdk")
        path = base / file_prefix / "dpdk_telemetry.v2"
        deadline = time.monotonic() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(str(path))
                break
            except OSError:
                s.close()
                if proc.poll() is not None:
                    raise RuntimeError(f"exited ({proc.returncode}) before its telemetry socket {path} appeared")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no telemetry socket at {path} after {timeout:g} s")
                time.sleep(0.2)
        self.sock = s
        info = json.loads(s.recv(65536))
        self.max_len = int(info.get("max_output_len", 16384))

    def port(self, port: int) -> dict[str, int]:
        self.sock.send(f"/ethdev/stats,{port}".encode())
        return json.loads(self.sock.recv(self.max_len))["/ethdev/stats"]

    def close(self) -> None:
        self.sock.close()


def cpu_seconds(pid: int) -> float:
    """Time the process's threads have run on a CPU (the scheduler's own
    count, /proc/PID/task/*/schedstat, nanoseconds)."""
    total = 0
    for st in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(st.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between the listing and the read
    return total / 1e9


def measure(cmd: list[str], file_prefix: str, warmup: float, duration: float, log: Path,
            startup_timeout: float = 180) -> tuple[float, float, dict[str, int], dict[str, int], str]:
    """Start cmd, wait until its sink port transmits, then the warm-up, then
    count the sink's transmitted packets over the window.  (pps, the share
    of the window the process ran on a CPU, sink and source port counters
    at the end, the tail of the program's output).  Both programs poll on
    one lcore without sleeping, so on a machine with more runnable threads
    than CPUs pps / share is their rate while they run: the other sessions'
    load divides pps, far less pps / share."""
    with open(log, "w") as out_f:  # a file, not a pipe: l3fwd prints a line per route
        p = subprocess.Popen(cmd, stdout=out_f, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True, preexec_fn=harness.die_with_parent)
    try:
        tel = Telemetry(file_prefix, startup_timeout, p)
        deadline = time.monotonic() + startup_timeout
        while tel.port(SINK_PORT)["opackets"] == 0:
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{cmd[0]} never forwarded (exit {p.poll()})")
            time.sleep(0.2)
        time.sleep(warmup)
        t0, c0, cpu0 = time.monotonic(), tel.port(SINK_PORT)["opackets"], cpu_seconds(p.pid)
        time.sleep(duration)
        t1, c1, cpu1 = time.monotonic(), tel.port(SINK_PORT)["opackets"], cpu_seconds(p.pid)
        sink, source = tel.port(SINK_PORT), tel.port(SOURCE_PORT)
        tel.close()
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return (c1 - c0) / (t1 - t0), (cpu1 - cpu0) / (t1 - t0), sink, source, log.read_text()[-3000:]


def spread(xs: list[float]) -> str:
    return f"{min(xs) / 1e6:.2f}-{max(xs) / 1e6:.2f}"


def tbl8_groups6(prefix: np.ndarray, depth: np.ndarray) -> int:
    """The rte_fib6 TRIE groups a table fills (a 256-entry group per
    distinct L-bit prefix holding a deeper route, L = 24, 32, ...): what
    ipfwd counts (ipfwd_routes.c) to size its FIB; prefixes as top 64 bits."""
    groups = 0
    for level in range(24, 64, 8):
        deeper = depth > level
        if not deeper.any():
            break
        mask = np.uint64(((1 << 64) - 1) ^ ((1 << (64 - level)) - 1))
        groups += np.unique(prefix[deeper] & mask).size
    return groups


def run_rounds(programs: dict[str, Callable[[str], list[str]]], rounds: int, warmup: float,
               duration: float, log: Path) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Every program once per round, in alternating order: pps per round,
    and pps per second on a CPU (measure)."""
    runs: dict[str, list[float]] = {k: [] for k in programs}
    on_cpu: dict[str, list[float]] = {k: [] for k in programs}
    for r in range(rounds):
        order = list(programs)
        if r % 2:
            order.reverse()  # alternate: no program always runs first
        for name in order:
            fp = f"bench_lpm_{r}_{order.index(name)}_{os.getpid()}"
            pps, share, sink, source, out = measure(programs[name](fp), fp, warmup, duration, log)
            if source.get("opackets", 0) != 0:
                raise RuntimeError(f"{name}: {source['opackets']} packets went back out of the source "
                                   f"port: lookups failed or were skipped\n{out}")
            runs[name].append(pps)
            on_cpu[name].append(pps / share if share > 0 else float("nan"))
    return runs, on_cpu


def main_ipv6(a: argparse.Namespace, exe: Path, btype: str, ctx: int) -> int:
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_ipfwd_lpm6_") as td:
        tmp = Path(td)
        t = time.monotonic()
        prefix, depth, hop = routegen.generate6(a.routes6, 1, a.seed)  # every next hop: port 0
        order = np.argsort(depth, kind="stable")  # shortest first, as ipfwd adds them
        rules6, rules4 = tmp / "full6.rules", tmp / "one4.rules"
        routegen.write_rules(rules6, prefix[order], depth[order], hop[order], family="ipv6")
        rules4.write_text("R198.18.0.0/15 0\n")
        dsts = routegen.destinations_in6(prefix, depth, a.packets, np.random.default_rng(a.seed))
        cap = tmp / "full6.pcap"
        ipfwd_traffic.write_pcap(cap, (ipfwd_traffic.packet6(d, 0x20010DB8 << 96 | i, 64, 64, 1024 + i % 60000)
                                       for i, d in enumerate(dsts)))
        groups = tbl8_groups6(prefix, depth)
        fib6_tbl8 = groups + groups // 2 + 64  # ipfwd's first size (ipfwd_lpm.c)
        mbufs = a.packets + 8192
        l3fwd = build_l3fwd(tmp, "bench/ipfwd-lpm.py", None, a.packets, fib6_routes=a.routes6,
                            fib6_tbl8=fib6_tbl8)
        prep = time.monotonic() - t
        need_mb = (mbufs * (2048 + 128 + 256) + (64 + 32 + 64) * (1 << 20) + fib6_tbl8 * 1028
                   + 2 * a.routes6 * 256) // (1 << 20) + 256
        mem = ["-m", str(need_mb)] + ([] if harness.free_hugepage_mb() >= need_mb else ["--no-huge"])
        place = harness.write_placement(tmp / "p.json", harness.placement(
            "ipfwd", [harness.instance(SOURCE_PORT, 0, SINK_PORT, 0, ctx, ctx, ctx)], variant="l1"))
        vdevs = ["--vdev", "net_null0", "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1"]

        def cmd_l3fwd(fp: str) -> list[str]:
            return [str(l3fwd), "--no-pci", "--file-prefix", fp, "-l", str(ctx),
                    "--log-level", "lib.eal:warning", *vdevs, *mem,
                    "--", "-p", "0x3", "--config", f"({SOURCE_PORT},0,{ctx})", "--lookup", "fib",
                    "--parse-ptype", "--rule_ipv4", str(rules4), "--rule_ipv6", str(rules6)]

        def cmd_ipfwd(fp: str, lpm: bool) -> list[str]:
            return [str(exe), "--no-pci", "--file-prefix", fp, "--log-level", "lib.eal:warning",
                    *vdevs, *mem, "--", "--placement", str(place),
                    "--duration", str(a.warmup + a.duration + 600), "--mbufs", str(mbufs),
                    *(["--lookup", "lpm", "--routes", str(rules4), "--routes", str(rules6)] if lpm else [])]

        programs: dict[str, Callable[[str], list[str]]] = {
            "l3fwd fib (rte_fib6)": cmd_l3fwd,
            "ipfwd lpm (rte_fib6)": lambda fp: cmd_ipfwd(fp, True),
            "ipfwd hash l1": lambda fp: cmd_ipfwd(fp, False),
        }
        runs, on_cpu = run_rounds(programs, a.rounds, a.warmup, a.duration, tmp / "program.log")
    ratios = [i / l for i, l in zip(runs["ipfwd lpm (rte_fib6)"], runs["l3fwd fib (rte_fib6)"])]
    ratios_cpu = [i / l for i, l in zip(on_cpu["ipfwd lpm (rte_fib6)"], on_cpu["l3fwd fib (rte_fib6)"])]
    counts = np.bincount(depth, minlength=129)
    print(f"bench/ipfwd-lpm.py --ipv6: build {a.build} ({btype}); forwarding context {ctx}; "
          f"{a.rounds} alternating rounds, {a.warmup:g} s warm-up, {a.duration:g} s window; "
          f"preparation {prep:.0f} s (table, capture, l3fwd build)")
    print(f"table: {depth.size} IPv6 routes (modelled, tools/routegen.py --family ipv6 seed {a.seed}), "
          f"/48 share {counts[48] / depth.size:.3f}, {groups} TRIE groups filled, {fib6_tbl8} given to each; "
          f"capture: {a.packets} 64-byte IPv6/UDP packets to distinct addresses inside its routes")
    print("ports: 0 = net_null (sink), 1 = net_pcap infinite_rx (source); memory: " + " ".join(mem)
          + (" (hugepages)" if "--no-huge" not in mem else ""))
    print()
    print(f"{'program':30} {'Mpps median':>12} {'spread':>12}  per round (measured: sink tx packets / "
          "window, DPDK telemetry)")
    for name, xs in runs.items():
        print(f"{name:30} {statistics.median(xs) / 1e6:>12.3f} {spread(xs):>12}  "
              + " ".join(f"{x / 1e6:.2f}" for x in xs))
    print(f"{'ratio ipfwd lpm / l3fwd fib':30} {statistics.median(ratios):>12.3f} "
          f"{min(ratios):.3f}-{max(ratios):.3f}  " + " ".join(f"{x:.3f}" for x in ratios))
    print()
    print(f"{'on a CPU':30} {'Mpps median':>12} {'spread':>12}  per round (measured: the same packets / the "
          "seconds the process ran on a CPU in the window, /proc schedstat)")
    for name, xs in on_cpu.items():
        print(f"{name:30} {statistics.median(xs) / 1e6:>12.3f} {spread(xs):>12}  "
              + " ".join(f"{x / 1e6:.2f}" for x in xs))
    print(f"{'ratio ipfwd lpm / l3fwd fib':30} {statistics.median(ratios_cpu):>12.3f} "
          f"{min(ratios_cpu):.3f}-{max(ratios_cpu):.3f}  " + " ".join(f"{x:.3f}" for x in ratios_cpu))
    shares = {name: statistics.median(p / c for p, c in zip(runs[name], on_cpu[name])) for name in runs}
    print("median share of the window on a CPU: " + ", ".join(f"{n} {v:.2f}" for n, v in shares.items()))
    print(f"load average (1 min, measured) before/after: {load0:.2f} / {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs")
    print(f"summary: ipv6 ipfwd / l3fwd = {statistics.median(ratios):.3f} (measured: median of "
          f"{len(ratios)} per-round ratios of Mpps, range {min(ratios):.3f}-{max(ratios):.3f}; l3fwd --lookup fib; "
          f"on a CPU {statistics.median(ratios_cpu):.3f}, range {min(ratios_cpu):.3f}-{max(ratios_cpu):.3f})")
    return 0


@harness.broken_pipe_safe
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")),
                    help="Meson build with apps/ipfwd/ipfwd (default $PIPEPLACE_BUILD or build/)")
    ap.add_argument("--routes", type=int, default=1_000_000, help="prefixes in the full table (1000000)")
    ap.add_argument("--lpm-routes", type=int, default=1 << 16,
                    help="prefixes in the table l3fwd's rte_lpm loads (65536)")
    ap.add_argument("--packets", type=int, default=1 << 16,
                    help="capture size: distinct destinations replayed (65536)")
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (3)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds after forwarding starts (1)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds, at least 3 (3)")
    ap.add_argument("--context", type=int, default=None,
                    help="the forwarding context (default: the last this process may use)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ipv6", action="store_true",
                    help="IPv6: ipfwd against l3fwd --lookup fib (rte_fib6) on a modelled IPv6 table")
    ap.add_argument("--routes6", type=int, default=routegen.ROUTES6_DEFAULT,
                    help="--ipv6: prefixes in the IPv6 table (200000)")
    a = ap.parse_args(argv)
    exe = a.build / "apps" / "ipfwd" / "ipfwd"
    if not exe.is_file():
        ap.error(f"--build {a.build}: no apps/ipfwd/ipfwd there (build with -Dparts=runtime,ipfwd)")
    opts = json.loads((a.build / "meson-info" / "intro-buildoptions.json").read_text())
    san = next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")
    btype = next((str(o["value"]) for o in opts if o["name"] == "buildtype"), "?")
    if san != "none":
        ap.error(f"--build {a.build} is a sanitizer build (b_sanitize={san}): its figures mean nothing")
    if a.rounds < 3 or a.duration < 1 or a.warmup < 0:
        ap.error(f"--rounds {a.rounds} --duration {a.duration:g} --warmup {a.warmup:g}: "
                 "need at least 3 rounds, a window of at least 1 s and a warm-up >= 0")
    if not 1 <= a.packets <= 1 << 22 or a.routes < 1 or a.lpm_routes < 1 or a.routes6 < 100:
        ap.error(f"--packets {a.packets} --routes {a.routes} --lpm-routes {a.lpm_routes} --routes6 "
                 f"{a.routes6}: expected 1..4194304 packets, >= 1 route (>= 100 IPv6 routes)")
    ctxs = sorted(os.sched_getaffinity(0))
    ctx = ctxs[-1] if a.context is None else a.context
    if ctx not in ctxs:
        ap.error(f"--context {ctx}: not one this process may use ({ctxs})")
    if a.ipv6:
        return main_ipv6(a, exe, btype, ctx)

    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_ipfwd_lpm_") as td:
        tmp = Path(td)
        t = time.monotonic()
        rules6 = tmp / "routes6.rules"  # l3fwd reads rule files only with both families given
        rules6.write_text("R2001:db8::/32 0\n")
        tables: dict[str, tuple[Path, Path, np.ndarray]] = {}
        for name, n in (("full", a.routes), ("lpm", a.lpm_routes)):
            prefix, depth, hop = routegen.generate(n, 1, a.seed)  # every next hop: port 0
            rules = tmp / f"{name}.rules"
            routegen.write_rules(rules, prefix, depth, hop)
            dsts = routegen.destinations_in(prefix, depth, a.packets, np.random.default_rng(a.seed))
            cap = tmp / f"{name}.pcap"
            ipfwd_traffic.write_pcap(cap, (ipfwd_traffic.packet(int(d), 0x0B000001 + i % 65000, 64, 64,
                                                                 1024 + i % 60000)
                                           for i, d in enumerate(dsts)))
            tables[name] = (rules, cap, depth)
        mbufs = a.packets + 8192
        l3fwd = build_l3fwd(tmp, "bench/ipfwd-lpm.py", max(a.routes, a.lpm_routes, 1 << 16), a.packets)
        prep = time.monotonic() - t
        need_mb = mbufs * (2048 + 128 + 256) // (1 << 20) + 3 * 64 + 2 * a.routes * 256 // (1 << 20) + 256
        mem = [] if harness.free_hugepage_mb() >= need_mb else ["--no-huge", "-m", str(need_mb)]
        place = harness.write_placement(tmp / "p.json", harness.placement(
            "ipfwd", [harness.instance(SOURCE_PORT, 0, SINK_PORT, 0, ctx, ctx, ctx)], variant="l1"))

        def vdevs(table: str) -> list[str]:
            return ["--vdev", "net_null0", "--vdev", f"net_pcap0,rx_pcap={tables[table][1]},infinite_rx=1"]

        def cmd_l3fwd(fp: str, table: str, lookup: str) -> list[str]:
            return [str(l3fwd), "--no-pci", "--file-prefix", fp, "-l", str(ctx),
                    "--log-level", "lib.eal:warning", *vdevs(table), *mem,
                    "--", "-p", "0x3", "--config", f"({SOURCE_PORT},0,{ctx})", "--lookup", lookup,
                    "--parse-ptype", "--rule_ipv4", str(tables[table][0]), "--rule_ipv6", str(rules6)]

        def cmd_ipfwd(fp: str, table: str, lpm: bool) -> list[str]:
            return [str(exe), "--no-pci", "--file-prefix", fp, "--log-level", "lib.eal:warning",
                    *vdevs(table), *mem, "--", "--placement", str(place),
                    "--duration", str(a.warmup + a.duration + 600), "--mbufs", str(mbufs),
                    *(["--lookup", "lpm", "--routes", str(tables[table][0])] if lpm else [])]

        programs = {
            "l3fwd fib, full": lambda fp: cmd_l3fwd(fp, "full", "fib"),
            "ipfwd lpm, full": lambda fp: cmd_ipfwd(fp, "full", True),
            "ipfwd hash l1, full capture": lambda fp: cmd_ipfwd(fp, "full", False),
            "l3fwd lpm, lpm": lambda fp: cmd_l3fwd(fp, "lpm", "lpm"),
            "ipfwd lpm, lpm": lambda fp: cmd_ipfwd(fp, "lpm", True),
        }
        runs, on_cpu = run_rounds(programs, a.rounds, a.warmup, a.duration, tmp / "program.log")
        ratios = {"full": [i / l for i, l in zip(runs["ipfwd lpm, full"], runs["l3fwd fib, full"])],
                  "lpm": [i / l for i, l in zip(runs["ipfwd lpm, lpm"], runs["l3fwd lpm, lpm"])]}

    print(f"bench/ipfwd-lpm.py: build {a.build} ({btype}); forwarding context {ctx}; "
          f"{a.rounds} alternating rounds, {a.warmup:g} s warm-up, {a.duration:g} s window; "
          f"preparation {prep:.0f} s (tables, captures, l3fwd build)")
    for name, (_, _, depth) in tables.items():
        counts = np.bincount(depth, minlength=33)
        print(f"table {name}: {depth.size} routes (modelled, tools/routegen.py seed {a.seed}), "
              f"/24 share {counts[24] / depth.size:.3f}; capture: {a.packets} 64-byte packets to "
              "distinct addresses inside its routes")
    print("ports: 0 = net_null (sink), 1 = net_pcap infinite_rx (source); hugepages: "
          + ("yes" if not mem else "no, " + " ".join(mem)))
    print()
    print(f"{'program, table':30} {'Mpps median':>12} {'spread':>12} {'on a CPU':>9}  (measured: sink tx "
          "packets / window, read through DPDK telemetry; on a CPU: / the seconds it ran on one)")
    for name, xs in runs.items():
        print(f"{name:30} {statistics.median(xs) / 1e6:>12.3f} {spread(xs):>12} "
              f"{statistics.median(on_cpu[name]) / 1e6:>9.3f}")
    for table, xs in ratios.items():
        label = f"ratio ipfwd lpm / l3fwd {'fib' if table == 'full' else 'lpm'}, {table}"
        print(f"{label:30} {statistics.median(xs):>12.3f} {min(xs):.3f}-{max(xs):.3f}  (measured, per round)")
    print(f"load average (1 min, measured) before/after: {load0:.2f} / {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
