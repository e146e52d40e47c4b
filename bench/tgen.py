#!/usr/bin/env python3
"""TX rate of one pp-tgen core at 64-byte frames, side by side with
dpdk-testpmd --forward-mode=txonly on the same kind of port (net_null), in
one run.  Both get one forwarding lcore (EAL -l 0,1 by default: lcore 0 is
the main lcore, lcore 1 transmits) and 60-byte packets (64-byte frames
counting the FCS).  The two alternate, --rounds times each (at least 5),
and for each the median and the spread (min-max, and the interquartile
range over the median) are printed, as packets per wall-clock second and
per CPU-second of the TX thread (its run time from /proc schedstat, in ns;
robust to other load on the machine), with the ratio of the medians and
the median of the per-round ratios (each round runs both back to back, so
its ratio sees the same load).  The TX thread's CPU share (CPU-s / wall s)
says how much of the core each one got.  pp-tgen also writes a sequence
number and TSC into every packet; testpmd's txonly does not.  Every figure
is measured on this machine, now.

  bench/tgen.py [--build DIR] [--seconds S] [--rounds N] [--lcores 0,1]
                [--testpmd-extra "ARGS"] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
import harness  # noqa: E402  (tests/harness: run_app, pcap files, exit quietly in a pipe)


TICK = os.sysconf("SC_CLK_TCK")
MIN_ROUNDS = 5


def worker_cpu_s(pid: int) -> float | None:
    """CPU seconds used so far by the process's TX lcore thread (lcore 1):
    schedstat's run time (ns), else utime + stime (clock ticks)."""
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            if (task / "comm").read_text().strip().endswith("worker-1"):
                try:
                    return int((task / "schedstat").read_text().split()[0]) / 1e9
                except (OSError, ValueError, IndexError):
                    f = (task / "stat").read_text().rsplit(")", 1)[1].split()
                    return (int(f[11]) + int(f[12])) / TICK
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


LCORES = "0,1"


def eal(prefix: str) -> list[str]:
    if "@" in LCORES:  # lcore@cpu: EAL --lcores
        return harness.eal_args(prefix, ["net_null0"], log_level="warning", extra=["--lcores", LCORES])
    return harness.eal_args(prefix, ["net_null0"], lcores=LCORES, log_level="warning")


def run_tgen(binary: Path, seconds: float) -> tuple[float, float, float]:
    """(pps over the wall-clock window, packets per CPU-second of the TX
    thread, the TX thread's CPU share over its life)"""
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        cmd = [str(binary), *eal("bt" + uuid.uuid4().hex[:8]), "--", "--rate", "max",
               "--size", "64", "--duration", str(seconds), "--stats", str(stats)]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cpu = None
        while p.poll() is None:  # the last sample before exit: the whole run
            cpu = worker_cpu_s(p.pid) or cpu
            time.sleep(0.02)
        if p.returncode != 0:
            sys.exit(f"bench/tgen.py: pp-tgen failed: {p.stderr.read().decode()[-2000:] if p.stderr else ''}")
        doc = json.loads(stats.read_text())
        tx = doc["tx"]
        share = cpu / float(doc["duration_s"]) if cpu else float("nan")
        return float(tx["pps"]), float(tx["packets"]) / cpu if cpu else float("nan"), share


