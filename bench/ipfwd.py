#!/usr/bin/env python3
"""bench/ipfwd.py: ipfwd against DPDK's own l3fwd (LPM) and testpmd io
forwarding, side by side in one run, as Mpps (measured) and as ratios to
l3fwd.

Every contender reads the same 64-byte capture through net_pcap
(infinite_rx=1) and sends into net_null (no-rx=1), and forwards on the same
one context:
  l3fwd LPM      DPDK's example, built here at benchmark time from the
                 installed examples (Debian dpdk-doc,
                 /usr/share/dpdk/examples/l3fwd) into a temporary directory;
                 one lcore, two /1 routes to the sink port; --parse-ptype
                 (the virtual ports give no packet types).  As shipped it asks
                 for Rx checksum offload, which the virtual ports lack and
                 which makes it refuse to start: the copy is built with
                 rxmode.offloads = 0 (l3fwd then checks no IPv4 checksum;
                 ipfwd computes it in software).  A test bed with no dpdk-doc
                 or compiler takes the copies built beforehand on the build
                 machine (--l3fwd-dir; tools/testbed-bundle.sh --peers).
  l3fwd LPM + sw IPv4 checksum check
                 the same, with the checksum check its RFC 1812 step leaves
                 to the NIC done in software (rte_raw_cksum, bad checksum to
                 BAD_PORT): l3fwd at ipfwd's work on these ports.
  testpmd io     the touch-nothing ceiling: one forwarding lcore, no
                 statistics printing, --no-lsc-interrupt, the same pool
                 size, mbuf size and burst as ipfwd.
  ipfwd l1/mem   R+P+T co-located on the one context, and P alone on it
                 with R and T on a context of another core and, where the
                 machine has SMT, on the other thread of P's core (one row
                 each: bench/lib/split_contexts.py says why); its pool on the
                 runtime's default driver (stack, a LIFO; l3fwd and testpmd
                 keep DPDK's ring_mp_mc): in these two shapes the two
                 drivers measure alike (assign/research/pool-ops.py).
l3fwd and testpmd are counted from the sink port through DPDK's telemetry
socket (opackets over the window); ipfwd from its own statistics window.
Contenders alternate within each round (--rounds, >= 3): medians and spread
(min-max) are printed.  Cycles per packet: the runtime's TSC counters of
the P task (measured); LLC misses from perf stat where the PMU is visible.

Run with the project's venv on a release build:
  .venv/bin/python bench/ipfwd.py --build build
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "apps" / "ipfwd"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench" / "lib"))
import harness  # noqa: E402  (tests/harness: run_app, placements, pcap files)
from l3fwd_build import L3FWD_SRC, build_l3fwd, prebuilt_l3fwd  # noqa: E402  (bench/lib)
try:
    import ipfwd_traffic  # noqa: E402
    import numpy as np  # noqa: E402
    from split_contexts import split_layouts  # noqa: E402  (bench/lib; needs the assign package)
except ImportError as e:  # numpy or assign missing: not the project's venv
    sys.exit(f"bench/ipfwd.py: {e}; run it with the project's venv: .venv/bin/python bench/ipfwd.py")

SINK = "net_null0,no-rx=1"
RUNTIME_DIR = Path("/var/run/dpdk") if os.geteuid() == 0 else Path(
    os.environ.get("XDG_RUNTIME_DIR", "/tmp")) / "dpdk"


def telemetry(prefix: str, cmd: str) -> dict:
    """One command on a DPDK process's telemetry socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(2.0)
        s.connect(str(RUNTIME_DIR / prefix / "dpdk_telemetry.v2"))
        s.recv(4096)
        s.send(cmd.encode())
        return json.loads(s.recv(65536))


