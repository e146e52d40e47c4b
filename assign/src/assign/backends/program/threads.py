"""A running program's threads: their names (/proc/PID/task/TID/comm), where
they may run (sched_getaffinity), and moving them (sched_setaffinity).

DPDK names its lcore threads by version (../shared/reference/
placing-other-programs.md): `lcore-worker-N` up to 22.07, `rte-worker-N`
from 22.11 to 23.07, `dpdk-workerN` from 23.11; the main lcore is the
process's own thread (its TID is its PID) and keeps the program's name.
"""
from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable


def threads(pid: int) -> list[tuple[int, str]]:
    """(TID, name) of every thread of process `pid` now; [] when it is gone."""
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                out.append((int(t), f.read().rstrip("\n")))
        except (OSError, ValueError):  # ended between the listing and the read
            continue
    return sorted(out)


def matching(ts: Iterable[tuple[int, str]], pattern: str) -> list[tuple[int, str]]:
    """The threads whose name matches a glob (case-sensitive, as comm is)."""
    return [(tid, name) for tid, name in ts if fnmatch.fnmatchcase(name, pattern)]


def lcore_names(lcore: int) -> tuple[str, ...]:
    """The names DPDK gives lcore `lcore`'s thread, oldest release first."""
    return (f"lcore-worker-{lcore}", f"rte-worker-{lcore}", f"dpdk-worker{lcore}")


def lcore_thread(pid: int, ts: Iterable[tuple[int, str]], lcore: int, main_lcore: int) -> list[tuple[int, str]]:
    """The thread that runs lcore `lcore` of DPDK process `pid` (the process's own thread for the main lcore)."""
    if lcore == main_lcore:
        return [(tid, name) for tid, name in ts if tid == pid]
    names = lcore_names(lcore)
    return [(tid, name) for tid, name in ts if name in names]


def affinity(tid: int) -> set[int] | None:
    """The CPUs thread `tid` may run on (None: it has ended)."""
    try:
        return set(os.sched_getaffinity(tid))
    except OSError:
        return None


def pin(tid: int, cpu: int) -> str | None:
    """Move thread `tid` onto CPU `cpu`; None, or why not."""
    try:
        os.sched_setaffinity(tid, {cpu})
    except OSError as e:
        return f"sched_setaffinity(TID {tid}, CPU {cpu}): {e.strerror}"
    return None
