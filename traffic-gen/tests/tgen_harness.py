"""Running pp-tgen (and its peers) from the tests: command lines, memif
socket paths outside /tmp, sanitizer settings, statistics read back."""
from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

from harness import Result, sanitizer_env

MEMIF_DIR = Path("/run/pipeplace")


def tgen_binary(build_dir: Path) -> Path:
    exe = build_dir / "traffic-gen" / "pp-tgen"
    assert exe.is_file(), f"pp-tgen not built in {build_dir} (meson setup with -Dparts=traffic-gen)"
    return exe


def eal(prefix: str, vdevs: list[str], lcores: str = "0,1") -> list[str]:
    args = ["-l", lcores, "--no-pci", "--file-prefix", prefix, "--log-level", "lib.eal:warning"]
    for v in vdevs:
        args += ["--vdev", v]
    return args


def memif_socket() -> Path:
    MEMIF_DIR.mkdir(parents=True, exist_ok=True)
    return MEMIF_DIR / f"tgen-{uuid.uuid4().hex[:12]}.sock"


def memif_vdev(sock: Path, role: str, log2_ring: int | None = None) -> str:
    v = f"net_memif0,role={role},socket={sock},socket-abstract=no"
    return v + (f",rsize={log2_ring}" if log2_ring else "")


def tgen_cmd(build_dir: Path, prefix: str, vdevs: list[str], args: list[str],
             stats: Path | None) -> list[str]:
    cmd = [str(tgen_binary(build_dir)), *eal(prefix, vdevs), "--"]
    if stats is not None:
        cmd += ["--stats", str(stats)]
    return cmd + args


def run_tgen(build_dir: Path, prefix: str, tmp: Path, vdevs: list[str], args: list[str],
             timeout: float = 60) -> Result:
    stats = tmp / f"tgen-{uuid.uuid4().hex[:6]}.json"
    p = subprocess.run(tgen_cmd(build_dir, prefix, vdevs, args, stats), capture_output=True,
                       text=True, timeout=timeout, env=sanitizer_env())
    data = json.loads(stats.read_text()) if stats.exists() else None
    return Result(p.returncode, data, p.stdout, p.stderr, require_stats=True)


def start_tgen(build_dir: Path, prefix: str, vdevs: list[str], args: list[str],
               stats: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(tgen_cmd(build_dir, prefix, vdevs, args, stats),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=sanitizer_env())


def wait_written(stats: Path, p: subprocess.Popen[str], timeout: float = 120) -> None:
    """Wait until a generator started with --peer-wait has written its
    statistics: its workers no longer poll, so its memif peer may leave
    (DPDK 22.11's memif PMD can crash a side that polls while its peer
    disconnects)."""
    end = time.monotonic() + timeout
    while not stats.exists() and p.poll() is None and time.monotonic() < end:
        time.sleep(0.05)


def finish(p: subprocess.Popen[str], stats: Path, timeout: float = 60) -> Result:
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    data = json.loads(stats.read_text()) if stats.exists() else None
    return Result(p.returncode, data, out, err, require_stats=True)
