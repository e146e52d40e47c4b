"""Every shared tcpdump test capture through the stateful app (run it against
the ASan+UBSan build): no crash, no sanitizer report, every packet accounted
for.  The frames of all 406 captures are concatenated into one Ethernet pcap
so that DPDK starts once; frames of other link types are parsed as Ethernet
on purpose (garbage in, counted as non-IP or malformed out)."""
from __future__ import annotations

from pathlib import Path

from scapy.utils import RawPcapReader

from stateful_run import run_app, sanitizer_reports, write_pcap


def read_all_captures(folder: Path) -> tuple[list[bytes], list[str], dict[str, str]]:
    frames: list[bytes] = []
    files: list[str] = []
    unreadable: dict[str, str] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix not in (".pcap", ".pcapng"):
            continue
        files.append(path.name)
        try:
            with RawPcapReader(str(path)) as reader:
                for data, _meta in reader:
                    frames.append(bytes(data))
        except Exception as exc:  # broken captures are part of the suite
            unreadable[path.name] = repr(exc)
    return frames, files, unreadable


def test_every_shared_capture_through_the_app(build_dir: Path, shared_dir: Path,
                                              tmp_path: Path, file_prefix: str) -> None:
    frames, files, unreadable = read_all_captures(shared_dir / "data" / "pcaps" / "tcpdump-tests")
    assert len(files) >= 400, f"expected the 406 tcpdump captures, found {len(files)}"
    # Frames from a capture that breaks off part-way are kept; a capture
    # nothing could be read from is named here.
    assert len(unreadable) <= 5, f"unreadable captures: {unreadable}"
    pcap = tmp_path / "all.pcap"
    n = write_pcap(pcap, frames)
    assert n > 3000

    for hash_args in ([], ["--hash", "keyed"]):
        run = run_app(build_dir, tmp_path, file_prefix + str(len(hash_args)), pcap,
                      hash_args, duration_s=2.0)
        assert run.returncode == 0, run.stderr[-3000:]
        reports = sanitizer_reports(run.stderr)
        assert not reports, "\n".join(reports[:20])
        assert run.stats is not None
        total = run.stats["total"]
        app = run.stats["app_stats"]
        assert run.stats["accounting_ok"] is True
        assert total["rx_packets"] == n, f"{total['rx_packets']} of {n} frames received"
        # The app forwards everything (net_null never refuses a packet).
        assert total["dropped_packets"] == 0, total["dropped_by_reason"]
        assert total["tx_packets"] + total["queued_packets"] == n
        # Every received packet was either looked up or counted untracked.
        assert app["lookups"] + app["non_ip_packets"] + app["malformed_packets"] == n
        assert app["lookups"] > 1000 and app["malformed_packets"] > 0
        assert app["flows_created"] == app["flows_active"] == len(run.flows)
        assert app["flows_dropped_table_full"] == 0
        assert sum(f["packets"] for f in run.flows) == app["lookups"]
