"""Running a runtime app (ipfwd, ahocorasick, stateful, analyzer): EAL
arguments, ports as vdevs, the placement file, the statistics read back."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Iterable

from .process import Result, sanitizer_env


def app_binary(build_dir: Path, app: str) -> Path:
    exe = build_dir / "apps" / app / app
    assert exe.is_file(), f"{exe} not built (meson setup with -Dparts including runtime,{app})"
    return exe


def run_app(build_dir: Path, app: str, file_prefix: str, tmp: Path, vdevs: Iterable[str],
            place: dict[str, Any] | None, args: Iterable[str] = (), timeout: float = 120,
            eal: Iterable[str] = (), stats_name: str = "stats.json") -> Result:
    """Run app once: vdevs become --vdev ports, place (if any) the
    --placement file, then the runtime's and the app's args; the statistics
    go to tmp/stats_name and are read back (None if none were written)."""
    cmd = [str(app_binary(build_dir, app)), "--no-pci", "--file-prefix", file_prefix,
           "--log-level", "lib.eal:warning", *eal]
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd.append("--")
    if place is not None:
        pfile = tmp / "placement.json"
        pfile.write_text(json.dumps(place))
        cmd += ["--placement", str(pfile)]
    stats_file = tmp / stats_name
    stats_file.unlink(missing_ok=True)
    cmd += ["--stats", str(stats_file), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=sanitizer_env())
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else None
    return Result(p.returncode, stats, p.stdout, p.stderr)
