"""ipfwd's side of the test harness (tests/harness/): its binary, its
placements, and run_ipfwd on top of harness.run_app."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import harness
from harness import SANITIZER_MARKS, Result, instance, sanitizer_env  # noqa: F401 (re-exported)


def ipfwd_binary(build_dir: Path) -> Path:
    return harness.app_binary(build_dir, "ipfwd")


def build_sanitizers(build_dir: Path) -> str:
    opts = json.loads((build_dir / "meson-info" / "intro-buildoptions.json").read_text())
    return next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")


def placement(instances: list[dict[str, Any]], variant: str | None = "l1",
              colocate: bool = True) -> dict[str, Any]:
    return harness.placement("ipfwd", instances, variant=variant, colocate=colocate)


def run_ipfwd(build_dir: Path, file_prefix: str, tmp: Path, vdevs: list[str],
              place: dict[str, Any] | None, args: list[str], timeout: float = 120,
              eal: list[str] | None = None) -> Result:
    return harness.run_app(ipfwd_binary(build_dir), file_prefix, tmp, vdevs, place, args,
                           timeout=timeout, eal=eal or [], stats=tmp / "stats.json")
