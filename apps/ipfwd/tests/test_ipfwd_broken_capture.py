"""A capture that breaks off mid-record, or holds no frame: net_pcap replays
what comes before the break without a word, so the runtime says it on
stderr, naming the file and the frame, before the port starts; what is
replayed is received and accounted for."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from ipfwd_harness import instance, placement, run_ipfwd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402

PCAP_HEADER, RECORD_HEADER = 24, 16


def capture(tmp: Path, frames: int, keep_of_next: int | None) -> Path:
    """frames whole 64-byte frames, then keep_of_next bytes of one more record (None: nothing)."""
    whole = tmp / "whole.pcap"
    ipfwd_traffic.write_pcap(whole, ipfwd_traffic.generate("l1", 4, frames + 1, 64, 0.0, 1))
    data = whole.read_bytes()
    end = PCAP_HEADER + frames * (RECORD_HEADER + 64) + (keep_of_next or 0)
    cut = tmp / "cut.pcap"
    cut.write_bytes(data[:end])
    return cut


def run(build_dir: Path, file_prefix: str, tmp: Path, cap: Path):
    return run_ipfwd(build_dir, file_prefix, tmp, [f"net_pcap0,rx_pcap={cap}", "net_null0"],
                     placement([instance(0, 0, 1, 0)]), ["--duration", "0.3"])


def test_a_capture_cut_mid_record_is_named_and_its_whole_frames_replayed(build_dir: Path, file_prefix: str,
                                                                         tmp_path: Path) -> None:
    cap = capture(tmp_path, 3, RECORD_HEADER + 14)  # the 4th record's header and 14 of its 64 bytes
    res = run(build_dir, file_prefix, tmp_path, cap)
    assert res.rc == 0, res.stderr
    assert f"net_pcap0 rx_pcap={cap}: broken after frame 3 (truncated dump file" in res.stderr, res.stderr
    assert "only the 3 frames before it are replayed" in res.stderr
    assert res.stats["total"]["rx_packets"] == 3 and res.stats["accounting_ok"] is True
    assert not res.sanitizer_reports(), res.stderr


def test_a_capture_cut_in_its_first_record_is_named(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = capture(tmp_path, 0, RECORD_HEADER + 20)
    res = run(build_dir, file_prefix, tmp_path, cap)
    assert f"net_pcap0 rx_pcap={cap}: broken at its first frame (truncated dump file" in res.stderr, res.stderr
    assert "nothing is replayed" in res.stderr
    assert not res.sanitizer_reports(), res.stderr


def test_a_capture_without_frames_is_named(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = capture(tmp_path, 0, None)  # the file header alone
    res = run(build_dir, file_prefix, tmp_path, cap)
    assert f"net_pcap0 rx_pcap={cap}: the capture holds no frame: the port receives nothing" in res.stderr, \
        res.stderr
    assert not res.sanitizer_reports(), res.stderr


def test_a_whole_capture_draws_no_such_line(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = capture(tmp_path, 3, None)
    res = run(build_dir, file_prefix, tmp_path, cap)
    assert res.rc == 0 and "broken after" not in res.stderr and "no frame" not in res.stderr, res.stderr
    assert res.stats["total"]["rx_packets"] == 3
