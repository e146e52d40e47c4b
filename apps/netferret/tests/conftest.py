"""netferret's tests share two tiers, made by the build under test
(nf-build) into that build's directory (netferret-tiers/), once: test (1
query, 1 image) and simsmall (16 queries, 3,544 images; about 30 s on two
cores), checked by digest on every use; the two pytest lanes of
tools/test.sh take turns on a lock.  The larger tiers are never made in
the suite."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import netferret_input as ni  # noqa: E402


@pytest.fixture(scope="session")
def nf_tier(build_dir: Path):
    cache = build_dir / "netferret-tiers"
    made: dict[str, Path] = {}

    def get(tier: str) -> Path:
        if tier not in made:
            made[tier] = ni.input_file(tier, 0, cache, build_dir)
        return made[tier]
    return get
