#!/usr/bin/env python3
"""How closely pp-tgen keeps a capture's own timing (--pcap-timing).

Writes a capture with known gaps (a seeded mix of 10 us, 50 us, 200 us and
1 ms gaps and exponential ones of mean 100 us), replays it into net_null
with `--pcap-timing original` and with a speed factor of 2, several rounds
taking turns, and prints what pp-tgen measured per round: the inter-packet
gap error (|handoff gap - capture gap|) and the lateness (handoff - schedule)
as percentiles, in microseconds; then the medians over the rounds and

    summary: original replay p99 inter-packet error = X us (goal <= 10)

(measured: at the handoff to the port, rte_eth_tx_burst; net_null takes
every packet at once, so this is the generator's own pacing, not a wire's).
Beside it, the floor under any pacing on that context: tools/pp-interruptions
spins on the worker's context after each round and prints how often the
context stopped it and how late a thread acting at a random instant is
(p99); a replay's p99 error below that floor is out of reach there.
Run from the repository root after tools/setup.sh:

    .venv/bin/python bench/tgen-timing.py [--build build] [--rounds 3] [--packets 20000]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FRAME = bytes.fromhex("020000000002020000000001080045000032000040004011f9c80a0000010a010001"
                      "04000400001e0000") + bytes(18)  # 60-byte IPv4/UDP frame


def write_capture(path: Path, n: int, seed: int) -> list[int]:
    """A nanosecond pcap of n frames with known gaps; returns the gaps (ns)."""
    rng = random.Random(seed)
    gaps, t = [], 1_700_000_000 * 10**9
    with path.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            if i:
                g = rng.choice([10_000, 50_000, 200_000, 1_000_000, int(rng.expovariate(1 / 100_000)) + 1])
                gaps.append(g)
                t += g
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(FRAME), len(FRAME)) + FRAME)
    return gaps


def replay(build: Path, cap: Path, timing: str, lcores: str) -> dict:
    stats = cap.with_suffix(f".{uuid.uuid4().hex[:6]}.json")
    cmd = [str(build / "traffic-gen" / "pp-tgen"), "-l", lcores, "--no-pci", "--file-prefix",
           f"tgt{uuid.uuid4().hex[:8]}", "--log-level", "lib.eal:warning", "--vdev", "net_null0", "--",
           "--pcap", str(cap), "--pcap-timing", timing, "--loops", "1", "--stats", str(stats)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"pp-tgen failed ({p.returncode}): {p.stderr[-1500:]}")
    return json.loads(stats.read_text())["streams"][0]["timing"]


def floor(build: Path, cpu: int, seconds: int) -> dict:
    """What the context takes from a thread that never sleeps (tools/interruptions.c)."""
    p = subprocess.run([str(build / "tools" / "pp-interruptions"), str(cpu), str(seconds)],
                       capture_output=True, text=True, timeout=seconds + 30)
    if p.returncode != 0:
        raise SystemExit(f"pp-interruptions failed ({p.returncode}): {p.stderr[-500:]}")
    return json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--packets", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lcores", default="0,1", help="pp-tgen's EAL -l (default 0,1)")
    args = ap.parse_args()
    res: dict[str, list[dict]] = {"original": [], "2": []}
    floors: list[dict] = []
    worker = int(args.lcores.replace("-", ",").split(",")[-1])  # pp-tgen's worker: the last lcore
    with tempfile.TemporaryDirectory(prefix="tgen-timing-") as tmp:
        cap = Path(tmp) / "gaps.pcap"
        gaps = write_capture(cap, args.packets, args.seed)
        print(f"capture: {args.packets} packets, {sum(gaps) / 1e9:.2f} s, gaps 10 us .. "
              f"{max(gaps) / 1e3:.0f} us (median {statistics.median(gaps) / 1e3:.0f} us); "
              f"figures in us, measured at the handoff to net_null")
        for rnd in range(1, args.rounds + 1):
            for timing in (("original", "2") if rnd % 2 else ("2", "original")):
                t = replay(args.build, cap, timing, args.lcores)
                res[timing].append(t)
                g, late = t["gap_error_ns"], t["lateness_ns"]
                print(f"round {rnd} timing {timing:8s}: gap error p50 {g['p50'] / 1e3:7.2f} p99 "
                      f"{g['p99'] / 1e3:7.2f} p99.9 {g['p99_9'] / 1e3:8.2f} max {g['max'] / 1e3:9.2f}; "
                      f"lateness p99 {late['p99'] / 1e3:8.2f} max {late['max'] / 1e3:9.2f} "
                      f"({g['samples']} gaps)")
            f = floor(args.build, worker, 3)
            floors.append(f)
            print(f"round {rnd} floor on context {worker}: stopped {f['per_s']:.0f} times/s (median "
                  f"{f['gap_ns']['p50'] / 1e3:.1f} us, {100 * f['stalled_fraction']:.2f}% of the time); a random "
                  f"instant's lateness p99 {f['lateness_ns']['p99'] / 1e3:.2f} us (measured)")
    for timing, v in res.items():
        print(f"timing {timing:8s}: median over rounds of the gap error p99 "
              f"{statistics.median(x['gap_error_ns']['p99'] for x in v) / 1e3:.2f} us, of p99.9 "
              f"{statistics.median(x['gap_error_ns']['p99_9'] for x in v) / 1e3:.2f} us (measured)")
    p99 = statistics.median(x["gap_error_ns"]["p99"] for x in res["original"]) / 1e3
    fl = statistics.median(f["lateness_ns"]["p99"] for f in floors) / 1e3
    print(f"summary: original replay p99 inter-packet error = {p99:.2f} us (goal <= 10); this context's "
          f"floor, a random instant's lateness p99 = {fl:.2f} us (measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