def run_testpmd(seconds: float, extra: list[str]) -> tuple[float, float, float]:
    """testpmd reports Tx-pps between two 'show port stats' calls; the TX
    thread's CPU time is sampled when each is sent.  Commands go only after
    testpmd's prompt appears (EAL start-up is slow on a loaded machine)."""
    cmd = ["dpdk-testpmd", *eal("bp" + uuid.uuid4().hex[:8]), *harness.peer_driver_args(), "--", "-i",
           "--forward-mode=txonly", "--txpkts=60", "--nb-cores=1", "--burst=32", *extra]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    assert p.stdin is not None and p.stdout is not None
    buf = bytearray()
    fd = p.stdout.fileno()

    def drain() -> None:
        while chunk := os.read(fd, 4096):
            buf.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()

    def send(line: str, prompts: int) -> None:
        """Send LINE once PROMPTS prompts have been printed."""
        end = time.monotonic() + 60
        while buf.count(b"testpmd> ") < prompts:
            if time.monotonic() > end or p.poll() is not None:
                p.kill()
                sys.exit(f"bench/tgen.py: testpmd did not answer:\n{buf.decode(errors='replace')[-2000:]}")
            time.sleep(0.01)
        p.stdin.write(line.encode()); p.stdin.flush()  # type: ignore[union-attr]

    try:
        send("start\n", 1)
        time.sleep(0.5)
        send("show port stats 0\n", 2)
        cpu0, w0 = worker_cpu_s(p.pid), time.monotonic()
        time.sleep(seconds)
        send("show port stats 0\n", 3)
        cpu1, w1 = worker_cpu_s(p.pid), time.monotonic()
        send("stop\n", 4)
        send("quit\n", 5)
        p.wait(timeout=30)
        reader.join(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
    out = buf.decode(errors="replace")
    rates = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", out)]
    counts = [int(x) for x in re.findall(r"TX-packets:\s+(\d+)\s+TX-errors", out)]
    if len(rates) < 2 or len(counts) < 2 or cpu0 is None or cpu1 is None or cpu1 <= cpu0:
        sys.exit(f"bench/tgen.py: could not read testpmd's figures:\n{out[-2000:]}")
    return float(rates[-1]), (counts[-1] - counts[-2]) / (cpu1 - cpu0), (cpu1 - cpu0) / (w1 - w0)


def spread(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=4, method="inclusive")
    m = statistics.median(xs)
    return f"{min(xs) / 1e6:6.2f}-{max(xs) / 1e6:6.2f}  IQR {100 * (q[2] - q[0]) / m:5.1f}%"


@harness.broken_pipe_safe
def main() -> None:
    global LCORES
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path,
                    default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    ap.add_argument("--rounds", type=int, default=MIN_ROUNDS,
                    help=f"alternations, at least {MIN_ROUNDS} (default {MIN_ROUNDS})")
    ap.add_argument("--lcores", default="0,1",
                    help="EAL -l for both (default 0,1: the TX lcore 1 on CPU 1); with @, EAL --lcores "
                         "(0@0,1@0 puts the TX lcore on CPU 0)")
    ap.add_argument("--testpmd-extra", default="", help="more testpmd options, e.g. \"--mbcache=512\"")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    if a.rounds < MIN_ROUNDS:
        print(f"bench/tgen.py: --rounds {a.rounds}: at least {MIN_ROUNDS} (a median of fewer alternations "
              f"moves with the load)", file=sys.stderr)
        sys.exit(2)
    LCORES = a.lcores
    binary = a.build / "traffic-gen" / "pp-tgen"
    if not binary.exists():
        sys.exit(f"bench/tgen.py: {binary} not found (build with -Dparts=traffic-gen, or --build DIR)")
    extra = a.testpmd_extra.split()
    opts = a.build / "meson-info" / "intro-buildoptions.json"
    try:
        san = next((str(o["value"]) for o in json.loads(opts.read_text()) if o["name"] == "b_sanitize"), "none")
    except (OSError, ValueError):
        san = "none"
    if san != "none":
        print(f"warning: {a.build} is a sanitizer build ({san}): pp-tgen runs at a fraction of its speed there "
              f"(0.28x testpmd per CPU-s measured on 2026-11-23) and testpmd is Debian's release build; "
              f"compare with the release build (--build build)", flush=True)
    f: dict[str, list[float]] = {k: [] for k in ("tgen", "pmd", "tgen_cpu", "pmd_cpu", "tgen_share",
                                                  "pmd_share")}
    for r in range(a.rounds):
        w, c, sh = run_tgen(binary, a.seconds)
        f["tgen"].append(w)
        f["tgen_cpu"].append(c)
        f["tgen_share"].append(sh)
        w, c, sh = run_testpmd(a.seconds, extra)
        f["pmd"].append(w)
        f["pmd_cpu"].append(c)
        f["pmd_share"].append(sh)
        print(f"round {r + 1}: pp-tgen {f['tgen'][-1] / 1e6:.2f} Mpps ({f['tgen_cpu'][-1] / 1e6:.2f} per CPU-s, "
              f"CPU share {f['tgen_share'][-1]:.2f}), testpmd txonly {f['pmd'][-1] / 1e6:.2f} Mpps "
              f"({f['pmd_cpu'][-1] / 1e6:.2f} per CPU-s, CPU share {f['pmd_share'][-1]:.2f}); ratio "
              f"{f['tgen'][-1] / f['pmd'][-1]:.3f} wall, {f['tgen_cpu'][-1] / f['pmd_cpu'][-1]:.3f} per CPU-s "
              "(measured)", flush=True)
    med = {k: statistics.median(v) for k, v in f.items()}
    paired = [t / p for t, p in zip(f["tgen"], f["pmd"])]
    paired_cpu = [t / p for t, p in zip(f["tgen_cpu"], f["pmd_cpu"])]
    print(f"\nTX, one core (EAL -l {a.lcores}), 64-byte frames, net_null, {a.rounds} alternating rounds of "
          f"{a.seconds:g} s (measured):")
    print(f"  {'':22s} {'median Mpps':>11s}  {'spread: min-max, IQR/median':>28s}  {'CPU share':>9s}")
    for name, k in (("pp-tgen, wall", "tgen"), ("testpmd txonly, wall", "pmd"),
                    ("pp-tgen, per CPU-s", "tgen_cpu"), ("testpmd, per CPU-s", "pmd_cpu")):
        share = med[k.split("_")[0] + "_share"]
        print(f"  {name:22s} {med[k] / 1e6:11.2f}  {spread(f[k]):>28s}  {share:9.2f}")
    r_wall, r_cpu = med["tgen"] / med["pmd"], med["tgen_cpu"] / med["pmd_cpu"]
    print(f"  ratio pp-tgen / testpmd: wall {r_wall:.3f} (per-round median {statistics.median(paired):.3f}, "
          f"{min(paired):.3f}-{max(paired):.3f}); per CPU-s {r_cpu:.3f} (per-round median "
          f"{statistics.median(paired_cpu):.3f}, {min(paired_cpu):.3f}-{max(paired_cpu):.3f})   (goal >= 1.1)")
    print("  per CPU-s: packets / run time of the TX thread (schedstat), which discounts the time")
    print("  another process had the core; wall-clock figures on a shared machine move with the load")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
          + (f"; testpmd extra options: {a.testpmd_extra}" if extra else ""))
    if a.json:
        a.json.write_text(json.dumps({
            "kind": "measured", "frame_size": 64, "port": "net_null", "seconds": a.seconds,
            "rounds": a.rounds, "lcores": a.lcores, "testpmd_extra": a.testpmd_extra,
            "pp_tgen_pps": f["tgen"], "testpmd_txonly_pps": f["pmd"],
            "pp_tgen_pps_per_cpu_s": f["tgen_cpu"], "testpmd_pps_per_cpu_s": f["pmd_cpu"],
            "pp_tgen_cpu_share": f["tgen_share"], "testpmd_cpu_share": f["pmd_share"],
            "pp_tgen_median_pps": med["tgen"], "testpmd_median_pps": med["pmd"], "ratio": r_wall,
            "ratio_per_cpu_s": r_cpu, "ratio_per_round_median": statistics.median(paired),
            "ratio_per_cpu_s_per_round_median": statistics.median(paired_cpu)}, indent=2))


if __name__ == "__main__":
    main()
