"""A program we did not write, placed by a `launch = "threads"` workload
file (assign/WORKLOADS.md): a small multithreaded C program the test
builds (data/spinners.c: workers named spin-0, spin-1, a thread named
helper).  Every matched thread's affinity is read during the window, by
the test, and must be the placement; bad files are refused before
anything runs (exit status 2, file, key and value named); a program that
dies mid-run is a failed measurement with its reason; `assign best`
writes taskset lines that place a running copy of the program."""
from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.topology import get_machine
from assign.workloads import Workload, load_workload_file
from cli_helpers import run_assign

HERE = Path(__file__).resolve().parent

WORKLOAD = """\
name = "{name}"
description = "spinners: two counting workers and an idle helper (assign/tests/data/spinners.c)"
launch = "threads"

[program]
command = ["{{here}}/spinners", "2"{extra}]
repin = {repin}

[tasks]
spin0 = "spin-0"
spin1 = "{pattern1}"

[value]
from = "output"
pattern = '^ops (\\d+)'
unit = "units/s"
about = "units of work both workers did per second of the window (the program's own counter)"

[window]
duration = {duration}
warmup = 0.02
"""


@pytest.fixture(scope="module")
def spinners(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("spinners")
    exe = d / "spinners"
    subprocess.run(["cc", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(HERE / "data" / "spinners.c")], check=True)
    return d


def workload_file(d: Path, name: str, *, extra: str = "", repin: bool = True, pattern1: str = "spin-1",
                  duration: float = 0.15) -> Path:
    f = d / f"{name}.toml"
    f.write_text(WORKLOAD.format(name=name, extra=extra, repin="true" if repin else "false", pattern1=pattern1,
                                 duration=duration))
    return f


def two_contexts() -> list[int]:
    topo = get_machine("local")
    return [int(topo.os_index[i]) for i in range(min(2, topo.n_contexts))]


def named_threads(pid: int) -> dict[int, str]:
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(t)] = Path(f"/proc/{pid}/task/{t}/comm").read_text().strip()
        except OSError:
            pass
    return out


@pytest.mark.parametrize("repin", [True, False], ids=["repinned", "restarted"])
def test_every_matched_thread_is_where_the_placement_says_during_the_window(spinners: Path, repin: bool) -> None:
    spec = load_workload_file(workload_file(spinners, f"spinners-{'repin' if repin else 'restart'}", repin=repin))
    ctx = two_contexts()
    placements = list(itertools.product(ctx, repeat=2))  # co-location too: two workers share a CPU
    seen: list[tuple[tuple[int, int], dict]] = []
    now: list[tuple[int, int]] = []

    def read_affinity(pid: int, where: dict[int, int]) -> None:
        # the test's own reading, by thread name, in the window: not the backend's
        seen.append((now[-1], {name: (tid, os.sched_getaffinity(tid)) for tid, name in named_threads(pid).items()}))

    results = []
    with DpdkBackend(get_machine("local"), Workload(spec.name), DpdkOptions()) as be:
        be.window_hook = read_affinity
        for p in placements:
            now.append(p)
            results.append(be.measure_one(p))
    assert all(r.status == "ok" and r.value > 0 for r in results), [r.reason for r in results]
    # every window read (a retried attempt's too: a loaded machine may starve the program's printing)
    assert {p for p, _ in seen} == set(placements)
    for (c0, c1), got in seen:
        assert got["spin-0"][1] == {c0} and got["spin-1"][1] == {c1}, (c0, c1, got)
        # a thread no task matches is left where the program put it: where it was started (as this test)
        assert got["helper"][1] == os.sched_getaffinity(0), got
    # repinned: one process for every placement (unless a failed attempt restarted it); restarted: one per
    # attempt, the preflight's first
    retried = sum(r.extra["attempts"] - 1 for r in results)
    assert results[-1].extra["starts"] == (1 + retried if repin else 1 + len(placements) + retried), \
        [(r.extra["starts"], r.extra.get("retried_after")) for r in results]
    assert all(r.extra["runner"] == ("repin" if repin else "restart") for r in results)


