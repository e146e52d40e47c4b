"""A run's value unit, read without importing the workloads (units.py), is
the unit the workload itself gives, for every packaged workload."""
from __future__ import annotations

import subprocess
import sys

from assign.units import PACKAGED_DIR, value_unit
from assign.workloads import known_workloads


def test_every_packaged_workload_has_its_own_unit() -> None:
    names = sorted(p.stem for p in PACKAGED_DIR.glob("*.toml"))
    assert names and set(names) <= set(known_workloads())
    units = {name: value_unit(name, {}) for name in names}
    assert units == {name: known_workloads()[name].unit for name in names}
    assert len(set(units.values())) > 1  # the check compares something: MB/s, points/s beside packets/s


def test_a_stored_unit_comes_first_and_an_unknown_workload_is_in_packets() -> None:
    assert value_unit("ipfwd-mem", {"workload": {"value": {"unit": "frames/s"}}}) == "frames/s"
    assert value_unit("no-such-workload", {}) == "packets/s"
    assert value_unit("../ipfwd-mem", {}) == "packets/s"


def test_a_packaged_unit_is_read_without_the_workloads() -> None:
    code = ("import sys; from assign.units import value_unit; u = value_unit('netdedup', {}); "
            "print(u, 'assign.workloads' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["MB/s", "False"]
