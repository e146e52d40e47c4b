"""Running the ipfwd binary from tests: placement files, EAL arguments,
sanitizer settings, and reading the statistics back."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import SANITIZER_MARKERS as SANITIZER_MARKS  # noqa: F401 (re-exported)
from harness import Result, run_app, sanitizer_env  # noqa: F401 (re-exported)
from harness import instance as instance  # noqa: F401 (re-exported)
from harness import placement as _placement


def ipfwd_binary(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "ipfwd" / "ipfwd"
    assert exe.is_file(), f"ipfwd not built in {build_dir} (meson setup with -Dparts=runtime,ipfwd)"
    return exe


def build_sanitizers(build_dir: Path) -> str:
    opts = json.loads((build_dir / "meson-info" / "intro-buildoptions.json").read_text())
    return next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")


def placement(instances: list[dict[str, Any]], variant: str | None = "l1",
              colocate: bool = True) -> dict[str, Any]:
    return _placement("ipfwd", instances, variant, colocate)


def run_ipfwd(build_dir: Path, file_prefix: str, tmp: Path, vdevs: list[str],
              place: dict[str, Any] | None, args: list[str], timeout: float = 120,
              eal: list[str] | None = None) -> Result:
    return run_app(build_dir, "ipfwd", file_prefix, tmp, vdevs, place, args, timeout, eal or [])
