"""Running the analyzer app (net_pcap in, net_null out) for the end-to-end
tests and the benchmark, and building their inputs, on tests/harness."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from harness import Result, placement as _placement, read_pcap, sanitizer_reports, write_pcap  # noqa: F401
from harness import app_binary as _app_binary
from harness import run_app as _run_app
from harness.pcap import DEFAULT_SNAPLEN as PCAP_SNAPLEN  # noqa: F401 (re-exported)

AppRun = Result


def app_binary(build_dir: Path) -> Path:
    return _app_binary(build_dir, "analyzer")


def decode_tool(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "analyzer" / "an-pcap-decode"
    assert exe.is_file(), f"{exe} not built"
    return exe


def placement(tmp: Path) -> Path:
    """One instance; P on its own context when the machine lets us have two."""
    path = tmp / "placement.json"
    path.write_text(json.dumps(_placement("analyzer", 1)))
    return path


def run_app(build_dir: Path, tmp: Path, file_prefix: str, pcap: Path,
            app_args: Iterable[str] = (), duration_s: float = 1.0,
            infinite: bool = False, timeout_s: float = 120,
            packets: int | None = None) -> AppRun:
    """Replay pcap (once, or in a loop with infinite_rx), stop after
    duration_s, or after `packets` packets when given (a stop that does
    not depend on how fast a loaded machine runs), return the statistics."""
    rx = f"net_pcap0,rx_pcap={pcap}" + (",infinite_rx=1" if infinite else "")
    stop = ["--packets", str(packets)] if packets is not None else ["--duration", str(duration_s)]
    return _run_app(app_binary(build_dir), file_prefix, tmp, [rx, "net_null0"], _placement("analyzer", 1),
                    [*stop, *app_args], timeout=timeout_s, stats=tmp / "stats.json")


def capture_frames(captures: Iterable[Path]) -> list[bytes]:
    """Every frame that can be read from the captures, whatever their link
    type: fed to an Ethernet decoder, the non-Ethernet ones are garbage
    input, which is what a robustness run wants."""
    frames: list[bytes] = []
    for p in captures:
        try:
            frames.extend(read_pcap(p))
        except Exception:  # a capture that breaks off or that scapy cannot read: keep what was read
            pass
    return frames
