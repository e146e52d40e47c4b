"""Fused and split layouts forward alike.  With R, P and T of an instance on
one context the runtime runs them fused (R's burst goes straight through P
and T, no rings); with P on another context they pass packets through the
rings.  Both must send the same packets, drop the same ones for the same
reasons and keep the same counters, and both must match the Python
reference."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from harness import read_pcap, two_contexts  # noqa: E402
from ipfwd_harness import instance, placement, run_ipfwd  # noqa: E402
from test_ipfwd_forwarding import check_against_reference  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402

PACKETS = 1500  # per instance: both captures have this many
REASONS = ("not_ip", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired")


def run_layout(build_dir: Path, file_prefix: str, tmp: Path, caps: list[Path], variant: str,
               ctx_rt: int, ctx_p: int, tag: str) -> tuple[dict, list[list[bytes]]]:
    """Two instances, each from its own rx queue to its own output capture,
    R and T on ctx_rt, P on ctx_p."""
    outs = [tmp / f"{tag}_out{i}.pcap" for i in range(2)]
    res = run_ipfwd(build_dir, f"{file_prefix}{tag}", tmp,
                    [f"net_pcap0,rx_pcap={caps[0]},rx_pcap={caps[1]}",
                     f"net_pcap1,tx_pcap={outs[0]},tx_pcap={outs[1]}"],
                    placement([instance(0, i, 1, i, r=ctx_rt, p=ctx_p, t=ctx_rt) for i in range(2)], variant),
                    ["--packets", str(PACKETS)])
    res.assert_clean()
    assert res.stats is not None and res.stats["accounting_ok"] is True
    return res.stats, [read_pcap(o) for o in outs]


@pytest.mark.parametrize("variant", ["l1", "mem"])
def test_fused_and_split_layouts_send_and_drop_alike(build_dir: Path, file_prefix: str, tmp_path: Path,
                                                     variant: str) -> None:
    caps = []
    for i in range(2):
        caps.append(tmp_path / f"in{i}.pcap")
        ipfwd_traffic.write_pcap(caps[-1], ipfwd_traffic.generate(variant, PACKETS, 16, 64 + 40 * i, 0.2, 11 + i))
    inps = [read_pcap(c) for c in caps]
    c0, c1 = two_contexts()
    fused, fused_out = run_layout(build_dir, file_prefix, tmp_path, caps, variant, c0, c0, "f")
    split, split_out = run_layout(build_dir, file_prefix, tmp_path, caps, variant, c0, c1, "s")

    for i in range(2):
        assert fused_out[i] == split_out[i], f"instance {i}: fused and split layouts sent different packets"
        for stats, outs in ((fused, fused_out), (split, split_out)):
            check_against_reference(stats, i, inps[i], outs[i])
        f, s = fused["instances"][i], split["instances"][i]
        for k in ("rx_packets", "tx_packets", "tx_bytes", "dropped_packets", "dropped_by_reason",
                  "queued_packets"):
            assert f[k] == s[k], (i, k, f[k], s[k])
        # T's bytes: what the output capture holds (the fused layout sums
        # them in R's pass; the split one in T's).
        assert f["tx_bytes"] == sum(len(p) for p in fused_out[i]) > 0
        assert sum(f["dropped_by_reason"][r] > 0 for r in REASONS) == len(REASONS), f["dropped_by_reason"]

    def tasks(stats: dict) -> dict[tuple[int, str], dict]:
        return {(t["instance"], t["role"]): t for t in stats["tasks"]}

    ft, st = tasks(fused), tasks(split)
    for i in range(2):
        inst = fused["instances"][i]
        for tk in (ft, st):
            # R received, P processed every packet; T sent the forwarded ones.
            assert tk[(i, "R")]["packets"] == tk[(i, "P")]["packets"] == PACKETS
            assert tk[(i, "T")]["packets"] == inst["tx_packets"]
            assert all(tk[(i, r)]["context"] == tk[(i, r)]["observed_cpu"] for r in "RPT")
        # Fused: P never polls on its own, so it moves one burst per burst
        # of R and never finds an empty ring.
        assert ft[(i, "P")]["bursts"] == ft[(i, "R")]["bursts"]
        assert ft[(i, "P")]["empty_polls"] == 0


def test_fused_stuck_tx_port_holds_then_ends_with_tx_failed(build_dir: Path, file_prefix: str,
                                                           tmp_path: Path) -> None:
    # net_ring0 loops its tx ring to its own rx queue, which nobody reads:
    # after 1023 packets it refuses everything.  Fused, T holds the burst
    # the port refused and R receives nothing more until it went; at the
    # stop T gives up after 1 s and counts what it held.
    cap = tmp_path / "in.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 256, 16, 64, 0.0, 9))
    c0, _ = two_contexts()
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap},infinite_rx=1", "net_ring0"],
                    placement([instance(0, 0, 1, 0, r=c0, p=c0, t=c0)], "l1"), ["--duration", "1"])
    res.assert_clean()
    t = res.stats["total"]
    assert t["tx_packets"] == 1023  # the ring's capacity
    assert 0 < t["dropped_by_reason"]["tx_failed"] <= 32
    assert t["dropped_packets"] == t["dropped_by_reason"]["tx_failed"]
    # No rings in between: R received what went out and one burst more.
    assert t["rx_packets"] == t["tx_packets"] + t["dropped_packets"] and t["queued_packets"] == 0
    assert t["rx_packets"] <= 1023 + 32
    assert res.stats["accounting_ok"] is True