def sink_packets(prefix: str) -> int | None:
    try:
        return int(telemetry(prefix, "/ethdev/stats,1")["/ethdev/stats"]["opackets"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_dpdk_tool(cmd: list[str], prefix: str, warmup: float, duration: float) -> float:
    """Start a DPDK program, wait for its sink port to move packets, let it
    warm up, count sink packets over the window.  Returns packets/s."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, preexec_fn=harness.die_with_parent)
    try:
        end = time.monotonic() + 120
        while (sink_packets(prefix) or 0) == 0:
            if p.poll() is not None:
                raise RuntimeError(f"exit {p.returncode} before forwarding: {' '.join(cmd)}\n"
                                   f"{p.stderr.read()[-2000:] if p.stderr else ''}")
            if time.monotonic() > end:
                raise RuntimeError(f"no packet at the sink after 120 s: {' '.join(cmd)}")
            time.sleep(0.05)
        time.sleep(warmup)
        n0, t0 = sink_packets(prefix), time.monotonic()
        time.sleep(duration)
        n1, t1 = sink_packets(prefix), time.monotonic()
        if n0 is None or n1 is None:
            raise RuntimeError(f"telemetry did not answer: {' '.join(cmd)}")
        return (n1 - n0) / (t1 - t0)
    finally:
        p.send_signal(signal.SIGINT)
        try:
            p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()


def eal(prefix: str, lcores: str, cap: Path, mem: list[str]) -> list[str]:
    return ["--no-pci", "--file-prefix", prefix, "-l", lcores, "--log-level", "lib.eal:warning",
            "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", SINK, *mem, *harness.peer_driver_args()]


def memory_args(mbufs: int, data: int) -> list[str]:
    """The same memory for every contender: hugepages when enough are free
    for the pool, otherwise --no-huge for all."""
    need_mb = mbufs * (data + 128 + 256) // (1 << 20) + 256
    return [] if harness.free_hugepage_mb() >= need_mb else ["--no-huge", "-m", str(need_mb + 256)]


@dataclass
class Setup:
    """What every contender of one capture shares."""
    cap: Path
    mbufs: int
    data: int  # mbuf data room without headroom
    mem: list[str]
    ctx_p: int
    ctx_main: int  # testpmd's idle main lcore
    warmup: float
    duration: float
    tmp: Path


def l3fwd_pps(exe: Path, rules: tuple[Path, Path], s: Setup, tag: str) -> float:
    prefix = f"bench_l3_{tag}_{os.getpid()}"
    cmd = [str(exe), *eal(prefix, str(s.ctx_p), s.cap, s.mem), "--", "-p", "0x3", "--config", f"(0,0,{s.ctx_p})",
           f"--rule_ipv4={rules[0]}", f"--rule_ipv6={rules[1]}", "--parse-ptype", "--lookup=lpm"]
    return run_dpdk_tool(cmd, prefix, s.warmup, s.duration)


def testpmd_pps(s: Setup, tag: str) -> float:
    prefix = f"bench_tp_{tag}_{os.getpid()}"
    cmd = ["dpdk-testpmd", *eal(prefix, f"{s.ctx_main},{s.ctx_p}", s.cap, s.mem), "--main-lcore", str(s.ctx_main),
           "--", "--forward-mode=io", "--auto-start", "--nb-cores=1", "--rxq=1", "--txq=1", "--burst=32",
           "--no-lsc-interrupt", "--no-rmv-interrupt", "--mbcache=256", f"--total-num-mbufs={s.mbufs}",
           f"--mbuf-size={s.data + 128}", "--rxd=1024", "--txd=1024"]
    return run_dpdk_tool(cmd, prefix, s.warmup, s.duration)


@dataclass
class IpfwdRun:
    pps: float
    p_cycles_per_packet: float  # TSC cycles of the P task per packet it processed
    all_cycles_per_packet: float  # TSC cycles of R, P and T per packet received
    llc_misses_per_packet: float | None


def perf_llc(pid: int, seconds: float) -> tuple[float | None, str]:
    """LLC-load-misses of a process over `seconds` (perf stat), or None and why."""
    if shutil.which("perf") is None:
        return None, "perf not installed"
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", "LLC-load-misses", "-p", str(pid), "--", "sleep",
                        str(seconds)], capture_output=True, text=True)
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and "LLC-load-misses" in f[2]:
            return (float(f[0]), "") if f[0].replace(".", "").isdigit() else (None, f"perf: {f[0]}")
    return None, f"perf stat: {p.stderr.strip()[-200:] or 'no output'}"


PERF_NOTE: list[str] = []


def ipfwd_run(exe: Path, variant: str, rt: int | None, s: Setup, tag: str, want_perf: bool) -> IpfwdRun:
    """ipfwd with P on the forwarding context and R and T on context `rt` (None: fused, all three there)."""
    ctx_rt = s.ctx_p if rt is None else rt
    place = harness.placement("ipfwd", [harness.instance(0, 0, 1, 0, ctx_rt, s.ctx_p, ctx_rt)], variant=variant)
    stats_path = s.tmp / f"stats_{tag}.json"
    p, stats_path = harness.start_app(exe, f"bench_ipfwd_{tag}_{os.getpid()}", s.tmp,
                                      [f"net_pcap0,rx_pcap={s.cap},infinite_rx=1", SINK], place,
                                      ["--warmup", str(s.warmup), "--mbufs", str(s.mbufs), "--mbuf-size",
                                       str(s.data)], duration=s.duration, eal=s.mem, stats=stats_path)
    llc, perf_s = None, max(0.5, s.duration - 1.5)
    if want_perf:
        time.sleep(s.warmup + 3.0)  # EAL start and capture load take a few seconds: within the window
        llc, why = perf_llc(p.pid, perf_s)
        if llc is None and why not in PERF_NOTE:
            PERF_NOTE.append(why)
    r = harness.finish(p, stats_path, timeout=s.warmup + s.duration + 120)
    if r.rc != 0 or r.stats is None:
        raise RuntimeError(f"ipfwd exit {r.rc}: {r.stderr[-2000:]}")
    st = r.stats
    if st["accounting_ok"] is not True:
        raise RuntimeError(f"ipfwd {variant}: accounting violated")
    task = {t["role"]: t for t in st["tasks"]}
    cpp = task["P"]["cycles"] / task["P"]["packets"] if task["P"]["packets"] else float("nan")
    all_cpp = (sum(t["cycles"] for t in task.values()) / task["R"]["packets"] if task["R"]["packets"]
               else float("nan"))
    pps = st["total"]["pps"]
    return IpfwdRun(pps, cpp, all_cpp, llc / (pps * perf_s) if llc is not None and pps > 0 else None)


def callgrind_ir(profile: Path, function: str) -> int:
    """Instructions executed in `function` and what it called (inclusive
    Ir) in a callgrind profile."""
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(profile)], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        # "1,234 (12.34%)  file:function [object]", or "( 9.87%)" under 10 %
        f = line.split()
        if f and f[0].replace(",", "").isdigit() and any(x.endswith(":" + function) for x in f[1:4]):
            return int(f[0].replace(",", ""))
    raise RuntimeError(f"{profile}: no function {function} in callgrind_annotate's output")


def pcap_rx_calls(profile: Path, caller: str) -> int:
    """How many times `caller` (or its compiler-split parts, `caller.cold`)
    called into net_pcap's receive function, from callgrind's call counts:
    blocks of callgrind_annotate --tree=caller, each its callers' lines
    ("< fn (Nx)") then the callee's ("* fn")."""
    p = subprocess.run(["callgrind_annotate", "--tree=caller", str(profile)], capture_output=True, text=True)
    calls = 0
    for block in p.stdout.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or " *  " not in lines[-1] or "librte_net_pcap" not in lines[-1]:
            continue
        for line in lines[:-1]:
            f = line.split()
            if "<" in f and f[f.index("<") + 1].split(":")[-1].split(".")[0] == caller:
                n = f[f.index("<") + 2]  # (12,476x)
                calls += int(n.strip("(x)").replace(",", ""))
    if calls == 0:
        raise RuntimeError(f"{profile}: no call from {caller} into librte_net_pcap")
    return calls


# --fair-sched=yes: without it the busy forwarding thread can starve l3fwd's
# telemetry thread, which tells the script when enough packets went out.
VALGRIND = ["valgrind", "--tool=callgrind", "--fair-sched=yes"]
VG_MEM = ["--no-huge", "-m", "1024"]


def ipfwd_instructions(exe: Path, cap: Path, tmp: Path, packets: int, tag: str) -> float:
    """Instructions per packet of ipfwd-l1 with R+P+T fused on one context,
    under callgrind: the worker's loop (pp_lcore_main, inclusive: ports,
    runtime and app) / packets received (its own exact count).  Checks that
    net_pcap returned a full burst on every call (packets = PP_BURST x its
    calls), which l3fwd's count rests on."""
    packets = -(-packets // BURST) * BURST  # whole bursts: R asks for no more than the limit leaves
    ctx = sorted(os.sched_getaffinity(0))[0]
    place = harness.write_placement(tmp / f"vg_{tag}.json", harness.placement(
        "ipfwd", [harness.instance(0, 0, 1, 0, ctx, ctx, ctx)], variant="l1"))
    prof, stats = tmp / f"callgrind_{tag}.out", tmp / f"vg_stats_{tag}.json"
    cmd = [*VALGRIND, f"--callgrind-out-file={prof}", str(exe),
           *harness.eal_args(f"bench_vg_{tag}_{os.getpid()}", [f"net_pcap0,rx_pcap={cap},infinite_rx=1", SINK],
                             extra=VG_MEM),
           "--", "--placement", str(place), "--packets", str(packets), "--mbufs", "16384", "--mbuf-size", "2048",
           "--stats", str(stats)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, preexec_fn=harness.die_with_parent)
    if p.returncode != 0:
        raise RuntimeError(f"ipfwd under callgrind: exit {p.returncode}: {p.stderr[-2000:]}")
    rx = json.loads(stats.read_text())["total"]["rx_packets"]
    calls = pcap_rx_calls(prof, "pp_lcore_main")
    if rx != BURST * calls:
        raise RuntimeError(f"ipfwd under callgrind: {rx} packets in {calls} net_pcap receive calls, not "
                           f"{BURST} per call: l3fwd's packet count (bursts x {BURST}) would be wrong")
    return callgrind_ir(prof, "pp_lcore_main") / rx


BURST = 32  # ipfwd's PP_BURST and l3fwd's MAX_PKT_BURST


def l3fwd_instructions(exe: Path, rules: tuple[Path, Path], cap: Path, tmp: Path, packets: int) -> float:
    """Instructions per packet of l3fwd under callgrind: its forwarding loop
    (lpm_main_loop, inclusive) / packets received.  l3fwd counts nothing
    itself; its packets are BURST x its calls into net_pcap's receive
    function, which always fills the burst from an infinite_rx capture
    (ipfwd_instructions checks that on the same port and capture).  The
    sink's telemetry counter only says when about `packets` went out."""
    prefix, prof = f"bench_vg_l3_{os.getpid()}", tmp / "callgrind_l3fwd.out"
    ctx = sorted(os.sched_getaffinity(0))[0]
    cmd = [*VALGRIND, f"--callgrind-out-file={prof}", str(exe), "--no-pci", "--file-prefix", prefix, "-l", str(ctx),
           "--log-level", "lib.eal:warning", "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", SINK,
           *VG_MEM, "--", "-p", "0x3", "--config", f"(0,0,{ctx})", f"--rule_ipv4={rules[0]}",
           f"--rule_ipv6={rules[1]}", "--parse-ptype", "--lookup=lpm"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=harness.die_with_parent)
    end, sent = time.monotonic() + 900, 0
    try:
        while sent < packets:
            if p.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"l3fwd under callgrind: exit {p.returncode} or 900 s after "
                                   f"{sent} packets: {' '.join(cmd)}")
            time.sleep(0.2)
            sent = sink_packets(prefix) or 0
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=300)
    return callgrind_ir(prof, "lpm_main_loop") / (BURST * pcap_rx_calls(prof, "lpm_main_loop"))


L3_CK = "l3fwd LPM + sw IPv4 checksum check"


@dataclass
class Row:
    name: str
    pps: list[float] = field(default_factory=list)
    cpp: list[float] = field(default_factory=list)
    all_cpp: list[float] = field(default_factory=list)
    llc: list[float] = field(default_factory=list)


def build_type(build: Path) -> str:
    opts = json.loads((build / "meson-info" / "intro-buildoptions.json").read_text())
    return next((str(o["value"]) for o in opts if o["name"] == "buildtype"), "?")


def check_build(ap: argparse.ArgumentParser, opt: str, build: Path) -> Path:
    """ipfwd of a Meson release build, or a usage error naming the option."""
    exe = build / "apps" / "ipfwd" / "ipfwd"
    if not exe.is_file():
        ap.error(f"{opt} {build}: no apps/ipfwd/ipfwd there (build with -Dparts=runtime,ipfwd)")
    opts = json.loads((build / "meson-info" / "intro-buildoptions.json").read_text())
    san = next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")
    if san != "none":
        ap.error(f"{opt} {build} is a sanitizer build (b_sanitize={san}): its figures mean nothing")
    return exe


@harness.broken_pipe_safe
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")),
                    help="Meson release build with apps/ipfwd/ipfwd (default $PIPEPLACE_BUILD or build/)")
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (3)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring (1)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of all contenders, alternating (>= 3; 3)")
    ap.add_argument("--l1-packets", type=int, default=4096, help="l1 capture: packets (4096)")
    ap.add_argument("--mem-packets", type=int, default=1 << 20,
                    help="mem capture: distinct random destinations; 2^20 x 64 B lines = 64 MiB (2^20)")
    ap.add_argument("--no-mem", action="store_true", help="leave out the ipfwd-mem rows")
    ap.add_argument("--instructions", type=int, metavar="PACKETS", default=0,
                    help="also count instructions per packet under valgrind's callgrind (load-independent): "
                         "l3fwd and ipfwd-l1 fused (and the baseline's), each over about PACKETS packets "
                         "(e.g. 200000; 0 = not)")
    ap.add_argument("--l3fwd-dir", type=Path, metavar="DIR", default=os.environ.get("PIPEPLACE_L3FWD_DIR") or None,
                    help="l3fwd and l3fwd-sw-cksum built beforehand (python3 bench/lib/l3fwd_build.py DIR; a test bed "
                         "bundle made with --peers has them) instead of building them now from dpdk-doc "
                         "(default $PIPEPLACE_L3FWD_DIR)")
    ap.add_argument("--baseline", type=Path, metavar="BUILD",
                    help="another release build of ipfwd (e.g. of an earlier commit) whose ipfwd rows run in "
                         "the same rounds, marked [baseline]: before/after side by side")
    a = ap.parse_args(argv)
    try:
        ctx_p, ctx_main, layouts = split_layouts(sorted(os.sched_getaffinity(0)))
    except ValueError as e:
        ap.error(f"the CPUs this process may run on (its affinity; taskset sets it): {e}")
    prebuilt = prebuilt_l3fwd(a.l3fwd_dir, "bench/ipfwd.py") if a.l3fwd_dir is not None else None
    exe = check_build(ap, "--build", a.build)
    btype = build_type(a.build)
    base_exe = check_build(ap, "--baseline", a.baseline) if a.baseline else None
    if a.duration < 1:
        ap.error(f"--duration {a.duration:g}: must be >= 1")
    if a.rounds < 3:
        ap.error(f"--rounds {a.rounds}: must be >= 3 (medians of alternating rounds)")
    if shutil.which("dpdk-testpmd") is None:
        ap.error("dpdk-testpmd not found (Debian package dpdk)")
    if base_exe is not None:
        print(f"[baseline] rows: ipfwd of {a.baseline} ({build_type(a.baseline)})")
    print(f"bench/ipfwd.py: build {a.build} ({btype}); forwarding context {ctx_p}; P alone with R and T on "
          + " and on ".join(f"context {c} ({what})" for what, c in layouts)
          + ("; no other thread of P's core is allowed here, so no row for it" if len(layouts) == 1
             and layouts[0][0] == "another core" else "")
          + f"; testpmd's idle main lcore on context {ctx_main}")
    print(f"ports: net_pcap infinite_rx=1 -> {SINK}; {a.warmup:g} s warm-up, {a.duration:g} s window, "
          f"{a.rounds} rounds, contenders alternating within each round")
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_ipfwd_") as td:
        tmp = Path(td)
        t0 = time.monotonic()
        if prebuilt is not None:
            l3, l3_ck = prebuilt
            print(f"l3fwd as shipped and with a software IPv4 checksum check: built beforehand, {l3} and {l3_ck}")
        else:
            l3 = build_l3fwd(tmp, "bench/ipfwd.py")
            l3_ck = build_l3fwd(tmp, "bench/ipfwd.py", sw_ipv4_cksum=True)
            print(f"l3fwd built from {L3FWD_SRC}/l3fwd, as shipped and with a software IPv4 checksum check, in "
                  f"{time.monotonic() - t0:.0f} s (temporary directory)")
        rules = (tmp / "routes.v4", tmp / "routes.v6")
        rules[0].write_text("R0.0.0.0/1 1\nR128.0.0.0/1 1\n")
        rules[1].write_text("R2001:0200:0000:0000:0000:0000:0000:0000/64 1\n")
        setups: dict[str, Setup] = {}
        variants = [("l1", a.l1_packets)] + ([] if a.no_mem else [("mem", a.mem_packets)])
        for variant, n in variants:
            cap = tmp / f"{variant}.pcap"
            ipfwd_traffic.write_pcap_array(cap, ipfwd_traffic.valid_packets(
                variant, n, 16, 64, np.random.default_rng(1)))
            # 2 KiB mbufs (l3fwd's size) where the capture is small; the
            # mem capture lives in the pool, so small mbufs there.
            data = 2048 if n <= 65536 else 128
            mbufs = n + 8192
            mem = memory_args(mbufs, data)
            if mem:
                print(f"{variant}: not enough free hugepages for {mbufs} mbufs: every contender runs with "
                      + " ".join(mem))
            setups[variant] = Setup(cap, mbufs, data, mem, ctx_p, ctx_main, a.warmup, a.duration, tmp)
        contenders: list[tuple[str, Callable[[str], IpfwdRun | float]]] = [
            ("l3fwd LPM (l1 capture)", lambda tag: l3fwd_pps(l3, rules, setups["l1"], tag)),
            (L3_CK, lambda tag: l3fwd_pps(l3_ck, rules, setups["l1"], tag + "ck")),
            ("testpmd io (l1 capture)", lambda tag: testpmd_pps(setups["l1"], tag)),
        ]
        for variant, _ in variants:
            s = setups[variant]
            contenders.append((f"ipfwd-{variant} R+P+T on 1 context",
                               lambda tag, v=variant, s=s: ipfwd_run(exe, v, None, s, tag, v == "mem")))
            for what, rt in layouts:
                contenders.append((f"ipfwd-{variant} P alone, R+T on {what}",
                                   lambda tag, v=variant, s=s, rt=rt: ipfwd_run(exe, v, rt, s, tag, v == "mem")))
            if base_exe is not None:
                for what, rt in [("R+P+T on 1 context", None)] + [(f"P alone, R+T on {w}", c) for w, c in layouts]:
                    contenders.append((f"ipfwd-{variant} {what} [baseline]",
                                       lambda tag, v=variant, s=s, rt=rt: ipfwd_run(base_exe, v, rt, s, tag,
                                                                                    v == "mem")))
        rows = [Row(name) for name, _ in contenders]
        for r in range(a.rounds):
            order = list(range(len(contenders)))
            if r % 2:
                order.reverse()
            for i in order:
                got = contenders[i][1](f"{i}_{r}")
                if isinstance(got, IpfwdRun):
                    rows[i].pps.append(got.pps)
                    rows[i].cpp.append(got.p_cycles_per_packet)
                    rows[i].all_cpp.append(got.all_cycles_per_packet)
                    if got.llc_misses_per_packet is not None:
                        rows[i].llc.append(got.llc_misses_per_packet)
                else:
                    rows[i].pps.append(got)
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
        instr: list[tuple[str, float]] = []
        if a.instructions > 0:
            if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
                sys.exit("bench/ipfwd.py: --instructions needs valgrind (Debian package valgrind)")
            cap = setups["l1"].cap
            instr.append(("l3fwd LPM", l3fwd_instructions(l3, rules, cap, tmp, a.instructions)))
            instr.append(("ipfwd-l1 R+P+T on 1 context", ipfwd_instructions(exe, cap, tmp, a.instructions, "new")))
            if base_exe is not None:
                instr.append(("ipfwd-l1 R+P+T on 1 context [baseline]",
                              ipfwd_instructions(base_exe, cap, tmp, a.instructions, "base")))
    ref = statistics.median(rows[0].pps)
    print()
    print(f"{'':50} {'Mpps (measured)':>15} {'min-max':>13} {'x l3fwd':>8} {'per round':>15} {'P cyc/pkt':>10} "
          f"{'R+P+T cyc/pkt':>14} {'LLC miss/pkt':>13} {'x l3fwd+ck':>11}")
    for row in rows:
        med = statistics.median(row.pps)
        per_round = [x / l for x, l in zip(row.pps, rows[0].pps)]
        equal = statistics.median(x / l for x, l in zip(row.pps, rows[1].pps))
        cpp = f"{statistics.median(row.cpp):.1f}" if row.cpp else "-"
        all_cpp = f"{statistics.median(row.all_cpp):.1f}" if row.all_cpp else "-"
        llc = (f"{statistics.median(row.llc):.2f}" if row.llc else
               ("unavailable" if "ipfwd-mem" in row.name else "-"))
        print(f"{row.name:50} {med / 1e6:>15.3f} {min(row.pps) / 1e6:>6.2f}-{max(row.pps) / 1e6:<6.2f} "
              f"{med / ref:>8.3f} {statistics.median(per_round):>6.3f} "
              f"({min(per_round):.2f}-{max(per_round):.2f}) {cpp:>7} {all_cpp:>14} {llc:>13} {equal:>11.3f}")
    print("Mpps: median over rounds of sink packets / window (measured); min-max: its spread; x l3fwd: median / "
          "l3fwd's median (computed); per round: median (min-max) of each round's ratio to the l3fwd run of the "
          "same round (computed; steadier under load)")
    print(f"x l3fwd+ck: median of each round's ratio to '{L3_CK}' (computed): l3fwd leaves the IPv4 header "
          "checksum to the NIC's Rx offload, which these ports lack, so as shipped it checks none here; ipfwd "
          "checks it in software where the port does not (Rx flags unknown), as RFC 1812 asks; that row is l3fwd "
          "doing the same check in software, the comparison at equal work")
    print("P cyc/pkt: TSC cycles of P's polls that moved packets / packets P processed; R+P+T cyc/pkt: the three "
          "tasks' cycles / packets received (measured, runtime counters; fused, P's share is the app's burst work)")
    split = [row for row in rows if "P alone" in row.name]
    if split:
        print()
        print("P alone, every round: Mpps @ P cycles per packet (measured). On a VM whose host sometimes runs the "
              "two virtual CPUs far apart, P alone moves between two modes within seconds; P's cycles per packet "
              "(its waits on lines from R's context) tell the runs apart better than a probe before the run does")
        for row in split:
            print(f"  {row.name:48} " + ", ".join(f"{x / 1e6:.1f} @ {c:.0f}" for x, c in zip(row.pps, row.cpp)))
        print("R+T on another core: every frame's lines cross between two cores' caches twice per packet (R's "
              "copy to P's rewrite, and back for R's next copy into the same buffer); on P's core: they stay in the "
              "core's L1 and L2, which its two threads share (bench/lib/split_contexts.py)")
    if instr:
        print()
        print(f"{'':50} {'instructions/packet (measured, callgrind)':>42} {'x l3fwd':>8}")
        for name, ipp in instr:
            print(f"{name:50} {ipp:>42.1f} {ipp / instr[0][1]:>8.3f}")
        print("instructions/packet: inclusive Ir of the forwarding loop (l3fwd: lpm_main_loop, ipfwd: "
              "pp_lcore_main; ports, runtime and app) / packets received, l1 capture; independent of the machine's "
              f"load. ipfwd's packets: its own count; l3fwd's: {BURST} x its calls into net_pcap's receive "
              f"function, which returned {BURST} on every call in ipfwd's run (checked)")
    if PERF_NOTE:
        print("LLC misses per packet: unavailable (" + "; ".join(PERF_NOTE) + ")")
    elif not a.no_mem:
        print("LLC miss/pkt: perf stat LLC-load-misses of the ipfwd process / window packets (measured)")
    print(f"load average (1 min, measured) before/after: {load0:.2f} / {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs: other processes on these contexts depress every figure; compare ratios")
    print("P alone needs both contexts running it at once (P and R+T hand every packet over): on a machine "
          "loaded beyond its contexts that layout stalls far more than one context running R+P+T fused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
