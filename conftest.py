"""Fixtures shared by the tests of every part: where the Meson build and the
shared data are, and a DPDK --file-prefix of its own for each test so that
tests never share hugepage files or runtime sockets."""
from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent
# tests/ holds what the tests of several parts share: the harness package
# (tests/harness/: processes, sanitizers, pcap files, placements, run_app).
sys.path.insert(0, str(REPO / "tests"))
SHARED = Path(os.environ.get("PIPEPLACE_SHARED", REPO.parent / "shared")).resolve()


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared data not found at {SHARED} (set PIPEPLACE_SHARED)")
    return SHARED


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """The Meson build the C tests run against; tools/test.sh points this at
    the ASan+UBSan build."""
    d = Path(os.environ.get("PIPEPLACE_BUILD", REPO / "build")).resolve()
    if not (d / "build.ninja").exists():
        pytest.fail(f"no Meson build at {d}: run tools/setup.sh or set PIPEPLACE_BUILD")
    return d


@pytest.fixture
def file_prefix() -> str:
    return "pp" + uuid.uuid4().hex[:10]


# tools/test.sh runs the tests marked `system` (they run the C programs, DPDK,
# hugepages, network namespaces or the shared captures) one at a time, as in
# a serial run, and beside them, in a second pytest, the rest: the pure-Python
# tests of assign (the model, the estimators, the store, the CLI on the
# model backend) and the tests marked `offline` (a C program on files, no
# DPDK, no namespace).
SYSTEM_FIXTURES = {"build_dir", "file_prefix", "profile_build", "shared_dir"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    assign_tests = REPO / "assign" / "tests"
    for item in items:
        if item.get_closest_marker("offline") is None and (
                not Path(str(item.fspath)).resolve().is_relative_to(assign_tests)
                or SYSTEM_FIXTURES & set(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.system)
