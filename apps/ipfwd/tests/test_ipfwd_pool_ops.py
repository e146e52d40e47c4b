"""The mbuf pool's driver (--pool-ops): LIFO stack by default, EAL's
--mbuf-pool-ops-name honoured when --pool-ops is not given, the driver
named in the statistics, packets forwarded alike on either driver, and a
driver that is unknown or unsafe for the runtime refused with a message
naming it."""
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

PACKETS = 1200


def forward(build_dir: Path, file_prefix: str, tmp: Path, cap: Path, tag: str, args: list[str],
            eal: list[str] | None = None) -> tuple[dict, list[bytes]]:
    """One instance, P apart from R and T: buffers T frees go back to the pool from
    another context than the one R allocates on."""
    out = tmp / f"{tag}.pcap"
    c0, c1 = two_contexts()
    res = run_ipfwd(build_dir, f"{file_prefix}{tag}", tmp, [f"net_pcap0,rx_pcap={cap}", f"net_pcap1,tx_pcap={out}"],
                    placement([instance(0, 0, 1, 0, r=c0, p=c1, t=c0)]), ["--packets", str(PACKETS), *args],
                    eal=eal)
    res.assert_clean()
    assert res.stats is not None and res.stats["accounting_ok"] is True
    return res.stats, read_pcap(out)


def test_drivers_forward_alike_and_are_named(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = tmp_path / "in.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", PACKETS, 16, 64, 0.2, 5))
    inp = read_pcap(cap)
    default, d_out = forward(build_dir, file_prefix, tmp_path, cap, "d", [])
    ring, r_out = forward(build_dir, file_prefix, tmp_path, cap, "r", ["--pool-ops", "ring_mp_mc"])
    eal, e_out = forward(build_dir, file_prefix, tmp_path, cap, "e", [], eal=["--mbuf-pool-ops-name", "ring_mp_mc"])
    both, b_out = forward(build_dir, file_prefix, tmp_path, cap, "b", ["--pool-ops", "stack"],
                          eal=["--mbuf-pool-ops-name", "ring_mp_mc"])
    assert default["pool_ops"] == "stack"
    assert ring["pool_ops"] == "ring_mp_mc"
    assert eal["pool_ops"] == "ring_mp_mc"  # EAL's option where --pool-ops is not given ...
    assert both["pool_ops"] == "stack"      # ... and --pool-ops over it
    for stats, out in ((default, d_out), (ring, r_out), (eal, e_out), (both, b_out)):
        assert out == d_out
        check_against_reference(stats, 0, inp, out)
        assert stats["instances"][0]["dropped_by_reason"] == default["instances"][0]["dropped_by_reason"]


@pytest.mark.parametrize("args, eal, message", [
    (["--pool-ops", "no_such_driver"], [], "--pool-ops no_such_driver: this DPDK has no such mempool driver"),
    ([], ["--mbuf-pool-ops-name", "no_such_driver"],
     "EAL --mbuf-pool-ops-name no_such_driver: this DPDK has no such mempool driver"),
    (["--pool-ops", "ring_sp_sc"], [], "--pool-ops ring_sp_sc: a single-producer or single-consumer pool"),
    (["--pool-ops", "ring_mp_sc"], [], "--pool-ops ring_mp_sc: a single-producer or single-consumer pool"),
    (["--pool-ops", ""], [], '--pool-ops "": expected a mempool driver name'),
])
def test_bad_driver_is_refused(build_dir: Path, file_prefix: str, tmp_path: Path, args: list[str], eal: list[str],
                               message: str) -> None:
    cap = tmp_path / "in.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 64, 4, 64, 0.0, 1))
    res = run_ipfwd(build_dir, file_prefix, tmp_path, [f"net_pcap0,rx_pcap={cap}", "net_null0"],
                    placement([instance(0, 0, 1, 0, r=0, p=0, t=0)]), ["--packets", "64", *args], eal=eal)
    assert res.rc != 0 and message in res.stderr, res.stderr
    assert not res.sanitizer_reports(), res.stderr
    if "no such mempool driver" in message:
        # the refusal lists what this DPDK has
        assert " stack" in res.stderr and " ring_mp_mc" in res.stderr, res.stderr
