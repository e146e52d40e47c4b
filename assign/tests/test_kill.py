"""SIGKILL at random moments loses nothing beyond the batch in flight (kill_soak.py; 50 kills there)."""
from __future__ import annotations

from pathlib import Path

from kill_soak import soak


def test_sample_killed_repeatedly_ends_as_an_uninterrupted_run(tmp_path: Path) -> None:
    seen = soak(tmp_path, kills=6, n=60000, seed=5)
    assert seen["n"] == 60000 and seen["mid_run"] >= 1
