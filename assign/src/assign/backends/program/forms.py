"""A placement in a program's own terms: EAL's --lcores map, the values a
control interface's commands take ({cpu_mask}, {cpus}, one per task), and
the files a workload prepares once ({capture}, {built}).  Shared by the
backend (what it runs) and deploy_form.py (what `assign best` writes), so
the two cannot drift apart."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ...program_file import Program
from ...topology import format_contexts


def lcores(prog: Program, place: dict[str, int], contexts: list[int]) -> str:
    """EAL's --lcores: each task's lcore on its CPU; the main lcore, unless a task, floats over every
    context the run may use (it runs the program's command line, not its fast path)."""
    parts = [f"{lcore}@{place[name]}" for name, lcore in prog.tasks]
    if prog.main_lcore not in {lc for _, lc in prog.tasks}:
        parts.insert(0, f"{prog.main_lcore}@({format_contexts(sorted(contexts))})")
    return ",".join(parts)


def hugepages_free_mb() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("HugePages_Free:"):
                free = int(line.split()[1])
            elif line.startswith("Hugepagesize:"):
                size_kb = int(line.split()[1])
        return free * size_kb // 1024
    except (OSError, ValueError, UnboundLocalError):
        return 0


def memory_args(prog: Program) -> list[str]:
    """-m N on hugepages when twice that is free (other DPDK processes share them), else --no-huge."""
    if prog.hugepages == "auto" and hugepages_free_mb() >= 2 * prog.memory_mb:
        return ["-m", str(prog.memory_mb)]
    return ["--no-huge", "-m", str(prog.memory_mb)]


def eal_options(prog: Program, place: dict[str, int], contexts: list[int], prefix: str, vdevs: list[str],
                memory: list[str]) -> list[str]:
    """What {eal} expands to."""
    main = ["--main-lcore", str(prog.main_lcore)]
    return (["--lcores", lcores(prog, place, contexts), *main, "--file-prefix", prefix, *memory]
            + [a for v in vdevs for a in ("--vdev", v)])


def driver_args() -> list[str]:
    """EAL's -d for DPDK's drivers where the test bed bundle's env.sh names them (PIPEPLACE_DPDK_DRIVERS:
    a machine without DPDK's packages, tools/testbed-bundle.sh), as the runtime's own programs take it."""
    d = os.environ.get("PIPEPLACE_DPDK_DRIVERS")
    return ["-d", d] if d else []


def control_values(prog: Program, place: dict[str, int], contexts: list[int]) -> dict[str, str]:
    """The placeholders of a control interface's commands."""
    cpus = sorted(set(place.values()))
    return {"cpu_mask": hex(sum(1 << c for c in cpus)), "cpus": ",".join(map(str, cpus)),
            "all_cpu_mask": hex(sum(1 << c for c in contexts)), "all_cpus": ",".join(map(str, sorted(contexts))),
            **{n: str(c) for n, c in place.items()}}


def fill(template: tuple[str, ...], values: dict[str, str]) -> list[str]:
    return [a.format(**values) for a in template]


# --- what a workload prepares once, cached by its command line and the script's content -----------

def _key(template: tuple[str, ...], cmd: list[str], extra: str = "") -> str:
    script = Path(cmd[1]) if template[0] == "{python}" and len(cmd) > 1 else Path(shutil.which(cmd[0]) or cmd[0])
    try:
        content = script.read_bytes()
    except OSError:
        content = b""
    return hashlib.sha256(json.dumps(list(template)).encode() + content + extra.encode()).hexdigest()[:12]


def capture_path(prog: Program, name: str, values: dict[str, str], cache: Path) -> tuple[Path, list[str]]:
    """Where the workload's capture is cached, and the command that writes it ({output} unfilled)."""
    cmd = fill(prog.capture_generator, {**values, "output": "{output}"})
    return cache / f"{name}-{_key(prog.capture_generator, cmd)}.pcap", cmd


def built_path(prog: Program, name: str, values: dict[str, str], cache: Path) -> tuple[Path, list[str]]:
    """Where the workload's built program is cached (a directory), and the command that builds it."""
    cmd = fill(prog.build, {**values, "output": "{output}"})
    return cache / f"{name}-build-{_key(prog.build, cmd, dpdk_version())}", cmd


def dpdk_version() -> str:
    try:
        return subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def make(path: Path, cmd: list[str], what: str, directory: bool = False) -> str | None:
    """Run a capture generator or a build into `path` once (atomically); None, or why it failed."""
    if path.exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    if directory:
        tmp.mkdir(parents=True, exist_ok=True)
    full = [a.replace("{output}", str(tmp)) for a in cmd]
    try:
        p = subprocess.run(full, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        shutil.rmtree(tmp, ignore_errors=True) if directory else tmp.unlink(missing_ok=True)
        return f"{what} {' '.join(full)}: {e}"
    if p.returncode != 0 or not tmp.exists():
        shutil.rmtree(tmp, ignore_errors=True) if directory else tmp.unlink(missing_ok=True)
        return f"{what} {' '.join(full)}: exit status {p.returncode}: {(p.stderr or p.stdout).strip()[-600:]}"
    try:
        os.replace(tmp, path)  # atomic: a concurrent backend never reads half of it
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True) if directory else tmp.unlink(missing_ok=True)
    return None


def python() -> str:
    return sys.executable
