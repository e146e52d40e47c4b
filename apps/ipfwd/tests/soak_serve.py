#!/usr/bin/env python3
"""apps/ipfwd/tests/soak_serve.py: one `ipfwd --serve` process runs N random
placements in a row (default 20,000), and every --every placements this
prints its resident memory, open files and the machine's hugepages in use,
all measured from /proc; at the end the growth from the first sample to the
last.  Every placement's answer is checked: no error, accounting_ok, and
rx = tx + dropped + queued exactly, for the total and for every instance,
and every placement after the first found its ports up ("ports":
{"kept_up": true}: started once, never stopped in between).

  .venv/bin/python apps/ipfwd/tests/soak_serve.py [--build DIR] [--placements N]
        [--every K] [--packets P] [--variants l1,mem] [--instances I] [--seed S]

Each placement: I instances (default 1), R, P and T each on a context drawn
from this process's CPUs (co-location allowed), variant cycling through
--variants; it ends after P packets per instance (--packets, default 2000).
The release build (build/) is the default: a sanitizer build's allocator
quarantine grows by design and would hide a real leak's signature.
Exit status: 0 when every placement was exact and the process survived,
1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "apps" / "ipfwd"))
import harness  # noqa: E402  (tests/harness: app binary, placements, EAL args, hugepages)
import ipfwd_traffic  # noqa: E402


def resident_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no VmRSS")


def hugetlb_kib(pid: int) -> int:
    """Hugepage memory this process maps (Shared_ + Private_Hugetlb of its
    mappings in /proc/pid/smaps)."""
    total = 0
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if line.startswith(("Shared_Hugetlb:", "Private_Hugetlb:")):
            total += int(line.split()[1])
    return total


def sample(pid: int, done: int, t0: float) -> dict[str, Any]:
    h = harness.hugepages()
    return {"placements": done, "elapsed_s": round(time.monotonic() - t0, 1),
            "rss_kib": resident_kib(pid), "hugetlb_kib": hugetlb_kib(pid), "open_files": len(os.listdir(f"/proc/{pid}/fd")),
            "hugepages_used": h["total"] - h["free"], "hugepage_kib": h["size_kb"]}


def exact(o: dict[str, Any]) -> str | None:
    """Why this answer is not an exact, clean run (None when it is)."""
    if "error" in o:
        return f"error: {o['error']}"
    if o.get("accounting_ok") is not True:
        return f"accounting_ok is {o.get('accounting_ok')!r}"
    parts = [("total", o["total"])] + [(f"instance {i}", x) for i, x in enumerate(o.get("instances", []))]
    for name, t in parts:
        if {"rx_packets", "tx_packets", "dropped_packets", "queued_packets"} <= t.keys():
            if t["rx_packets"] != t["tx_packets"] + t["dropped_packets"] + t["queued_packets"]:
                return f"{name}: rx {t['rx_packets']} != tx {t['tx_packets']} + dropped {t['dropped_packets']} + queued {t['queued_packets']}"
    if o["total"].get("rx_packets", 0) <= 0:
        return "no packets received"
    return None


def ports_kept_up(o: dict[str, Any], first: bool) -> str | None:
    """Why the ports were not as serve mode keeps them: started for the
    first placement, found up by every later one (None when they were)."""
    ports = o.get("ports")
    if not isinstance(ports, dict):
        return "no \"ports\" in the answer"
    if not first and ports.get("kept_up") is not True:
        return f"ports not kept up from the placement before: {ports}"
    return None


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")))
    ap.add_argument("--placements", type=int, default=20_000)
    ap.add_argument("--every", type=int, default=1000, help="placements between two samples (1000)")
    ap.add_argument("--packets", type=int, default=2000, help="packets per instance per placement (2000)")
    ap.add_argument("--variants", default="l1", help="comma-separated ipfwd variants to cycle through (l1)")
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.placements < 1 or a.every < 1 or a.packets < 1 or a.instances < 1:
        sys.exit("soak_serve.py: --placements, --every, --packets and --instances must be at least 1")
    variants = a.variants.split(",")
    exe = harness.app_binary(a.build, "ipfwd")
    cpus = sorted(os.sched_getaffinity(0))
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory(prefix="soak") as d:
        tmp = Path(d)
        cap = tmp / "in.pcap"
        ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 1024, 16, 64, 0.0, a.seed))
        vdevs = [f"net_pcap{i},rx_pcap={cap},infinite_rx=1" for i in range(a.instances)] + ["net_null0"]
        cmd = [str(exe), *harness.eal_args(f"soak{uuid.uuid4().hex[:8]}", vdevs), "--",
               "--serve", "--packets", str(a.packets)]
        err = open(tmp / "stderr.txt", "w+")
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                             env=harness.sanitizer_env())
        assert p.stdin is not None and p.stdout is not None
        print(f"ipfwd --serve, {a.placements} placements of {a.instances} instance(s), {a.packets} packets "
              f"each, variants {','.join(variants)}, contexts {cpus}; build {a.build}", flush=True)
        print(f"{'placements':>10} {'elapsed s':>9} {'RSS KiB':>9} {'open files':>10} {'own hugepage KiB':>16} {'machine hugepages used':>22}"
              "   (all measured)", flush=True)
        t0 = time.monotonic()
        samples: list[dict[str, Any]] = []
        bad: list[str] = []
        done = 0
        for i in range(a.placements):
            insts = [harness.instance(k, 0, a.instances, k, *(rng.choice(cpus) for _ in range(3)))
                     for k in range(a.instances)]
            place = harness.placement("ipfwd", insts, variant=variants[i % len(variants)])
            try:
                p.stdin.write(json.dumps(place) + "\n")
                p.stdin.flush()
            except BrokenPipeError:
                break
            line = p.stdout.readline()
            if not line:
                break
            ans = json.loads(line)
            why = exact(ans) or ports_kept_up(ans, done == 0)
            if why is not None:
                bad.append(f"placement {i + 1} ({json.dumps(place['instances'])}): {why}")
            done += 1
            if done == 1 or done % a.every == 0 or done == a.placements:
                s = sample(p.pid, done, t0)
                samples.append(s)
                print(f"{s['placements']:>10} {s['elapsed_s']:>9} {s['rss_kib']:>9} {s['open_files']:>10} "
                      f"{s['hugetlb_kib']:>16} {s['hugepages_used']:>22}", flush=True)
        p.stdin.close()
        rc = p.wait(timeout=120)
        err.seek(0)
        stderr = err.read()
    reports = harness.sanitizer_reports(stderr)
    first, last = samples[0], samples[-1]
    print(f"\ngrowth from placement {first['placements']} to {last['placements']} (measured): "
          f"RSS {last['rss_kib'] - first['rss_kib']:+d} KiB, open files {last['open_files'] - first['open_files']:+d}, "
          f"own hugepage memory {last['hugetlb_kib'] - first['hugetlb_kib']:+d} KiB, machine hugepages used "
          f"{last['hugepages_used'] - first['hugepages_used']:+d} (other processes count there too)")
    mid = samples[len(samples) // 2]
    print(f"growth over the second half (after warm-up, measured): RSS {last['rss_kib'] - mid['rss_kib']:+d} KiB, "
          f"open files {last['open_files'] - mid['open_files']:+d}, own hugepage memory "
          f"{last['hugetlb_kib'] - mid['hugetlb_kib']:+d} KiB")
    print(f"placements answered: {done} of {a.placements}; not exact: {len(bad)}; exit status {rc}; "
          f"sanitizer report lines: {len(reports)}")
    for b in bad[:20]:
        print(f"  {b}")
    if done < a.placements or bad or rc != 0 or reports:
        print(stderr[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
