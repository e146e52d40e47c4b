"""tools/setup.sh refuses a bad PIPEPLACE_HUGEPAGES before it installs or builds anything."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[1] / "tools" / "setup.sh"


@pytest.mark.parametrize("value", ["abc", "0", "-5", "12345678", "4k", " 512"])
def test_a_bad_hugepage_count_is_refused_naming_it_before_anything_runs(value: str) -> None:
    env = dict(os.environ, PIPEPLACE_HUGEPAGES=value)
    r = subprocess.run(["/bin/bash", str(SETUP)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr == f"setup: PIPEPLACE_HUGEPAGES='{value}': expected a number of 2 MiB pages, 1 to 9999999\n"
    assert r.stdout == ""
