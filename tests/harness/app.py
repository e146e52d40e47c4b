"""Running a runtime app (ipfwd, ahocorasick, stateful, analyzer) the way
the tests and benchmarks do: EAL arguments (no PCI, a --file-prefix of its
own, vdevs such as net_pcap and net_null), a placement file, a statistics
file, sanitizer settings.

Hugepages: the runtime falls back to --no-huge -m <computed> by itself when
the free hugepages are short (pp_main.c), so nothing is needed here;
no_huge_mb forces --no-huge -m N (for a run that must not touch hugepages)."""
from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Any, Sequence

from harness.placement import write_placement
from harness.process import Result, finish, read_stats, sanitizer_env


def hugepages() -> dict[str, int]:
    """Hugepage counts of the default size from /proc/meminfo (total, free,
    reserved, surplus, size_kb) and whether hugetlbfs is mounted (mounted 0/1)."""
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    mounted = any(" hugetlbfs " in line for line in Path("/proc/mounts").read_text().splitlines())
    get = lambda k: int(info.get(k, "0").split()[0])  # noqa: E731
    return {"total": get("HugePages_Total"), "free": get("HugePages_Free"),
            "reserved": get("HugePages_Rsvd"), "surplus": get("HugePages_Surp"),
            "size_kb": get("Hugepagesize"), "mounted": int(mounted)}


def free_hugepage_mb() -> int:
    """Free hugepage memory in MiB (0 when hugetlbfs is not mounted): what
    decides whether a run needs --no-huge."""
    h = hugepages()
    return h["free"] * h["size_kb"] // 1024 if h["mounted"] else 0


def app_binary(build_dir: Path, app: str, name: str | None = None) -> Path:
    """apps/<app>/<name or app> in the Meson build build_dir."""
    exe = build_dir / "apps" / app / (name or app)
    assert exe.is_file(), f"{exe} not built (meson setup with -Dparts including runtime,{app})"
    return exe


def peer_driver_args() -> list[str]:
    """EAL's -d for DPDK's own programs (testpmd, l3fwd) on a test bed whose
    drivers come from tools/testbed-bundle.sh (PIPEPLACE_DPDK_DRIVERS); the
    project's programs add it themselves (runtime/base/pp_eal.c)."""
    d = os.environ.get("PIPEPLACE_DPDK_DRIVERS")
    return ["-d", d] if d else []


def eal_args(file_prefix: str, vdevs: Sequence[str] = (), lcores: str | None = None,
             no_huge_mb: int | None = None, log_level: str | None = "lib.eal:warning",
             extra: Sequence[str] = ()) -> list[str]:
    args = ["--no-pci", "--file-prefix", file_prefix]
    if lcores is not None:
        args += ["-l", lcores]
    if no_huge_mb is not None:
        args += ["--no-huge", "-m", str(no_huge_mb)]
    if log_level is not None:
        args += ["--log-level", log_level]
    args += list(extra)
    for v in vdevs:
        args += ["--vdev", v]
    return args


def _command(binary: Path, file_prefix: str, tmp: Path, vdevs: Sequence[str],
             place: dict[str, Any] | Path | None, args: Sequence[str], duration: float | None,
             stats: Path | None, eal: Sequence[str], no_huge_mb: int | None) -> list[str]:
    cmd = [str(binary), *eal_args(file_prefix, vdevs, no_huge_mb=no_huge_mb, extra=eal), "--"]
    if isinstance(place, dict):
        place = write_placement(tmp / "placement.json", place)
    if place is not None:
        cmd += ["--placement", str(place)]
    if duration is not None:
        cmd += ["--duration", str(duration)]
    if stats is not None:
        stats.unlink(missing_ok=True)
        cmd += ["--stats", str(stats)]
    return cmd + list(args)


def run_app(binary: Path, file_prefix: str, tmp: Path, vdevs: Sequence[str],
            place: dict[str, Any] | Path | None, args: Sequence[str] = (),
            duration: float | None = None, timeout: float = 120, eal: Sequence[str] = (),
            stats: Path | None | bool = True, no_huge_mb: int | None = None,
            require_stats: bool = False, env: dict[str, str] | None = None) -> Result:
    """Run binary to its end and return its Result.
    place: a placement (written to a file in tmp), a placement file, or None
    (no --placement).  stats: True for a fresh file in tmp, a path, or
    False/None for no --stats.  duration: --duration in seconds, if any."""
    stats_path = _stats_path(tmp, stats)
    cmd = _command(binary, file_prefix, tmp, vdevs, place, args, duration, stats_path, eal, no_huge_mb)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=env if env is not None else sanitizer_env())
    return Result(p.returncode, read_stats(stats_path), p.stdout, p.stderr, require_stats, tuple(cmd))


def start_app(binary: Path, file_prefix: str, tmp: Path, vdevs: Sequence[str],
              place: dict[str, Any] | Path | None, args: Sequence[str] = (),
              duration: float | None = None, eal: Sequence[str] = (),
              stats: Path | None | bool = True, no_huge_mb: int | None = None,
              stdin: int | None = None) -> tuple[subprocess.Popen[str], Path | None]:
    """Start binary in the background; collect it with harness.finish(p, stats)."""
    stats_path = _stats_path(tmp, stats)
    cmd = _command(binary, file_prefix, tmp, vdevs, place, args, duration, stats_path, eal, no_huge_mb)
    p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=sanitizer_env())
    return p, stats_path


def _stats_path(tmp: Path, stats: Path | None | bool) -> Path | None:
    if stats is True:
        return tmp / f"stats-{uuid.uuid4().hex[:6]}.json"
    if stats is False or stats is None:
        return None
    return stats


__all__ = ["app_binary", "eal_args", "finish", "free_hugepage_mb", "hugepages", "run_app", "start_app"]
