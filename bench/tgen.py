#!/usr/bin/env python3
"""TX rate of one pp-tgen core at 64-byte frames, side by side with
dpdk-testpmd --forward-mode=txonly on the same kind of port (net_null), in
one run.  Both get one forwarding lcore (EAL -l 0,1: lcore 0 is the main
lcore, lcore 1 transmits) and 60-byte packets (64-byte frames counting the
FCS).  The two alternate, --rounds times each, and the median of each is
compared, as packets per wall-clock second and per CPU-second of the TX
thread (from /proc; robust to other load on the machine).  pp-tgen also
writes a sequence number and TSC into every packet; testpmd's txonly does
not.  Every figure is measured on this machine, now.

  bench/tgen.py [--build DIR] [--seconds S] [--rounds N] [--json FILE]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from harness import quiet_when_reader_goes  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


TICK = os.sysconf("SC_CLK_TCK")


def worker_cpu_s(pid: int) -> float | None:
    """CPU seconds used so far by the process's TX lcore thread (lcore 1)."""
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            if (task / "comm").read_text().strip().endswith("worker-1"):
                f = (task / "stat").read_text().rsplit(")", 1)[1].split()
                return (int(f[11]) + int(f[12])) / TICK
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


def eal(prefix: str) -> list[str]:
    return ["-l", "0,1", "--no-pci", "--file-prefix", prefix, "--vdev", "net_null0",
            "--log-level", "warning"]


def run_tgen(binary: Path, seconds: float) -> tuple[float, float]:
    """(pps over the wall-clock window, packets per CPU-second of the TX thread)"""
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
        tx = json.loads(stats.read_text())["tx"]
        return float(tx["pps"]), float(tx["packets"]) / cpu if cpu else float("nan")


def run_testpmd(seconds: float) -> tuple[float, float]:
    """testpmd reports Tx-pps between two 'show port stats' calls; the TX
    thread's CPU time is sampled when each is sent.  Commands go only after
    testpmd's prompt appears (EAL start-up is slow on a loaded machine)."""
    cmd = ["dpdk-testpmd", *eal("bp" + uuid.uuid4().hex[:8]), "--", "-i",
           "--forward-mode=txonly", "--txpkts=60", "--nb-cores=1", "--burst=32"]
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
        cpu0 = worker_cpu_s(p.pid)
        time.sleep(seconds)
        send("show port stats 0\n", 3)
        cpu1 = worker_cpu_s(p.pid)
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
    return float(rates[-1]), (counts[-1] - counts[-2]) / (cpu1 - cpu0)


@quiet_when_reader_goes
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path,
                    default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    ap.add_argument("--rounds", type=int, default=3, help="alternations (default 3)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    binary = a.build / "traffic-gen" / "pp-tgen"
    if not binary.exists():
        sys.exit(f"bench/tgen.py: {binary} not found (build with -Dparts=traffic-gen, or --build DIR)")
    tgen, pmd, tgen_cpu, pmd_cpu = [], [], [], []
    for r in range(a.rounds):
        w, c = run_tgen(binary, a.seconds)
        tgen.append(w)
        tgen_cpu.append(c)
        w, c = run_testpmd(a.seconds)
        pmd.append(w)
        pmd_cpu.append(c)
        print(f"round {r + 1}: pp-tgen {tgen[-1] / 1e6:.2f} Mpps ({tgen_cpu[-1] / 1e6:.2f} per CPU-s), "
              f"testpmd txonly {pmd[-1] / 1e6:.2f} Mpps ({pmd_cpu[-1] / 1e6:.2f} per CPU-s) "
              "(measured)", flush=True)
    t, p = statistics.median(tgen), statistics.median(pmd)
    tc, pc = statistics.median(tgen_cpu), statistics.median(pmd_cpu)
    print(f"\nTX, one core, 64-byte frames, net_null, median of {a.rounds} (measured):")
    print(f"  {'':28s} {'Mpps (wall)':>12s} {'Mpps per CPU-s':>15s}")
    print(f"  {'pp-tgen':28s} {t / 1e6:12.2f} {tc / 1e6:15.2f}")
    print(f"  {'dpdk-testpmd txonly':28s} {p / 1e6:12.2f} {pc / 1e6:15.2f}")
    print(f"  {'ratio pp-tgen / testpmd':28s} {t / p:12.3f} {tc / pc:15.3f}   (goal >= 1.0)")
    print("  per CPU-s: packets / CPU time of the TX thread, which discounts the time another")
    print("  process had the core (wall-clock figures on a shared machine are noisy)")
    print(f"  load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if a.json:
        a.json.write_text(json.dumps({
            "kind": "measured", "frame_size": 64, "port": "net_null", "seconds": a.seconds,
            "rounds": a.rounds, "pp_tgen_pps": tgen, "testpmd_txonly_pps": pmd,
            "pp_tgen_pps_per_cpu_s": tgen_cpu, "testpmd_pps_per_cpu_s": pmd_cpu,
            "pp_tgen_median_pps": t, "testpmd_median_pps": p, "ratio": t / p,
            "ratio_per_cpu_s": tc / pc}, indent=2))

if __name__ == "__main__":
    sys.exit(main())
