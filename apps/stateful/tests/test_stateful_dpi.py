"""Application detection (--dpi) checked against ndpiReader, nDPI's own
reference tool, on the same frames.

The captures are the shared ones with an Ethernet link type and IPv4/IPv6
TCP or UDP traffic (picked by that property, as the IPFIX test does),
concatenated into one pcap; ndpiReader reads that pcap (-C: one CSV line per
flow) and the app replays it with --dpi and dumps its flows.  Flows are
matched by protocol and the unordered pair of endpoints (ndpiReader prints
no VLAN id); for each such key the multiset of application names must be the
same on both sides, or the difference is explained in ALLOWLIST by a
property of the flow that the test checks.
"""
from __future__ import annotations

import collections
import csv
import ipaddress
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness import sanitizer_reports, write_pcap
from stateful_run import run_app
from test_stateful_ipfix import ethernet_captures

# A flow: (proto, frozenset of the two (address, port) endpoints).
FlowKey = tuple[int, frozenset]

# Reviewed differences, by a property of the flow that the test checks on
# the app's record before accepting the difference.  Each entry: a name, the
# reason, and a predicate over (app flow record or None, ndpiReader name or
# None).
ALLOWLIST: list[tuple[str, str, Any]] = []


def endpoint(addr: str, port: int) -> tuple[str, int]:
    return (str(ipaddress.ip_address(addr)), int(port))


def ndpireader_flows(pcap: Path, csv_path: Path) -> dict[FlowKey, list[str]]:
    """ndpiReader's application per flow (TCP/UDP), with its default caps."""
    r = subprocess.run(["ndpiReader", "-q", "-i", str(pcap), "-C", str(csv_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    flows: dict[FlowKey, list[str]] = collections.defaultdict(list)
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            proto = int(row["protocol"])
            if proto not in (6, 17):
                continue
            key = (proto, frozenset({endpoint(row["src_ip"], int(row["src_port"])),
                                     endpoint(row["dst_ip"], int(row["dst_port"]))}))
            flows[key].append(row["ndpi_proto"])
    return flows


def app_flows(flows: list[dict[str, Any]]) -> dict[FlowKey, list[dict[str, Any]]]:
    out: dict[FlowKey, list[dict[str, Any]]] = collections.defaultdict(list)
    for f in flows:
        if f["proto"] not in (6, 17):
            continue
        key = (f["proto"], frozenset({endpoint(f["src"], f["sport"]),
                                      endpoint(f["dst"], f["dport"])}))
        out[key].append(f)
    return out


def test_dpi_agrees_with_ndpireader_on_shared_captures(build_dir: Path, shared_dir: Path,
                                                        tmp_path: Path,
                                                        file_prefix: str) -> None:
    assert shutil.which("ndpiReader"), "ndpiReader missing: run tools/setup.sh (libndpi-bin)"
    caps = list(ethernet_captures(shared_dir / "data" / "pcaps" / "tcpdump-tests"))
    assert len(caps) >= 50, f"only {len(caps)} Ethernet captures with TCP/UDP found"
    frames = [f for _name, fs in caps for f in fs]
    pcap = tmp_path / "tcpudp.pcap"
    n = write_pcap(pcap, frames)
    ref = ndpireader_flows(pcap, tmp_path / "ndpi.csv")
    assert sum(len(v) for v in ref.values()) > 100

    # No idle expiry: a 5-tuple is one flow for the whole replay, as in
    # ndpiReader over this short capture.
    run = run_app(build_dir, tmp_path, file_prefix, pcap,
                  ["--dpi", "--idle-timeout", "0"], duration_s=2.0)
    assert run.returncode == 0, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr), run.stderr[-3000:]
    assert run.stats is not None and run.stats["total"]["rx_packets"] == n
    dpi = run.stats["app_stats"]["dpi"]
    assert dpi["kind"] == "measured"
    assert dpi["flows_not_inspected"] == 0, dpi
    assert dpi["flow_states_in_use"] == 0, dpi  # every state given back
    assert dpi["ndpi_heap_allocs"] >= dpi["ndpi_heap_frees"], dpi
    assert dpi["packets_inspected"] > 0 and dpi["ndpi_cycles"] > 0, dpi
    assert run.flows is not None
    # The statistics count every flow once, by the name the dump shows.
    names = collections.Counter(f["application"] for f in run.flows)
    assert names == collections.Counter(dpi["flows_by_application"]), (
        names, dpi["flows_by_application"])
    assert len(names) >= 10, names  # the captures hold many protocols

    got = app_flows(run.flows)
    assert set(got) == set(ref), (
        f"flows only in the app: {list(set(got) - set(ref))[:5]}; "
        f"only in ndpiReader: {list(set(ref) - set(got))[:5]}")
    unexplained = []
    agreed = 0
    for key, recs in got.items():
        mine = collections.Counter(r["application"] for r in recs)
        theirs = collections.Counter(ref[key])
        if mine == theirs:
            agreed += sum(mine.values())
            continue
        reasons = [name for name, _why, ok in ALLOWLIST if all(ok(r, ref[key]) for r in recs)]
        if not reasons:
            unexplained.append((sorted(key[1]), key[0], dict(mine), dict(theirs)))
    assert not unexplained, f"{len(unexplained)} flows disagree: {unexplained[:10]}"
    assert agreed >= 100


@pytest.mark.parametrize("args, message", [
    (["--dpi", "--dpi-tcp-packets", "0"], "--dpi-tcp-packets"),
    (["--dpi", "--dpi-udp-packets", "300"], "--dpi-udp-packets"),
    (["--dpi", "--dpi-flows", "lots"], "--dpi-flows"),
    (["--dpi-tcp-packets", "10"], "need --dpi"),
])
def test_bad_dpi_options_are_refused(build_dir: Path, tmp_path: Path, file_prefix: str,
                                     args: list[str], message: str) -> None:
    pcap = tmp_path / "one.pcap"
    write_pcap(pcap, [b"\x02" * 12 + b"\x08\x06" + b"\0" * 46])
    run = run_app(build_dir, tmp_path, file_prefix, pcap, args, duration_s=0.5)
    # The runtime exits 1 on any option error (as for the other options).
    assert run.returncode != 0, (run.returncode, run.stderr[-2000:])
    assert message in run.stderr, run.stderr[-2000:]
