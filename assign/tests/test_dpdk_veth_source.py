"""The dpdk backend over real kernel interfaces (--traffic veth): ipfwd
attached to veth ends in a network namespace, fed by pp-tgen from another
(assign.vethbed); the bed is made for the backend and gone after it."""
from __future__ import annotations

from pathlib import Path

import pytest

from assign.backends.base import BackendError
from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.topology import get_machine, restrict_topology
from assign.vethbed import namespaces
from assign.workloads import Workload


def test_placements_measured_through_veth(build_dir: Path) -> None:
    topo = restrict_topology(get_machine(), [0])
    opts = DpdkOptions(build_dir=build_dir, duration=0.3, warmup=0.1, contexts=[0], traffic="veth",
                       tgen_contexts=[1], runner="serve")
    with DpdkBackend(topo, Workload("ipfwd-l1", 1), opts, allow_colocate=True) as be:
        results = [be.measure_one([0, 0, 0]) for _ in range(2)]
        ns = be.veth.bed.prefix
        assert len([n for n in namespaces() if n.startswith(ns)]) == 3
    assert all(r.status == "ok" and r.value > 0 for r in results), [r.reason for r in results]
    assert results[0].extra["traffic"]["source"] == "veth"
    # the generator's own figures: it sent, and its sink received what ipfwd forwarded
    g = be.veth.generator_tx
    assert g["kind"] == "measured" and g["tx_packets"] > 0 and g["sink_rx_packets"] > 0, g
    assert {a["attach"] for a in g["attached"]} <= {"af_xdp", "af_packet"}
    assert not [n for n in namespaces() if n.startswith(ns)], "the bed was not removed"


def test_veth_takes_one_ipfwd_instance(build_dir: Path) -> None:
    topo = restrict_topology(get_machine(), [0])
    opts = DpdkOptions(build_dir=build_dir, duration=0.3, contexts=[0], traffic="veth", tgen_contexts=[1])
    with pytest.raises(BackendError, match="one instance"):
        DpdkBackend(topo, Workload("ipfwd-l1", 2), opts, allow_colocate=True)
    before = set(namespaces())
    with pytest.raises(BackendError, match="only ipfwd"):
        DpdkBackend(topo, Workload("stateful", 1), opts, allow_colocate=True)
    assert set(namespaces()) <= before
