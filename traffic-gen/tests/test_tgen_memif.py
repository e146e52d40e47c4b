"""The generator and an app in two processes linked by net_memif (the recipe
of traffic-gen/README.md): under the app's capacity nothing is lost; far over
it loss is reported and every packet is accounted for on both sides.  And the
RFC 2544 search, against a delay line of known capacity."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tgen_harness import (Result, finish, memif_socket, memif_vdev, sanitizer_env,
                          start_tgen, wait_written)


def ipfwd_binary(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "ipfwd" / "ipfwd"
    assert exe.is_file(), f"ipfwd not built in {build_dir} (-Dparts=runtime,ipfwd,traffic-gen)"
    return exe


def ipfwd_placement(tmp: Path) -> Path:
    """One instance, R and T sharing CPU 0, P on CPU 1 (a 2-CPU test box)."""
    placement = tmp / "placement.json"
    placement.write_text(json.dumps({
        "app": "ipfwd", "variant": "l1", "allow_colocate": True,
        "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 0, "queue": 0},
                       "tasks": {"R": 0, "P": 1, "T": 0}}]}))
    return placement


def start_memif_tgen(build_dir: Path, prefix: str, sock: Path, args: list[str],
                     stats: Path) -> subprocess.Popen[str]:
    """pp-tgen, memif server on sock, one port for TX and RX.  The app (a
    sanitizer build is slow to start) may connect well before it polls: 2 s
    of grace and rings of 8192 slots."""
    return start_tgen(build_dir, prefix + "g", [memif_vdev(sock, "server", 13)],
                      ["--tx-port", "0", "--rx-port", "0", "--start-after", "2",
                       "--link-wait", "120", *args], stats)


def start_memif_ipfwd(build_dir: Path, prefix: str, sock: Path, tmp: Path, seconds: float,
                      stats: Path | None = None) -> subprocess.Popen[str]:
    """ipfwd, memif client on sock, placed by ipfwd_placement."""
    return subprocess.Popen(
        [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", prefix + "a",
         "--log-level", "lib.eal:warning", "--vdev", memif_vdev(sock, "client", 13), "--",
         "--placement", str(ipfwd_placement(tmp)), "--duration", str(seconds),
         *(["--stats", str(stats)] if stats else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sanitizer_env())


def wait_for(sock: Path, timeout: float = 120) -> None:
    """The generator's memif socket: its EAL start (a sanitizer build, on a
    loaded 2-core box) can take many seconds."""
    end = time.monotonic() + timeout
    while not sock.exists():
        if time.monotonic() > end:
            raise AssertionError(f"memif socket {sock} did not appear in {timeout} s")
        time.sleep(0.05)


def gen_and_ipfwd(build_dir: Path, prefix: str, tmp: Path, gen_args: list[str],
                  app_seconds: float) -> tuple[Result, dict[str, Any]]:
    sock = memif_socket()
    gen_stats, app_stats = tmp / "gen.json", tmp / "ipfwd.json"
    gen = start_memif_tgen(build_dir, prefix, sock, ["--peer-wait", "30", *gen_args], gen_stats)
    app = None
    try:
        wait_for(sock)
        # The app runs until the generator has written its statistics (its
        # workers no longer poll), then gets SIGTERM: with a fixed --duration
        # it could leave while a generator that started late on a loaded box
        # still polled, which DPDK 22.11's memif PMD does not survive (see
        # pp-tgen --peer-wait).  app_seconds only bounds the run.
        app = start_memif_ipfwd(build_dir, prefix, sock, tmp, app_seconds, app_stats)
        wait_written(gen_stats, gen, timeout=app_seconds)
        app.terminate()
        a = finish(app, app_stats, timeout=120)
        g = finish(gen, gen_stats)
    finally:
        for p in (gen, app):
            if p is not None and p.poll() is None:
                p.kill()
        sock.unlink(missing_ok=True)
    a.assert_clean()
    g.assert_clean()
    return g, json.loads(app_stats.read_text())


def test_ipfwd_under_capacity_loses_nothing(build_dir: Path, file_prefix: str,
                                            tmp_path: Path) -> None:
    # A packet count, not a duration: a generator descheduled on a loaded box
    # sends fewer packets in a second, but exactly these 10,000 whenever it
    # runs; the app runs until the generator is done.
    g, app = gen_and_ipfwd(build_dir, file_prefix, tmp_path,
                           ["--rate", "10k", "--packets", "10000", "--drain", "1"], 120)
    tx, rx = g.stats["tx"], g.stats["rx"]
    assert tx["packets"] == 10_000 and tx["link_full"] == 0
    assert app["accounting_ok"] is True
    assert app["total"]["rx_packets"] == app["total"]["tx_packets"] == tx["packets"]
    assert rx["packets"] == rx["unique_packets"] == tx["packets"]
    assert rx["lost"] == 0 and rx["duplicates"] == 0 and rx["foreign_packets"] == 0


def test_ipfwd_far_over_capacity_accounts_for_every_packet(build_dir: Path, file_prefix: str,
                                                           tmp_path: Path) -> None:
    g, app = gen_and_ipfwd(build_dir, file_prefix, tmp_path,
                           ["--rate", "max", "--duration", "1", "--drain", "1"], 120)
    tx, rx = g.stats["tx"], g.stats["rx"]
    app_total = app["total"]
    # Loss is reported: at the link (the app's memif ring was full) and/or inside the app.
    assert tx["link_full"] > 0 or rx["lost"] > 0
    assert tx["offered_packets"] == tx["packets"] + tx["link_full"]
    # Generator side -> app side: what the link took, the app received.
    assert app_total["rx_packets"] == tx["packets"]
    assert app["accounting_ok"] is True
    assert app_total["rx_packets"] == (app_total["tx_packets"] + app_total["dropped_packets"]
                                       + app_total["queued_packets"])
    # App side -> generator side: what the app sent, the generator received.
    assert rx["packets"] == app_total["tx_packets"]
    assert rx["lost"] == tx["packets"] - rx["unique_packets"]
    assert rx["lost"] == app_total["dropped_packets"] + app_total["queued_packets"]


def test_rfc2544_finds_a_known_capacity(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """A delay line that forwards at most 20 kpps (token bucket 5000 packets,
    250 ms deep, clocked by the packets' send times): the search, bounded at
    40 kpps with a 5% resolution and 4 s trials, must land near 20 kpps.  The
    bucket (10000 packets, 500 ms deep) lets a trial up to depth / trial =
    2.5 kpps over the capacity pass; a generator descheduled for longer than
    the bucket depth on this shared box sends a catch-up burst the bucket
    drops, which can fail a trial under the capacity: hence the band, and a
    bucket deep enough for the stalls of a loaded 2-core machine.  Rings of
    8192 slots ride out a slow peer."""
    sock = memif_socket()
    gen_stats, dl_stats = tmp_path / "rfc.json", tmp_path / "delay.json"
    gen = start_tgen(build_dir, file_prefix + "g", [memif_vdev(sock, "server", 13)],
                     ["--mode", "rfc2544", "--tx-port", "0", "--rx-port", "0", "--rate", "40k",
                      "--frame-sizes", "64", "--trial", "4", "--resolution", "5",
                      "--drain", "0.2", "--start-after", "0.5", "--peer-wait", "30",
                      "--link-wait", "120"], gen_stats)
    try:
        wait_for(sock)
        dl = start_tgen(build_dir, file_prefix + "d", [memif_vdev(sock, "client", 13)],
                        ["--mode", "delay", "--rx-port", "0", "--capacity-pps", "20000",
                         "--capacity-burst", "10000", "--duration", "120"], dl_stats)
        wait_written(gen_stats, gen)
        dl.terminate()
        g = finish(gen, gen_stats, timeout=240)
        d = finish(dl, dl_stats)
    finally:
        sock.unlink(missing_ok=True)
    g.assert_clean()
    d.assert_clean()
    assert d.stats["accounting_ok"] is True and d.stats["dropped_by_reason"]["over_capacity"] > 0
    (res,) = g.stats["results"]
    assert res["frame_size"] == 64 and res["kind"] == "measured"
    # Never above the capacity plus what the bucket lets through; below it by
    # as much as other load on this 2-core box takes from the two processes
    # (8.75 kpps seen with six CPU-bound jobs beside them): the search must
    # still find a loss-free rate well above nothing.
    assert 4_000 <= res["throughput_pps"] <= 23_000, [(t["asked_pps"], t["loss_pct"]) for t in res["trials"]]
    trials = res["trials"]
    assert trials[0]["asked_pps"] == 40_000 and trials[0]["pass"] is False
    passing = [t for t in trials if t["pass"]]
    assert passing and max(t["asked_pps"] for t in passing) == res["throughput_asked_pps"]
    assert all(t["loss_pct"] == 0 for t in passing)  # tolerance 0 by default
    # The search stopped within its resolution: the lowest failing rate above
    # the result is at most 5% of 40 kpps away.
    above = min(t["asked_pps"] for t in trials if not t["pass"] and
                t["asked_pps"] > res["throughput_asked_pps"])
    assert 0 < above - res["throughput_asked_pps"] <= 2000 + 1e-6
    assert "RFC 2544 throughput" in g.stdout or "RFC 2544 throughput" in g.stderr
