"""Helpers for the end-to-end tests: run the ahocorasick app over captures
with DPDK net_pcap ports and return its statistics."""
from __future__ import annotations

import subprocess
from pathlib import Path

from harness import Result, app_binary, instance, placement
from harness import run_app as _run_app

# DPDK is built with RTE_MAX_ETHPORTS = 32: 31 capture ports + 1 sink.
MAX_CAPTURES_PER_RUN = 31
AppRun = Result


def tool(build_dir: Path, name: str) -> Path:
    """A built program of the app: its tools at the app's top, test helpers under tests/."""
    for exe in (build_dir / "apps" / "ahocorasick" / name, build_dir / "apps" / "ahocorasick" / "tests" / name):
        if exe.is_file():
            return exe
    raise AssertionError(f"{name} not built under {build_dir / 'apps' / 'ahocorasick'}")


def captures(shared_dir: Path) -> list[Path]:
    d = shared_dir / "data" / "pcaps" / "tcpdump-tests"
    files = sorted(p for p in d.iterdir() if p.suffix in (".pcap", ".pcapng"))
    assert len(files) >= 400, f"expected the 406 shared captures in {d}, found {len(files)}"
    return files


def packet_counts(build_dir: Path, files: list[Path]) -> dict[Path, int]:
    """Packets libpcap reads from each file (-1: libpcap cannot open it)."""
    out = subprocess.run([str(tool(build_dir, "ac_pcap_count")), *map(str, files)],
                         capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in out.splitlines():
        path, n = line.rsplit("\t", 1)
        counts[Path(path)] = int(n)
    return counts


def run_app(build_dir: Path, file_prefix: str, tmp: Path, inputs: list[Path],
            app_args: list[str], variant: str = "ac", tx_pcap: Path | None = None,
            duration: float = 1.0, timeout: float = 120) -> AppRun:
    """One instance per input capture (rx port i, read once), R and T on
    context 0, P on context 1; all instances transmit to one net_null port
    (queue i), or with tx_pcap and a single input to that capture file."""
    n = len(inputs)
    assert 0 < n <= MAX_CAPTURES_PER_RUN
    if tx_pcap is not None:
        assert n == 1
    instances = [instance(i, 0, 0 if tx_pcap else n, 0 if tx_pcap else i, r=0, p=1, t=0) for i in range(n)]
    vdevs = [f"net_pcap{i},rx_pcap={f}" + (f",tx_pcap={tx_pcap}" if tx_pcap is not None else "")
             for i, f in enumerate(inputs)]
    if tx_pcap is None:
        vdevs.append("net_null0")
    return _run_app(app_binary(build_dir, "ahocorasick"), file_prefix, tmp, vdevs,
                    placement("ahocorasick", instances, variant), app_args, duration=duration,
                    timeout=timeout, stats=tmp / "stats.json", require_stats=True)


def assert_clean(run: AppRun) -> None:
    run.require_stats = True
    run.assert_clean()


def processed(app_stats: dict) -> int:
    """Packets the P stage looked at, scanned or not."""
    return (app_stats["packets_scanned"] + app_stats["packets_scanned_whole_frame"]
            + sum(app_stats["packets_unscanned"].values()))
