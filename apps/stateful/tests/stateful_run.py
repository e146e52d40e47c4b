"""Running the stateful app on a capture (net_pcap in, net_null out) for the
end-to-end tests, and reading what it wrote, on tests/harness."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from harness import Result, one_instance, sanitizer_reports, write_pcap  # noqa: F401 (re-exported)
from harness import app_binary as _app_binary
from harness import run_app as _run_app


class AppRun(Result):
    @property
    def flows(self) -> list[dict[str, Any]] | None:
        """The --dump-flows records (None if none were written)."""
        return self.extra


def app_binary(build_dir: Path) -> Path:
    return _app_binary(build_dir, "stateful")


def placement(tmp: Path) -> Path:
    """One instance; P on its own context when the machine lets us have two."""
    path = tmp / "placement.json"
    path.write_text(json.dumps(one_instance("stateful")))
    return path


def run_app(build_dir: Path, tmp: Path, file_prefix: str, pcap: Path,
            app_args: Iterable[str] = (), duration_s: float = 1.5,
            timeout_s: float = 120) -> AppRun:
    """Replay pcap once (no infinite_rx: every frame exactly once), stop after
    duration_s, return the statistics and the flow dump."""
    flows_path = tmp / "flows.json"
    flows_path.unlink(missing_ok=True)
    r = _run_app(build_dir, "stateful", file_prefix, tmp, [f"net_pcap0,rx_pcap={pcap}", "net_null0"],
                 one_instance("stateful"), ["--duration", str(duration_s), "--dump-flows", str(flows_path),
                                            *app_args], timeout_s)
    flows = None
    if flows_path.exists() and flows_path.stat().st_size > 0:
        flows = json.loads(flows_path.read_text())["flows"]
    return AppRun(r.rc, r.stats, r.stdout, r.stderr, extra=flows)
