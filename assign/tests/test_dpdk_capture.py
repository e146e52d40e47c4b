"""--capture-packets: the packets of each instance's generated capture, which the
replay sends in a loop.  R copies every frame out of it, so its size sets
how much of R's cost is the replay's own memory traffic (assign/notes/
2026-11-26-capture-footprint.md).  It reaches the generator, is part of a run's
identity, and a characterization or calibration made with another size is
refused, naming both sizes."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from assign.backends.base import BackendError
from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.backends.dpdk.traffic import capture_packets_in
from assign.commands.calibrate import load_characterization
from assign.topology import get_machine
from assign.workloads import Workload
from cli_helpers import run_assign


def test_the_generator_writes_captures_of_the_size_asked_for(build_dir: Path, tmp_path: Path) -> None:
    opts = DpdkOptions(build_dir=build_dir, cache_dir=tmp_path / "cache", packets=2000, capture_packets=300)
    topo = get_machine()
    with DpdkBackend(topo, Workload("analyzer", 2), opts, allow_colocate=True) as be:
        assert be.describe()["capture_packets"] == 300
        assert [capture_packets_in(c) for c in be.traffic.captures] == [300, 300]
        c = int(topo.os_index[0])
        out = be.runner.run(be.placement([c] * 6), be.opts.timeout_s())
    assert out.error is None, out.error
    # each instance's window is longer than its capture: the replay went round it several times
    assert all(t["packets"] >= 2000 for t in out.stats["tasks"] if t["role"] == "R"), out.stats["tasks"]
    # the generator's default is another file, of its own size
    with DpdkBackend(topo, Workload("analyzer", 1), DpdkOptions(build_dir=build_dir, cache_dir=tmp_path / "cache",
                                                                 packets=2000), allow_colocate=True) as be:
        assert "capture_packets" not in be.describe()
        assert capture_packets_in(be.traffic.captures[0]) == 16384


@pytest.mark.parametrize("value", ["0", "-5", "many", "1.5"])
def test_bad_capture_sizes_are_refused_before_anything_runs(tmp_path: Path, value: str) -> None:
    db = tmp_path / "x.db"
    r = run_assign("sample", "--workload", "analyzer", "--instances", "1", "--backend", "dpdk", "--n", "1",
                   "--capture-packets", value, "--db", str(db), "--quiet", "--allow-colocate")
    assert r.returncode == 2 and f"--capture-packets: {value!r}" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not db.exists()


def test_bad_stored_capture_sizes_are_refused() -> None:
    with pytest.raises(BackendError, match=r"--capture-packets 0: expected at least 1"):
        DpdkOptions(capture_packets=0)
    # a stored run's parameters come back through from_params: a value no command line gives
    for stored in (True, "4096", 2.5):
        with pytest.raises(BackendError, match=rf"--capture-packets {stored!r}: expected at least 1"):
            DpdkOptions.from_params({"window": {"packets_per_instance": 1000}, "capture_packets": stored})


def test_ipfwd_over_the_generator_has_no_capture_to_size(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    r = run_assign("sample", "--workload", "ipfwd-l1", "--instances", "1", "--backend", "dpdk", "--n", "1",
                   "--traffic", "tgen", "--capture-packets", "1000", "--db", str(db), "--quiet", "--allow-colocate")
    assert r.returncode == 2 and "--capture-packets 1000 with --traffic tgen" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not db.exists()


def test_characterization_and_calibration_of_another_capture_size_are_refused(tmp_path: Path) -> None:
    topo = get_machine("local")
    tree = topo.to_json()["tree"]
    char = tmp_path / "char.json"
    base = {"workload": "stateful", "machine": tree, "roles": {}, "sharing": {}, "timer": {}}
    char.write_text(json.dumps({**base, "capture_packets": 4096}))
    with pytest.raises(ValueError, match=r"another capture size: it was measured with captures of 4,096 packets, "
                                         r"this run uses the generator's default captures \(--capture-packets\)"):
        load_characterization(str(char), "stateful", topo)
    with pytest.raises(ValueError, match="captures of 4,096 packets, this run uses captures of 1,024 packets"):
        load_characterization(str(char), "stateful", topo, capture_packets=1024)
    assert load_characterization(str(char), "stateful", topo, capture_packets=4096)
    char.write_text(json.dumps(base))  # made without --capture-packets: the generator's default
    assert load_characterization(str(char), "stateful", topo)
    with pytest.raises(ValueError, match="the generator's default captures, this run uses captures of 4,096"):
        load_characterization(str(char), "stateful", topo, capture_packets=4096)

    doc = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    doc["calibrated_for"] = {"workload": "stateful", "machine": tree, "capture_packets": 4096}
    params = tmp_path / "params.json"
    params.write_text(json.dumps(doc))
    r = run_assign("validate", "--workload", "stateful", "--model-params", str(params), "--n", "5",
                   "--capture-packets", "1024")
    assert r.returncode == 2 and "calibrated for another capture size" in r.stderr and "4,096" in r.stderr \
        and "1,024" in r.stderr, r.stderr
    doc["calibrated_for"]["capture_packets"] = "4096"
    params.write_text(json.dumps(doc))
    r = run_assign("validate", "--workload", "stateful", "--model-params", str(params), "--n", "5")
    assert r.returncode == 2 and "calibrated_for.capture_packets is '4096', not a positive integer" in r.stderr, \
        r.stderr
