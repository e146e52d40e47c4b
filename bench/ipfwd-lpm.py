#!/usr/bin/env python3
"""bench/ipfwd-lpm.py: ipfwd --lookup lpm against DPDK's l3fwd LPM with the
same rule file, the same capture, the same ports and the same context,
measured side by side in one run (Mpps and ratio, alternating rounds,
median and spread).  ipfwd with its default hash lookup (variant l1) on the
same capture is a third row: what the route lookup costs.

Routes: a full-size modelled Internet table from tools/routegen.py (default
1,000,000 prefixes, every next hop port 0).  Capture: 64-byte UDP packets
whose destinations lie inside routes drawn uniformly from the table (every
packet has a route), replayed by net_pcap (infinite_rx=1) into net_null.
Ports, in this order for every program: 0 = net_null (the sink every route
points at), 1 = net_pcap.  Each program forwards on one context: l3fwd's
one lcore, ipfwd's R, P and T all on it.

l3fwd is built at benchmark time from the installed examples
(/usr/share/dpdk/examples/l3fwd, Debian's dpdk-doc) into a temporary
directory with `make` (pkg-config libdpdk), never kept.  Its source is
changed in three constants only, for capacity: IPV4_L3FWD_LPM_MAX_RULES
(1024 in 22.11: a full table does not fit) is raised to the route count,
and the mbuf pool gets room for the capture net_pcap keeps in mbufs.  It
runs with --lookup lpm --parse-ptype: without --parse-ptype net_pcap's
packets carry no packet type and l3fwd 22.11 skips the LPM lookup and sends
every packet back out of its input port (checked below: the benchmark
fails if l3fwd sends anything out of port 1).

Rates are measured the same way for both programs, from outside: the sink
port's transmitted packets read twice through DPDK telemetry
(/ethdev/stats), after a warm-up, over the measured window.

Run with the project's venv: .venv/bin/python bench/ipfwd-lpm.py
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "apps" / "ipfwd"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tools"))
import harness  # noqa: E402  (tests/harness: placements, pcap files)
try:
    import ipfwd_traffic  # noqa: E402
    import numpy as np  # noqa: E402
    import routegen  # noqa: E402
except ImportError as e:  # numpy missing: not the project's venv
    sys.exit(f"bench/ipfwd-lpm.py: {e}; run it with the project's venv: "
             ".venv/bin/python bench/ipfwd-lpm.py")

L3FWD_SRC = Path("/usr/share/dpdk/examples")
SINK_PORT, SOURCE_PORT = 0, 1


def build_l3fwd(tmp: Path, max_rules: int, extra_mbufs: int) -> Path:
    """Copy the l3fwd example (and the shared headers it includes) into tmp,
    raise its capacity constants, build it with make; the binary's path."""
    if not (L3FWD_SRC / "l3fwd" / "Makefile").is_file():
        raise SystemExit(f"bench/ipfwd-lpm.py: no l3fwd example at {L3FWD_SRC / 'l3fwd'}: "
                         "install Debian's dpdk-doc (tools/setup.sh does)")
    dst = tmp / "examples"
    shutil.copytree(L3FWD_SRC / "l3fwd", dst / "l3fwd")
    if (L3FWD_SRC / "common").is_dir():
        shutil.copytree(L3FWD_SRC / "common", dst / "common")
    lpm = dst / "l3fwd" / "l3fwd_lpm.c"
    text = lpm.read_text()
    old = "#define IPV4_L3FWD_LPM_MAX_RULES         1024"
    if old not in text:
        raise SystemExit(f"bench/ipfwd-lpm.py: {lpm}: '{old}' not found: another l3fwd version?")
    lpm.write_text(text.replace(old, f"#define IPV4_L3FWD_LPM_MAX_RULES {max_rules}"))
    main = dst / "l3fwd" / "main.c"
    text = main.read_text()
    old = "nb_lcores*MEMPOOL_CACHE_SIZE),"
    if old not in text:
        raise SystemExit(f"bench/ipfwd-lpm.py: {main}: '{old}' not found: another l3fwd version?")
    main.write_text(text.replace(old, f"nb_lcores*MEMPOOL_CACHE_SIZE + {extra_mbufs}),"))
    r = subprocess.run(["make", "-C", str(dst / "l3fwd"), "static"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bench/ipfwd-lpm.py: building l3fwd failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return dst / "l3fwd" / "build" / "l3fwd"


class Telemetry:
    """DPDK telemetry of a running process (its --file-prefix): port counters."""

    def __init__(self, file_prefix: str, timeout: float) -> None:
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


def measure(cmd: list[str], file_prefix: str, warmup: float, duration: float,
            startup_timeout: float = 180) -> tuple[float, dict[str, int], dict[str, int], str]:
    """Start cmd, wait until its sink port transmits, then the warm-up, then
    count the sink's transmitted packets over the window.  (pps, sink and
    source port counters at the end, program output)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        tel = Telemetry(file_prefix, startup_timeout)
        deadline = time.monotonic() + startup_timeout
        while tel.port(SINK_PORT)["opackets"] == 0:
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{cmd[0]} never forwarded (exit {p.poll()})")
            time.sleep(0.2)
        time.sleep(warmup)
        t0, c0 = time.monotonic(), tel.port(SINK_PORT)["opackets"]
        time.sleep(duration)
        t1, c1 = time.monotonic(), tel.port(SINK_PORT)["opackets"]
        sink, source = tel.port(SINK_PORT), tel.port(SOURCE_PORT)
        tel.close()
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
    return (c1 - c0) / (t1 - t0), sink, source, out


def spread(xs: list[float]) -> str:
    return f"{min(xs) / 1e6:.2f}-{max(xs) / 1e6:.2f}"


@harness.broken_pipe_safe
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")),
                    help="Meson build with apps/ipfwd/ipfwd (default $PIPEPLACE_BUILD or build/)")
    ap.add_argument("--routes", type=int, default=1_000_000, help="prefixes in the table (1000000)")
    ap.add_argument("--packets", type=int, default=1 << 16,
                    help="capture size: distinct destinations replayed (65536)")
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (3)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds after forwarding starts (1)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds, at least 3 (3)")
    ap.add_argument("--context", type=int, default=None,
                    help="the forwarding context (default: the last this process may use)")
    ap.add_argument("--seed", type=int, default=1)
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
    if not 1 <= a.packets <= 1 << 22 or a.routes < 1:
        ap.error(f"--packets {a.packets} --routes {a.routes}: expected 1..4194304 packets, >= 1 route")
    ctxs = sorted(os.sched_getaffinity(0))
    ctx = ctxs[-1] if a.context is None else a.context
    if ctx not in ctxs:
        ap.error(f"--context {ctx}: not one this process may use ({ctxs})")
    main_ctx = next((c for c in ctxs if c != ctx), None)
    if main_ctx is None:
        ap.error("need at least 2 contexts (a main lcore besides the forwarding one)")

    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_ipfwd_lpm_") as td:
        tmp = Path(td)
        t = time.monotonic()
        prefix, depth, hop = routegen.generate(a.routes, 1, a.seed)  # every next hop: port 0
        rules = tmp / "routes.rules"
        routegen.write_rules(rules, prefix, depth, hop)
        rules6 = tmp / "routes6.rules"  # l3fwd reads a rule file only with both families given
        rules6.write_text("R2001:db8::/32 0\n")
        dsts = routegen.destinations_in(prefix, depth, a.packets, np.random.default_rng(a.seed))
        cap = tmp / "in.pcap"
        ipfwd_traffic.write_pcap(cap, (ipfwd_traffic.packet(int(d), 0x0B000001 + i % 65000, 64, 64,
                                                             1024 + i % 60000)
                                       for i, d in enumerate(dsts)))
        mbufs = a.packets + 8192
        l3fwd = build_l3fwd(tmp, max(a.routes, 1024), a.packets)
        prep = time.monotonic() - t
        need_mb = mbufs * (2048 + 128 + 256) // (1 << 20) + 3 * 64 + 2 * a.routes * 256 // (1 << 20) + 256
        mem = [] if harness.free_hugepage_mb() >= need_mb else ["--no-huge", "-m", str(need_mb)]
        vdevs = ["--vdev", "net_null0", "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1"]
        place = harness.write_placement(tmp / "p.json", harness.placement(
            "ipfwd", [harness.instance(SOURCE_PORT, 0, SINK_PORT, 0, ctx, ctx, ctx)], variant="l1"))
        ipfwd_args = ["--placement", str(place), "--duration", str(a.warmup + a.duration + 600),
                      "--mbufs", str(mbufs)]

        def cmd_l3fwd(fp: str) -> list[str]:
            return [str(l3fwd), "--no-pci", "--file-prefix", fp, "-l", f"{main_ctx},{ctx}",
                    "--main-lcore", str(main_ctx), "--log-level", "lib.eal:warning", *vdevs, *mem,
                    "--", "-p", "0x3", "--config", f"({SOURCE_PORT},0,{ctx})", "--lookup", "lpm",
                    "--parse-ptype", "--rule_ipv4", str(rules), "--rule_ipv6", str(rules6)]

        def cmd_ipfwd(fp: str, lpm: bool) -> list[str]:
            return [str(exe), "--no-pci", "--file-prefix", fp, "--log-level", "lib.eal:warning",
                    *vdevs, *mem, "--", *ipfwd_args,
                    *(["--lookup", "lpm", "--routes", str(rules)] if lpm else [])]

        runs: dict[str, list[float]] = {"l3fwd": [], "ipfwd lpm": [], "ipfwd hash": []}
        ratios: list[float] = []
        for r in range(a.rounds):
            order = ["l3fwd", "ipfwd lpm", "ipfwd hash"]
            if r % 2:
                order.reverse()  # alternate: neither program always runs first
            got: dict[str, float] = {}
            for name in order:
                fp = f"bench_lpm_{name.replace(' ', '_')}_{r}_{os.getpid()}"
                cmd = cmd_l3fwd(fp) if name == "l3fwd" else cmd_ipfwd(fp, name == "ipfwd lpm")
                pps, sink, source, out = measure(cmd, fp, a.warmup, a.duration)
                if source.get("opackets", 0) != 0:
                    raise RuntimeError(f"{name}: {source['opackets']} packets went back out of the source "
                                       f"port: lookups failed or were skipped\n{out[-2000:]}")
                got[name] = pps
                runs[name].append(pps)
            ratios.append(got["ipfwd lpm"] / got["l3fwd"])

    counts = np.bincount(depth, minlength=33)
    print(f"bench/ipfwd-lpm.py: build {a.build} ({btype}); forwarding context {ctx} "
          f"(main lcore {main_ctx}); {a.rounds} alternating rounds, {a.warmup:g} s warm-up, "
          f"{a.duration:g} s window; preparation {prep:.0f} s (routes, capture, l3fwd build)")
    print(f"routes: {prefix.size} (modelled, tools/routegen.py seed {a.seed}), /24 share "
          f"{counts[24] / prefix.size:.3f}; capture: {a.packets} 64-byte packets to distinct "
          "addresses inside routes (every packet routed)")
    print("ports: 0 = net_null (sink), 1 = net_pcap infinite_rx (source); hugepages: "
          + ("yes" if not mem else "no, " + " ".join(mem)))
    print()
    print(f"{'program':34} {'Mpps median':>12} {'spread':>12}  (measured: sink tx packets / window, telemetry)")
    labels = {"l3fwd": "l3fwd --lookup lpm (rte_lpm)",
              "ipfwd lpm": "ipfwd --lookup lpm (rte_fib)",
              "ipfwd hash": "ipfwd hash l1 (no route table)"}
    for name, xs in runs.items():
        print(f"{labels[name]:34} {statistics.median(xs) / 1e6:>12.3f} {spread(xs):>12}")
    print(f"{'ratio ipfwd lpm / l3fwd':34} {statistics.median(ratios):>12.3f} "
          f"{min(ratios):.3f}-{max(ratios):.3f}  (measured, per round)")
    print(f"load average (1 min, measured) before/after: {load0:.2f} / {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
