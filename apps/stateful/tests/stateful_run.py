"""Running the stateful app on a capture (net_pcap in, net_null out) for the
end-to-end tests, and reading what it wrote, on tests/harness."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from harness import Result, sanitizer_reports, write_pcap  # noqa: F401 (re-exported)
from harness import app_binary as _app_binary
from harness import placement as _placement
from harness import run_app as _run_app


@dataclass
class AppRun(Result):
    flows: list[dict[str, Any]] | None = None  # the --dump-flows records (None if none were written)


def app_binary(build_dir: Path) -> Path:
    return _app_binary(build_dir, "stateful")


def placement(tmp: Path) -> Path:
    """One instance; P on its own context when the machine lets us have two."""
    path = tmp / "placement.json"
    path.write_text(json.dumps(_placement("stateful", 1)))
    return path


def run_app(build_dir: Path, tmp: Path, file_prefix: str, pcap: Path,
            app_args: Iterable[str] = (), duration_s: float = 1.5,
            timeout_s: float = 120) -> AppRun:
    """Replay pcap once (no infinite_rx: every frame exactly once), stop after
    duration_s, return the statistics and the flow dump."""
    flows_path = tmp / "flows.json"
    flows_path.unlink(missing_ok=True)
    r = _run_app(app_binary(build_dir), file_prefix, tmp, [f"net_pcap0,rx_pcap={pcap}", "net_null0"],
                 _placement("stateful", 1), ["--dump-flows", str(flows_path), *app_args],
                 duration=duration_s, timeout=timeout_s, stats=tmp / "stats.json")
    flows = None
    if flows_path.exists() and flows_path.stat().st_size > 0:
        flows = json.loads(flows_path.read_text())["flows"]
    return AppRun(r.rc, r.stats, r.stdout, r.stderr, r.require_stats, r.cmd, flows)
