"""Helpers for the end-to-end tests: run the ahocorasick app over captures
with DPDK net_pcap ports and return its statistics."""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

# DPDK is built with RTE_MAX_ETHPORTS = 32: 31 capture ports + 1 sink.
MAX_CAPTURES_PER_RUN = 31
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:",
                     "UndefinedBehaviorSanitizer")


@dataclass
class AppRun:
    returncode: int
    stderr: str
    stats: dict | None


def app_binary(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "ahocorasick" / "ahocorasick"
    assert exe.is_file(), f"{exe} not built (configure with -Dparts including runtime,ahocorasick)"
    return exe


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


def sanitizer_env() -> dict[str, str]:
    env = dict(os.environ)
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    return env


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
    instances = [{"rx": {"port": i, "queue": 0},
                  "tx": {"port": 0 if tx_pcap else n, "queue": 0 if tx_pcap else i},
                  "tasks": {"R": 0, "P": 1, "T": 0}} for i in range(n)]
    placement = tmp / "placement.json"
    placement.write_text(json.dumps({"app": "ahocorasick", "variant": variant,
                                     "allow_colocate": True, "instances": instances}))
    stats = tmp / "stats.json"
    cmd = [str(app_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--log-level", "lib.eal:warning"]
    for i, f in enumerate(inputs):
        vdev = f"net_pcap{i},rx_pcap={f}"
        if tx_pcap is not None:
            vdev += f",tx_pcap={tx_pcap}"
        cmd += ["--vdev", vdev]
    if tx_pcap is None:
        cmd += ["--vdev", "net_null0"]
    cmd += ["--", "--placement", str(placement), "--duration", str(duration),
            "--stats", str(stats), *app_args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=sanitizer_env())
    data = json.loads(stats.read_text()) if stats.exists() else None
    return AppRun(r.returncode, r.stderr, data)


def assert_clean(run: AppRun) -> None:
    for marker in SANITIZER_MARKERS:
        assert marker not in run.stderr, f"sanitizer report:\n{run.stderr[-6000:]}"
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stderr[-4000:]}"
    assert run.stats is not None, "no statistics written"


def processed(app_stats: dict) -> int:
    """Packets the P stage looked at, scanned or not."""
    return (app_stats["packets_scanned"] + app_stats["packets_scanned_whole_frame"]
            + sum(app_stats["packets_unscanned"].values()))
