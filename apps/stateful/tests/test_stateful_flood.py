"""A hash flood through the app: flows that all share one nProbe hash value
(source address + k, source port - k) pile into one bucket of the nProbe
table, and each lookup walks that chain; with the keyed hash the same traffic
spreads like random flows.  Structural facts only (chain and probe lengths,
from the app's own statistics); the throughput figures are in
bench/apps-stateful.py."""
from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from stateful_run import run_app, sanitizer_reports, write_pcap

FLOWS = 1024


def colliding_frames(n: int) -> list[bytes]:
    return [bytes(Ether() / IP(src=f"10.{(k >> 16) & 255}.{(k >> 8) & 255}.{k & 255}",
                               dst="192.168.0.1")
                  / TCP(sport=60000 - k, dport=80, flags="A"))
            for k in range(n)]


def test_flood_fills_one_nprobe_bucket_but_not_the_keyed_table(
        build_dir: Path, tmp_path: Path, file_prefix: str) -> None:
    frames = colliding_frames(FLOWS) * 2  # every flow seen twice: created, then hit
    pcap = tmp_path / "flood.pcap"
    write_pcap(pcap, frames)
    stats = {}
    for h in ("nprobe", "keyed"):
        run = run_app(build_dir, tmp_path, f"{file_prefix}{h}", pcap, ["--hash", h])
        assert run.returncode == 0, run.stderr[-3000:]
        assert not sanitizer_reports(run.stderr)
        assert run.stats is not None and run.stats["accounting_ok"] is True
        app = run.stats["app_stats"]
        assert app["flows_created"] == FLOWS and app["lookup_hits"] == FLOWS
        stats[h] = app

    nprobe, keyed = stats["nprobe"], stats["keyed"]
    # nProbe: one bucket holds every flow; the others are empty.
    assert nprobe["longest_chain"] == FLOWS
    assert nprobe["chain_length_histogram"][0] == nprobe["table_buckets"] - 1
    # Lookups walk the chain: half of it on average over create + hit.
    assert nprobe["avg_probe_length"] >= FLOWS / 4
    # Keyed: chains like random traffic's.
    assert keyed["longest_chain"] <= 12
    assert keyed["avg_probe_length"] <= 3
    assert nprobe["avg_probe_length"] >= 50 * keyed["avg_probe_length"]
