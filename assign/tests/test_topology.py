"""Topology from hwloc, and the Linux-like baseline built on it."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from assign.baselines import linux_like
from assign.placement import placement
from assign.topology import LEVELS, Topology, TopologyError, get_machine
from assign.workloads import Workload, WorkloadError


def test_t2_has_8_cores_of_2_pipelines_of_4_contexts():
    t2 = get_machine("ultrasparc-t2")
    assert t2.n_contexts == 64
    assert t2.os_index.tolist() == list(range(64))
    ids = t2.level_ids
    assert len(set(ids[LEVELS.index("pipeline")])) == 16
    assert len(set(ids[LEVELS.index("core")])) == 8
    assert len(set(ids[LEVELS.index("chip")])) == 1
    d = t2.distance(np.array([0, 0, 0, 0]), np.array([0, 3, 4, 8]))
    assert [LEVELS[x] for x in d] == ["pu", "pipeline", "core", "chip"]


def test_this_host_and_json_round_trip():
    local = get_machine("local")
    assert local.n_contexts >= 1
    again = Topology.from_json(local.to_json())
    assert again.os_index.tolist() == local.os_index.tolist()
    assert (again.level_ids == local.level_ids).all()


def test_unknown_machine_and_bad_synthetic_are_named():
    with pytest.raises(TopologyError, match="unknown machine 'vax'"):
        get_machine("vax")
    with pytest.raises(TopologyError, match="hwloc rejected synthetic topology 'core:banana'"):
        get_machine(topology="core:banana")


def test_linux_like_spreads_over_cores_then_pipelines():
    t2 = get_machine("ultrasparc-t2")
    ctx = linux_like(t2, 24)
    assert len(set(ctx)) == 24
    per_core = Counter(t2.level_ids[LEVELS.index("core")][ctx].tolist())
    per_pipe = Counter(t2.level_ids[LEVELS.index("pipeline")][ctx].tolist())
    assert sorted(per_core.values()) == [3] * 8
    assert sorted(per_pipe.values()) == [1] * 8 + [2] * 8
    # the first 8 tasks each take a core of their own
    assert len({int(t2.level_ids[LEVELS.index("core")][c]) for c in ctx[:8]}) == 8


def test_placement_json_follows_contract_1():
    wl = Workload("ahocorasick", 2)
    doc = placement(wl, [10, 11, 12, 20, 21, 22])
    assert doc == {"app": "ahocorasick", "allow_colocate": False, "instances": [
        {"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0}, "tasks": {"R": 10, "P": 11, "T": 12}},
        {"rx": {"port": 0, "queue": 1}, "tx": {"port": 1, "queue": 1}, "tasks": {"R": 20, "P": 21, "T": 22}}]}


def test_workload_that_does_not_fit_says_what_to_change():
    small = get_machine(topology="core:2 pu:4")
    with pytest.raises(WorkloadError) as e:
        Workload("ipfwd-l1", 4).check_fits(small, False, "model")
    msg = str(e.value)
    assert "needs 12 hardware contexts" in msg and "has 8" in msg
    assert "at most 2 fit" in msg and "--allow-colocate" in msg and "--machine ultrasparc-t2" in msg
    Workload("ipfwd-l1", 4).check_fits(small, True, "model")  # co-location lets it run


def test_workload_on_fewer_than_three_contexts_is_not_told_to_use_fewer_instances():
    two = get_machine(topology="core:2 pu:1")
    with pytest.raises(WorkloadError) as e:
        Workload("ipfwd-l1", 5).check_fits(two, False, "model")
    msg = str(e.value)
    assert "has 2 (fewer --instances cannot help: one instance needs 3). Use --allow-colocate" in msg, msg
    assert "at most" not in msg


def test_ahocorasick_workload_runs_keywords_mode() -> None:
    # the paper's benchmark (every occurrence of every keyword), not the app's
    # default rules mode; the dpdk backend appends these to the app's options
    assert Workload("ahocorasick", 2).app_args == ["--mode", "keywords"]
    assert Workload("stateful", 2).app_args == []
