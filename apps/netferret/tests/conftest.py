"""netferret's tests share two tiers, made once into a build directory
(netferret-tiers/) and checked by digest on every use: test (1 query, 1
image) and simsmall (16 queries, 3,544 images; about 20 s on two cores).
They are made by the release build's nf-build where there is one
(tools/setup.sh always makes build/): under ASan, making simsmall's
database costs minutes, while every query the tests send still runs in the
build under test, and the database's vectors are checked against the
Python reference on a sample.  The two pytest lanes of tools/test.sh take
turns on a lock.  The larger tiers are never made in the suite."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import netferret_input as ni  # noqa: E402


@pytest.fixture(scope="session")
def nf_tier(build_dir: Path, repo_dir: Path):
    release = repo_dir / "build"
    maker = release if (release / "apps" / "netferret" / "nf-build").is_file() else build_dir
    cache = maker / "netferret-tiers"
    made: dict[str, Path] = {}

    def get(tier: str) -> Path:
        if tier not in made:
            made[tier] = ni.input_file(tier, 0, cache, maker)
        return made[tier]
    return get