def test_sample_best_and_the_taskset_lines_through_the_command_line(spinners: Path, tmp_path: Path) -> None:
    f = workload_file(spinners, "spinners-cli")
    db = tmp_path / "s.db"
    r = run_assign("sample", "--workload-file", str(f), "--backend", "dpdk", "--n", "6", "--allow-colocate",
                   "--repeat-every", "0", "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "6 measured values stored (6 new, 0 failed)" in r.stdout
    with sqlite3.connect(db) as con:
        n, = con.execute("select count(*) from measurements where status = 'ok' and value > 0").fetchone()
    assert n == 6
    out = tmp_path / "best.json"
    r = run_assign("best", "--db", str(db), "--out", str(out), "--single")
    assert r.returncode == 0, r.stderr
    deploy = tmp_path / "best.deploy.sh"
    assert "in the program's own form" in r.stdout and deploy.is_file()
    import json

    chosen = json.loads(out.read_text())["tasks"]
    assert sorted(chosen) == ["spin0", "spin1"]
    # the lines place a fresh copy of the program: read back by thread name
    p = subprocess.Popen([str(spinners / "spinners"), "2", "--lifetime", "30"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while sorted(named_threads(p.pid).values()).count("spin-1") == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        subprocess.run(["sh", str(deploy)], env={**os.environ, "PID": str(p.pid)}, check=True)
        names = {n: os.sched_getaffinity(t) for t, n in named_threads(p.pid).items()}
        assert names["spin-0"] == {chosen["spin0"]} and names["spin-1"] == {chosen["spin1"]}, names
    finally:
        p.terminate()
        p.wait(timeout=10)


def test_bad_input_is_refused_before_anything_runs(spinners: Path, tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    cases = [
        # a pattern that matches no thread: the task, its pattern and the threads there are
        (workload_file(spinners, "spinners-nothread", pattern1="spin-9"), ["tasks.spin1", "'spin-9'", "helper"]),
        # a program that ends before its window
        (workload_file(spinners, "spinners-exits", extra=', "--exit-after", "0"'),
         ["program.command", "ended before its window", "exit status 3"]),
    ]
    for f, words in cases:
        r = run_assign("sample", "--workload-file", str(f), "--backend", "dpdk", "--n", "2", "--allow-colocate",
                       "--db", str(db), "--quiet")
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert str(f) in r.stderr and all(w in r.stderr for w in words), r.stderr
        assert not db.exists()  # nothing ran: no run was even created
    # a placement whose tasks are not the file's (a task count that does not match)
    good = workload_file(spinners, "spinners-count")
    place = tmp_path / "three.json"
    place.write_text('{"workload": "spinners-count", "launch": "threads", "tasks": {"spin0": 0, "spin1": 0, '
                     '"spin2": 0}}')
    r = run_assign("noise", "--placement", str(place), "--workload-file", str(good), "--reps", "2")
    assert r.returncode == 2 and str(place) in r.stderr and "'tasks'" in r.stderr and "3 task(s)" in r.stderr, \
        r.stderr
    # --instances means nothing for a program: refused, not ignored
    r = run_assign("sample", "--workload-file", str(good), "--backend", "dpdk", "--n", "2", "--instances", "3",
                   "--db", str(db))
    assert r.returncode == 2 and "--instances 3" in r.stderr and "no instances" in r.stderr, r.stderr


def test_a_program_that_dies_mid_run_is_a_failed_measurement(spinners: Path, tmp_path: Path) -> None:
    """Its first two starts abort 0.5 s after their threads are placed, inside a 2 s window (however long
    the start took: a loaded machine): the first draw fails twice (stored as a failure with both reasons,
    never a value); the next start lives, and sampling goes on."""
    count = tmp_path / "starts"
    f = workload_file(spinners, "spinners-dies", extra=f', "--die-pinned", "0.5", "--die-count", "{count}", "2"',
                      duration=2.0)
    db = tmp_path / "d.db"
    r = run_assign("sample", "--workload-file", str(f), "--backend", "dpdk", "--n", "2", "--allow-colocate",
                   "--repeat-every", "0", "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "2 measured values stored (2 new, 1 failed)" in r.stdout, r.stdout
    with sqlite3.connect(db) as con:
        rows = con.execute("select idx, status, value, reason from measurements order by idx").fetchall()
    assert [(i, s) for i, s, _, _ in rows] == [(0, "failed"), (1, "ok"), (2, "ok")]
    reason = rows[0][3]
    # each attempt failed because the program died: seen as its end in the window, or, where it died
    # between its placement and the window's start (a loaded machine), as its threads gone
    first, _, second = reason.partition("; attempt 2: ")
    died = ("the program ended during the window", "its thread is gone")
    assert rows[0][2] is None and first.startswith("attempt 1: ") and any(d in first for d in died), reason
    assert any(d in second for d in died), reason
    assert int(count.read_text()) == 3  # the preflight's process (kept), the retry's, the one that lived


def test_a_value_from_a_command(spinners: Path) -> None:
    """value.from = "command": the program's CPU time (utime + stime, in clock ticks, from /proc/{pid}/stat)
    read at both ends of the window: two workers on two CPUs burn about twice the ticks of two on one."""
    f = spinners / "spinners-cmd.toml"
    f.write_text(WORKLOAD.format(name="spinners-cmd", extra="", repin="true", pattern1="spin-1", duration=0.4)
                 .replace("""from = "output"
pattern = '^ops (\\d+)'
unit = "units/s"
about = "units of work both workers did per second of the window (the program's own counter)"
""", """from = "command"
command = ["awk", "{{print $14 + $15}}", "/proc/{pid}/stat"]
unit = "ticks/s"
about = "CPU clock ticks the program used per second of the window"
"""))
    spec = load_workload_file(f)
    assert spec.program.value.source == "command" and spec.program.value.command[-1] == "/proc/{pid}/stat"
    ctx = two_contexts()
    with DpdkBackend(get_machine("local"), Workload(spec.name), DpdkOptions()) as be:
        results = {p: be.measure_one(p) for p in [(ctx[0], ctx[0]), (ctx[0], ctx[-1])]}
    assert all(r.status == "ok" and r.value > 0 for r in results.values()), [r.reason for r in results.values()]
    hz = os.sysconf("SC_CLK_TCK")
    # at most the CPUs the placement gives it: one tick of rounding at each end of a 0.4 s window, and a
    # quarter for when the command read /proc against when it returned (the window is timed by the returns:
    # on a loaded machine the first read may come well before its return, the last just before)
    for p, r in results.items():
        assert r.value <= 1.25 * len(set(p)) * hz + 2 / 0.4, (p, r.value)


def test_a_program_off_path_is_found_through_the_files_path(spinners: Path, tmp_path: Path) -> None:
    """program.path: directories searched before PATH for the steps' programs (Debian's ovs-vswitchd-dpdk
    lives off PATH): the command names the program alone, found there and nowhere else; a relative
    directory is refused, naming the file and the key."""
    f = workload_file(spinners, "spinners-path")
    f.write_text(f.read_text().replace('command = ["{here}/spinners", "2"]',
                                       'command = ["spinners", "2"]\npath = ["{here}"]'))
    spec = load_workload_file(f)
    assert spec.program.path == (str(spinners),)
    ctx = two_contexts()
    with DpdkBackend(get_machine("local"), Workload(spec.name), DpdkOptions()) as be:
        r = be.measure_one((ctx[0], ctx[-1]))
    assert r.status == "ok" and r.value > 0, r.reason
    # without the key the program is not found: the check can fail
    f.write_text(f.read_text().replace('path = ["{here}"]\n', ""))
    bad = run_assign("sample", "--workload-file", str(f), "--backend", "dpdk", "--n", "1", "--db",
                     str(tmp_path / "p.db"), "--quiet")
    assert bad.returncode != 0 and "spinners" in bad.stderr, bad.stderr
    f.write_text(f.read_text().replace('command = ["spinners", "2"]', 'command = ["spinners", "2"]\npath = ["bin"]'))
    bad = run_assign("sample", "--workload-file", str(f), "--backend", "dpdk", "--n", "1", "--db",
                     str(tmp_path / "p.db"), "--quiet")
    assert bad.returncode == 2 and str(f) in bad.stderr and "program.path" in bad.stderr and "'bin'" in bad.stderr, \
        bad.stderr
