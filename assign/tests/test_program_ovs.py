"""Open vSwitch with DPDK placed through its own control interface
(assign/WORKLOADS.md; packaged as `ovs-dpdk`): every sample starts its own
ovsdb-server and ovs-vswitchd and leaves nothing behind (process, socket,
database, DPDK runtime directory or hugepage file, network namespace);
OVS's PMD threads are read back during the window, by the test, on the
cores the placement names; OVS's own assignment is measured as a
baseline.  The system's OVS (its database and run directory) is never
touched."""
from __future__ import annotations

import itertools
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.topology import get_machine
from assign.workloads import Workload, spec_of
from cli_helpers import run_assign

OVS = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
pytestmark = pytest.mark.skipif(not os.access(OVS, os.X_OK) or shutil.which("ovsdb-server") is None,
                                reason="needs Debian's openvswitch-switch-dpdk (tools/setup.sh)")
MINE = re.compile(r"^asg[0-9a-f]{8}p\d+")   # the program backend's --file-prefix (and namespace) names
SYSTEM_OVS = [Path("/etc/openvswitch/conf.db"), Path("/var/run/openvswitch"), Path("/var/log/openvswitch")]


def contexts() -> list[int]:
    topo = get_machine("local")
    return [int(topo.os_index[i]) for i in range(topo.n_contexts)]


def leftovers() -> dict[str, set[str]]:
    """What a run of ovs-dpdk could leave: its processes, DPDK runtime directories and hugepage files,
    network namespaces and work directories."""
    procs = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if ("ovsdb-server" in cmd or "ovs-vswitchd" in cmd) and "assign-dpdk-asg" in cmd:
                procs.add(f"{pid} {cmd}")
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    return {"processes": procs,
            "dpdk": {d for d in os.listdir("/var/run/dpdk") if MINE.match(d)} if os.path.isdir("/var/run/dpdk")
            else set(),
            "hugepages": {f for f in os.listdir("/dev/hugepages") if MINE.match(f)}
            if os.path.isdir("/dev/hugepages") else set(),
            "netns": {n for n in ns if MINE.match(n)},
            "workdirs": {p.name for p in tmp.glob("assign-dpdk-asg*") if (p / "conf.db").exists()
                         or any(p.glob("*.sock"))}}


def left_behind(before: dict[str, set[str]]) -> dict[str, set[str]]:
    """What is there now and was not before (another session's OVS ending meanwhile is not ours)."""
    return {k: v - before[k] for k, v in leftovers().items() if v - before[k]}


def system_ovs() -> list[tuple[str, float | None]]:
    return [(str(p), p.stat().st_mtime if p.exists() else None) for p in SYSTEM_OVS]


def pmd_cores(pid: int) -> dict[str, set[int]]:
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{t}/comm").read_text().strip()
            if name.startswith("pmd-c"):
                out[name] = os.sched_getaffinity(int(t))
        except OSError:
            pass
    return out


def test_pmd_threads_are_on_the_placed_cores_during_the_window_and_nothing_is_left() -> None:
    before, system = leftovers(), system_ovs()
    ctx = contexts()[:2]
    placements = list(itertools.product(ctx, repeat=2))  # two rx queues; sharing a core is one PMD
    seen: list[tuple[tuple[int, int], dict]] = []
    now: list[tuple[int, int]] = []
    with DpdkBackend(get_machine("local"), Workload("ovs-dpdk"), DpdkOptions()) as be:
        be.window_hook = lambda pid, where: seen.append((now[-1], pmd_cores(pid)))
        results = []
        for p in placements:
            now.append(p)
            results.append(be.measure_one(p))
        b = spec_of("ovs-dpdk").program.baselines[0]
        now.append(("auto", "auto"))
        auto = be.measure_tasks(dict(zip(be.prog.task_names, ctx)), pattern=b.threads, commands=b.place)
        running = leftovers()
        workdir = be.state.workdir
        db_there = (workdir / "conf.db").exists()  # its own database, in the sample's private directory
    assert all(r.status == "ok" and r.value > 0 for r in results), [r.reason for r in results]
    assert auto.status == "ok" and auto.value > 0, auto.reason
    for p, got in seen:
        if p[0] == "auto":  # OVS's own choice: a PMD on every allowed core
            assert {frozenset(a) for a in got.values()} == {frozenset({c}) for c in ctx}, got
            continue
        # a PMD named for each core of the placement (pmd-cNN/id:M), pinned there, and none elsewhere
        for name, cpus in got.items():
            assert cpus == {int(name[5:7])}, got
        assert {int(n[5:7]) for n in got} == set(p), (p, got)
    # one OVS for the whole sample: placed while it runs
    assert {r.extra["starts"] for r in results} == {1} or any(r.extra["attempts"] > 1 for r in results)
    assert running["processes"] and running["netns"] and db_there
    assert not left_behind(before), left_behind(before)
    assert not workdir.exists()
    assert system_ovs() == system


def test_sample_of_ten_through_the_command_line_leaves_nothing(tmp_path: Path) -> None:
    before, system = leftovers(), system_ovs()
    db = tmp_path / "o.db"
    r = run_assign("sample", "--workload", "ovs-dpdk", "--backend", "dpdk", "--n", "10", "--allow-colocate",
                   "--repeat-every", "0", "--db", str(db), "--quiet", timeout=300)
    assert r.returncode == 0, r.stderr
    assert "10 measured values stored (10 new, 0 failed)" in r.stdout, r.stdout
    with sqlite3.connect(db) as con:
        n, = con.execute("select count(*) from measurements where status = 'ok' and value > 0").fetchone()
    assert n == 10
    assert not left_behind(before), left_behind(before)
    assert system_ovs() == system
    r = run_assign("baselines", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "OVS automatic" in r.stdout and "measured" in r.stdout, r.stdout
    assert not left_behind(before), left_behind(before)
