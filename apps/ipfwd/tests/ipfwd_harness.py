"""Running the ipfwd binary from tests: placement files, EAL arguments,
sanitizer settings, and reading the statistics back."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from dpdk_process import SANITIZER_MARKS, Result, sanitizer_env  # noqa: F401 (re-exported)

def ipfwd_binary(build_dir: Path) -> Path:
    exe = build_dir / "apps" / "ipfwd" / "ipfwd"
    assert exe.is_file(), f"ipfwd not built in {build_dir} (meson setup with -Dparts=runtime,ipfwd)"
    return exe


def build_sanitizers(build_dir: Path) -> str:
    opts = json.loads((build_dir / "meson-info" / "intro-buildoptions.json").read_text())
    return next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")


def placement(instances: list[dict[str, Any]], variant: str | None = "l1",
              colocate: bool = True) -> dict[str, Any]:
    p: dict[str, Any] = {"app": "ipfwd", "allow_colocate": colocate, "instances": instances}
    if variant is not None:
        p["variant"] = variant
    return p


def instance(rx_port: int, rx_queue: int, tx_port: int, tx_queue: int,
             r: int = 0, p: int = 1, t: int = 0) -> dict[str, Any]:
    return {"rx": {"port": rx_port, "queue": rx_queue}, "tx": {"port": tx_port, "queue": tx_queue},
            "tasks": {"R": r, "P": p, "T": t}}


def run_ipfwd(build_dir: Path, file_prefix: str, tmp: Path, vdevs: list[str],
              place: dict[str, Any] | None, args: list[str], timeout: float = 120,
              eal: list[str] | None = None) -> Result:
    cmd = [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix, "--log-level", "lib.eal:warning"]
    cmd += eal or []
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd.append("--")
    if place is not None:
        pfile = tmp / "placement.json"
        pfile.write_text(json.dumps(place))
        cmd += ["--placement", str(pfile)]
    stats_file = tmp / "stats.json"
    if stats_file.exists():
        stats_file.unlink()
    cmd += ["--stats", str(stats_file)] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=sanitizer_env())
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else None
    return Result(p.returncode, stats, p.stdout, p.stderr)
