"""`pipeplace status` and `pipeplace clean`: what is built, what the
machine offers (hugepages), what is cached, and what killed runs left
behind; and removing the latter.

Leftovers are only ever those of processes that are gone: a network
namespace whose /run/pipeplace/net/NAME.pid names a dead process, a DPDK
runtime directory of assign's (--file-prefix asg...) whose primary process
no longer holds the lock DPDK takes on its config file (so no live process
of anyone's is touched), with the hugepage files of that prefix."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from assign.backends.dpdk.client import NET_STATE, remove_net
from assign.backends.dpdk.runners import cleanup_prefix, hugetlbfs_dirs

from .catalog import apps, build_dir_of, default_cache_dir, parts

DPDK_RUN = Path("/var/run/dpdk")
ASSIGN_PREFIXES = ("asg",)   # the backend's --file-prefix (asg..., asgtg... for its generator)
MEMIF_DIR = Path("/run/pipeplace")
SETTLE_S = 60.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_nets() -> list[tuple[str, int | None]]:
    """(name, pid) of namespaces pipeplace or assign made whose process is gone."""
    out = []
    for f in sorted(NET_STATE.glob("*.pid")) if NET_STATE.is_dir() else []:
        try:
            pid = int(f.read_text().strip())
        except (OSError, ValueError):
            pid = None
        if pid is None or not _alive(pid):
            out.append((f.stem, pid))
    return out


def dpdk_primary_alive(prefix_dir: Path) -> bool:
    """Whether a DPDK primary process still runs under this runtime directory:
    EAL holds a write lock on its `config` file for as long as it lives."""
    cfg = prefix_dir / "config"
    try:
        fd = os.open(cfg, os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: leave it
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock taken for the test


def stale_dpdk() -> list[tuple[str, int]]:
    """(prefix, hugepage bytes) of assign's DPDK runs whose process is gone.
    A directory younger than a minute is left alone: EAL makes it before it
    takes the lock."""
    if not DPDK_RUN.is_dir():
        return []
    out = []
    now = time.time()
    for d in sorted(DPDK_RUN.iterdir()):
        if (d.name.startswith(ASSIGN_PREFIXES) and d.is_dir() and now - d.stat().st_mtime > SETTLE_S
                and not dpdk_primary_alive(d)):
            out.append((d.name, _hugepage_bytes(d.name)))
    return out


def _hugepage_bytes(prefix: str) -> int:
    total = 0
    for h in hugetlbfs_dirs():
        try:
            for e in os.scandir(h):
                if e.name.startswith(prefix + "map_"):
                    total += e.stat().st_size
        except OSError:
            pass
    return total


def _du(path: Path) -> tuple[int, int]:
    n = size = 0
    if path.is_dir():
        for p in path.rglob("*"):
            if p.is_file():
                n += 1
                size += p.stat().st_size
    return n, size


def hugepages() -> dict:
    info = {}
    try:
        for ln in Path("/proc/meminfo").read_text().splitlines():
            k, _, v = ln.partition(":")
            if k in ("HugePages_Total", "HugePages_Free", "Hugepagesize"):
                info[k] = int(v.split()[0])
    except OSError:
        pass
    return {"total": info.get("HugePages_Total", 0), "free": info.get("HugePages_Free", 0),
            "page_kib": info.get("Hugepagesize", 0), "mounts": hugetlbfs_dirs()}


def build_state(build: Path) -> dict:
    d: dict = {"dir": str(build), "configured": (build / "build.ninja").exists()}
    if not d["configured"]:
        return d
    binaries = {a: build / "apps" / a / a for a in apps()} | {"pp-tgen": build / "traffic-gen" / "pp-tgen"}
    d["binaries"] = {k: v.is_file() for k, v in binaries.items()}
    p = subprocess.run(["ninja", "-C", str(build), "-n"], capture_output=True, text=True)
    d["up_to_date"] = p.returncode == 0 and "no work to do" in p.stdout
    return d


def status(args) -> int:
    build = build_dir_of(args.build)
    cache = default_cache_dir()
    files, size = _du(cache)
    nets, dpdk = stale_nets(), stale_dpdk()
    st = {"build": build_state(build), "parts": parts(), "hugepages": hugepages(),
          "python": sys.executable,
          "cache": {"dir": str(cache), "files": files, "bytes": size},
          "leftovers": {"namespaces": [n for n, _ in nets], "dpdk_prefixes": [p for p, _ in dpdk],
                        "hugepage_bytes": sum(b for _, b in dpdk)}}
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    b = st["build"]
    if not b["configured"]:
        print(f"build: {b['dir']}: not configured (pipeplace build)")
    else:
        built = [k for k, v in b["binaries"].items() if v]
        missing = [k for k, v in b["binaries"].items() if not v]
        print(f"build: {b['dir']}: " + ("up to date" if b["up_to_date"] else "out of date (pipeplace build)")
              + f"; built: {', '.join(built) or 'none'}" + (f"; not built: {', '.join(missing)}" if missing else ""))
    h = st["hugepages"]
    print(f"hugepages: {h['free']} of {h['total']} free ({h['page_kib']} KiB each); hugetlbfs: "
          + (", ".join(h["mounts"]) or "not mounted (DPDK programs run with --no-huge)"))
    print(f"python: {st['python']}")
    print(f"cache: {cache}: {files} files, {size / 1e6:,.1f} MB (captures and inputs; pipeplace clean --cache)")
    if nets or dpdk:
        names = ", ".join(st["leftovers"]["namespaces"]) or "none"
        print(f"leftovers of runs that are gone (pipeplace clean): namespaces {names}; "
              f"DPDK runs {len(dpdk)} holding {st['leftovers']['hugepage_bytes'] / 1e6:,.1f} MB of hugepages")
    else:
        print("leftovers of runs that are gone: none")
    return 0


def clean(args) -> int:
    removed, failed = [], []
    for name, pid in stale_nets():
        left = remove_net(name)
        (failed if left else removed).append(f"namespace {name} (process {pid} gone)" + (f": {left}" if left else ""))
    for prefix, nbytes in stale_dpdk():
        cleanup_prefix(prefix)
        (MEMIF_DIR / f"{prefix}.sock").unlink(missing_ok=True)
        removed.append(f"DPDK run {prefix} ({nbytes / 1e6:,.1f} MB of hugepages)")
    if args.cache:
        cache = default_cache_dir()
        files, size = _du(cache)
        shutil.rmtree(cache, ignore_errors=True)
        removed.append(f"cache {cache} ({files} files, {size / 1e6:,.1f} MB)")
    if args.builds:
        build = build_dir_of(args.build)
        if (build / "build.ninja").exists():
            shutil.rmtree(build)
            removed.append(f"build {build}")
    for r in removed:
        print(f"pipeplace clean: removed {r}")
    for f in failed:
        print(f"pipeplace clean: could not remove {f}", file=sys.stderr)
    if not removed and not failed:
        print("pipeplace clean: nothing to remove")
    return 1 if failed else 0
