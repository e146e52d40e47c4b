"""Helpers for the end-to-end tests: run the ahocorasick app over captures
with DPDK net_pcap ports and return its statistics."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness import Result, app_binary, instance, placement
from harness import run_app as _run_app
from scapy.utils import RawPcapNgReader, RawPcapReader

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import pcapgen  # noqa: E402

# Every variable the community rules name, with Snort-like values and a
# HOME_NET that the shared captures' private addresses fall in (the
# reference reads only this file; the app's defaults fill nothing in).
COMMUNITY_VARS = """\
ipvar HOME_NET [10.0.0.0/8,192.168.0.0/16,172.16.0.0/12]
ipvar EXTERNAL_NET any
ipvar HTTP_SERVERS $HOME_NET
ipvar SMTP_SERVERS $HOME_NET
ipvar SQL_SERVERS $HOME_NET
ipvar TELNET_SERVERS $HOME_NET
ipvar SIP_SERVERS $HOME_NET
ipvar DNS_SERVERS $HOME_NET
ipvar SSH_SERVERS $HOME_NET
ipvar FTP_SERVERS $HOME_NET
portvar HTTP_PORTS [80,81,8000,8080,8088,8888,3128]
portvar FILE_DATA_PORTS [$HTTP_PORTS,110,143]
portvar ORACLE_PORTS 1024:
portvar SSH_PORTS 22
portvar FTP_PORTS [21,2100,3535]
portvar SIP_PORTS [5060,5061,5600]
portvar SHELLCODE_PORTS !80
"""

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


def read_frames(path: Path) -> list[bytes]:
    with open(path, "rb") as f:
        magic = f.read(4)
    reader = RawPcapNgReader if magic == b"\x0a\x0d\x0d\x0a" else RawPcapReader
    with reader(str(path)) as r:
        return [bytes(pkt) for pkt, _meta in r]


def joined_captures(build_dir: Path, files: list[Path], out: Path) -> dict[Path, int]:
    """Every packet libpcap reads from files, in order, into one Ethernet pcap
    (what the app and the reference then both read); packets per file."""
    res = subprocess.run([str(tool(build_dir, "ac_pcap_count")), "--cat", str(out), *map(str, files)],
                         capture_output=True, text=True, check=True).stdout
    return {Path(p): int(n) for p, n in (line.rsplit("\t", 1) for line in res.splitlines())}


def small_capture(path: Path) -> Path:
    """A few plain IPv4 TCP and UDP frames: for the tests of options that
    need some capture to start with, whatever it holds."""
    a, b = pcapgen.ipv4(0x0A000001), pcapgen.ipv4(0x0A000002)
    pcapgen.write_pcap(path, [pcapgen.frame(pcapgen.Flow(a, b, pcapgen.PROTO_UDP, 1024, 53), b"query"),
                              pcapgen.frame(pcapgen.Flow(a, b, pcapgen.PROTO_TCP, 1025, 80), b"GET / HTTP/1.0\r\n\r\n"),
                              pcapgen.frame(pcapgen.Flow(b, a, pcapgen.PROTO_TCP, 80, 1025), b"HTTP/1.0 200 OK\r\n\r\n")])
    return path


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
