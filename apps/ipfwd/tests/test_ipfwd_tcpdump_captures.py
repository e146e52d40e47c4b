"""Robustness: every capture of tcpdump's regression suite (pcap and pcapng,
many link types, truncated and fuzzed packets) through ipfwd under the
ASan+UBSan build, in one DPDK process: one net_pcap rx queue per file
(16 queues per net_pcap port, the PMD's limit), one instance per file, all
co-located on two contexts.  No crash, no sanitizer report, and every
packet libpcap reads from a file is received by that file's instance and
accounted for."""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from ipfwd_harness import build_sanitizers, instance, placement, run_ipfwd  # noqa: E402
from ipfwd_libpcap_count import count_cut, count_packets  # noqa: E402

QUEUES_PER_PORT = 16  # RTE_PMD_PCAP_MAX_QUEUES in DPDK 22.11
MBUF_SIZE = 2048


def test_every_tcpdump_capture(build_dir: Path, shared_dir: Path, file_prefix: str,
                               tmp_path: Path) -> None:
    san = build_sanitizers(build_dir)
    assert "address" in san and "undefined" in san, (
        f"{build_dir} is built with b_sanitize={san}; this test needs the ASan+UBSan build "
        "(PIPEPLACE_BUILD pointing at one)")
    files = sorted(p for p in (shared_dir / "data" / "pcaps" / "tcpdump-tests").iterdir()
                   if p.suffix in (".pcap", ".pcapng"))
    assert len(files) >= 400, f"expected the 406 tcpdump captures, found {len(files)}"
    counts = [count_packets(f) for f in files]
    unreadable = [f.name for f, c in zip(files, counts) if c is None]
    assert not unreadable, f"libpcap cannot open: {unreadable}"

    vdevs, insts = [], []
    n_ports = (len(files) + QUEUES_PER_PORT - 1) // QUEUES_PER_PORT
    for port in range(n_ports):
        chunk = files[port * QUEUES_PER_PORT:(port + 1) * QUEUES_PER_PORT]
        vdevs.append(f"net_pcap{port}," + ",".join(f"rx_pcap={f}" for f in chunk))
        insts += [instance(port, q, n_ports, len(insts) + q) for q in range(len(chunk))]
    vdevs.append("net_null0")
    contexts = sorted(os.sched_getaffinity(0))[:2]
    for x in insts:
        x["tasks"] = {"R": contexts[0], "P": contexts[-1], "T": contexts[0]}

    # Plain rx_pcap (no infinite_rx) reads each file exactly once.
    res = run_ipfwd(build_dir, file_prefix, tmp_path, vdevs, placement(insts, "l1"),
                    ["--duration", "2", "--ring-size", "64", "--mbuf-size", str(MBUF_SIZE)], timeout=300)
    res.assert_clean()
    s = res.stats
    assert s["accounting_ok"] is True
    for i, (f, want) in enumerate(zip(files, counts)):
        st = s["instances"][i]
        assert st["rx_packets"] == want, f"{f.name}: libpcap reads {want} packets, ipfwd received {st['rx_packets']}"
        assert st["rx_packets"] == st["tx_packets"] + st["dropped_packets"] + st["queued_packets"], f.name
        assert st["queued_packets"] == 0, f.name
    t = s["total"]
    assert t["rx_packets"] == sum(counts)
    # The captures are mostly not Ethernet/IPv4: most are dropped, by reason.
    assert t["dropped_by_reason"]["not_ip"] > 0 and t["tx_packets"] > 0
    assert t["dropped_by_reason"]["bad_verdict"] == 0 and t["dropped_by_reason"]["tx_failed"] == 0
    # Frames over 64 KiB that net_pcap cuts reach us with segments short of
    # pkt_len: R repairs exactly those, in the instance of their file, and
    # the runtime named them on stderr before the ports started.
    cut = [count_cut(f, MBUF_SIZE) for f in files]
    for i, f in enumerate(files):
        assert s["instances"][i]["rx_chains_repaired"] == cut[i], f.name
    assert t["rx_chains_repaired"] >= 1
    for f, n in zip(files, cut):
        if n:
            assert f"rx_pcap={f}: {n} of " in res.stderr, f.name
