"""The dpdk backend fed by the traffic generator (`--traffic tgen`): pp-tgen
as a second DPDK process over net_memif, pinned to a context outside the
sampling space.  On this two-context machine: generator on context 1, the
app's three tasks co-located on context 0.  A small sample through the CLI
into the database; the generator's contexts refused in --contexts; the
option stored with the run (older runs, without it, load as pcap)."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from assign.backends.base import BackendError
from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.topology import restrict_topology
from assign.store import Store
from assign.topology import get_machine
from assign.workloads import Workload

PACKETS = 1_000_000  # per instance: 0.2-1 s at what the generator and app reach here (ASan build included)
CRASH_MARKS = ("signal", "Sanitizer", "SEGV", "runtime error")


def assign_cli(args: list[str], build_dir: Path, tmp: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).parent / "assign"), *args, "--build", str(build_dir)]
    # TMPDIR: the backend's work directory (and the generator's --stats) under the test's
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "TMPDIR": str(tmp)})


def harness_processes(tmp: Path) -> list[str]:
    """pp-tgen / ipfwd processes of this test: the generator's command line
    names the work directory under `tmp`, the app's names the generator's
    memif socket (prefix asgtg)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if ("pp-tgen" in cmd and str(tmp) in cmd) or ("ipfwd" in cmd and "role=client" in cmd and "asgtg" in cmd):
            found.append(f"{pid}: {cmd[:200]}")
    return found


def sample_args(db: Path, contexts: str, n: int = 5) -> list[str]:
    return ["sample", "--n", str(n), "--workload", "ipfwd-l1", "--instances", "1", "--allow-colocate",
            "--traffic", "tgen", "--tgen-contexts", "1", "--contexts", contexts,
            "--packets", str(PACKETS), "--warmup", "0.05", "--db", str(db), "--quiet"]


def test_sample_fed_by_the_generator(build_dir: Path, tmp_path: Path) -> None:
    assert (build_dir / "traffic-gen" / "pp-tgen").is_file(), f"pp-tgen not built in {build_dir}"
    db = tmp_path / "tgen.db"
    before = set(harness_processes(tmp_path))
    socks = set(Path("/run/pipeplace").glob("asgtg*.sock"))
    p = assign_cli(sample_args(db, "0"), build_dir, tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "5 measured values stored" in p.stdout, p.stdout
    assert "does not account for every packet" not in p.stderr, p.stderr[-3000:]
    # nothing left running: the app exited first, then the generator by itself; no socket left
    assert set(harness_processes(tmp_path)) - before == set()
    assert set(Path("/run/pipeplace").glob("asgtg*.sock")) - socks == set()

    with sqlite3.connect(db) as c:
        got = list(c.execute("SELECT assignment, value, status, reason, extra FROM measurements ORDER BY idx"))
    assert sum(r[2] == "ok" for r in got) == 5
    for assignment, value, status, reason, extra in got:
        x = json.loads(extra)
        if status != "ok":  # a stalled window under other load may fail twice; a crash may not
            assert not any(m in reason for m in CRASH_MARKS), reason
            continue
        assert json.loads(assignment) == [0, 0, 0]  # --contexts 0: the generator's context 1 never drawn
        assert value > 0 and x["kind"] == "measured"
        assert x.get("attempts") == 1 or not any(m in x["retried_after"] for m in CRASH_MARKS), x
        t = x["traffic"]
        assert t["source"] == "tgen" and t["label"].startswith("tgen: pp-tgen")
        assert t["generator_contexts"] == [1]
        # one generator for the whole sample: the first assignment started it, the others found it running
        # (a failed attempt restarts both processes: only then a second one)
        if all(json.loads(r[4]).get("attempts") == 1 for r in got):
            assert t["generator_starts"] == 1, t
        assert t["link_kept_up"] is True and t["generator_placements"] >= 1
        # the app stopped at exactly --packets: every packet it received is forwarded, dropped or queued
        assert sum(i["tx_packets"] + i["dropped_packets"] + i["queued_packets"] for i in x["instances"]) \
            == PACKETS
        assert [k["context"] for k in x["tasks"]] == [0, 0, 0]

    with Store(str(db), readonly=True) as st:
        run = st.run(None)
    assert run.params["traffic_source"] == "tgen" and run.params["tgen_contexts"] == "1"
    assert run.params["contexts"] == "0"
    assert "pp-tgen over net_memif" in run.params["traffic"]["source"]
    # the stored params give the same protocol back
    opts = DpdkOptions.from_params(run.params)
    assert (opts.traffic, opts.tgen_contexts, opts.contexts, opts.packets) == ("tgen", [1], [0], PACKETS)


def test_both_processes_exit_cleanly(build_dir: Path) -> None:
    """In process, to see the exit statuses and the link's accounting: one
    generator fed every assignment over a link that stayed up; at the end
    it stopped sending, the serve app drained the link and ended by end of
    input, the generator left by itself; every packet the generator sent
    is in some placement's rx or in the app's final drain."""
    topo = restrict_topology(get_machine(), [0])
    opts = DpdkOptions(build_dir=build_dir, packets=PACKETS, warmup=0.05, contexts=[0], traffic="tgen",
                       tgen_contexts=[1], runner="serve")
    with DpdkBackend(topo, Workload("ipfwd-l1", 1), opts, allow_colocate=True) as be:
        results = [be.measure_one([0, 0, 0]) for _ in range(3)]
        prefixes = (be.runner.spec.file_prefix, be.tgen.prefix)
    assert all(r.status == "ok" and r.value > 0 for r in results), [r.extra.get("reason") for r in results]
    # (a process killed after a failed attempt has no exit status here; a retry is allowed under load)
    assert be.runner.exits and all(rc == 0 for rc in be.runner.exits), be.runner.exits
    assert be.tgen.exits and all(rc == 0 for rc in be.tgen.exits), be.tgen.exits
    assert not any(m in be.tgen.stderr_at_exit for m in CRASH_MARKS), be.tgen.stderr_at_exit[-3000:]
    last = be.tgen.sessions[-1]
    assert last["closed"] is True and last["unaccounted"] == 0, last
    assert last["generator_tx"]["packets"] == last["app_rx"] + last["app_drained_at_end"] > 0, last
    # back-pressure: nothing lost at the link while it runs; the stop may catch one burst per queue
    # waiting for room in the full link, freed unsent (never on the link, not in tx packets)
    assert last["generator_tx"]["link_full"] <= 32, last
    if all(r.extra["attempts"] == 1 for r in results):
        assert be.tgen.starts == 1 and last["placements"] == 3, (be.tgen.starts, last)
        assert last["app_rx"] == 4 * PACKETS  # the three, and the placement that primed the link
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and any(
        p.encode() in _cmdline(pid) for p in prefixes)]
    assert left == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_contexts_overlapping_the_generator_are_refused(build_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "refused.db"
    p = assign_cli(sample_args(db, "0-1"), build_dir, tmp_path, timeout=60)
    assert p.returncode != 0
    assert "--contexts 0-1 overlaps the traffic generator's context(s) 1" in p.stderr, p.stderr
    assert not db.exists()  # refused before the database is touched
    assert harness_processes(tmp_path) == []


def test_a_timed_window_is_refused_with_the_generator_and_the_process_runner(build_dir: Path, tmp_path: Path) -> None:
    args = [a for a in sample_args(tmp_path / "d.db", "0") if a not in ("--packets", str(PACKETS))]
    p = assign_cli(args + ["--duration", "0.2", "--runner", "process"], build_dir, tmp_path, timeout=60)
    assert p.returncode != 0
    assert "--traffic tgen with --duration 0.2 and the process runner: give --packets N" in p.stderr, p.stderr


def test_options_round_trip_and_old_runs_load_as_pcap() -> None:
    old = {"window": {"duration_s": 0.3}, "warmup_s": 0.05, "contexts": "0-1"}
    assert DpdkOptions.from_params(old).traffic == "pcap"
    assert "traffic_source" not in DpdkOptions.from_params(old).identity()  # identity of old runs unchanged
    new = DpdkOptions(packets=1000, traffic="tgen", tgen_contexts=[3], contexts=[0, 1])
    again = DpdkOptions.from_params(new.identity())
    assert (again.traffic, again.tgen_contexts, again.contexts, again.warmup) == ("tgen", [3], [0, 1], 0.2)
    with pytest.raises(BackendError, match="--contexts 0-3 overlaps the traffic generator's context"):
        DpdkOptions(packets=1000, traffic="tgen", tgen_contexts=[3], contexts=[0, 1, 2, 3])
    with pytest.raises(BackendError, match="--tgen-contexts 3: only with --traffic tgen"):
        DpdkOptions(packets=1000, tgen_contexts=[3])
    with pytest.raises(BackendError, match="--traffic 'nic'"):
        DpdkOptions(traffic="nic")


def test_a_timed_window_with_the_generator_and_the_serve_runner(build_dir: Path) -> None:
    """The link stays up, so a timed window is fine with the serve runner:
    the app's stop flag ends each window while the generator keeps sending,
    and the link still accounts for every packet at the end."""
    topo = restrict_topology(get_machine(), [0])
    opts = DpdkOptions(build_dir=build_dir, duration=0.1, warmup=0.05, contexts=[0], traffic="tgen",
                       tgen_contexts=[1], runner="serve")
    with DpdkBackend(topo, Workload("ipfwd-l1", 1), opts, allow_colocate=True) as be:
        results = [be.measure_one([0, 0, 0]) for _ in range(3)]
    assert all(r.status == "ok" and r.value > 0 for r in results), [r.extra.get("reason") for r in results]
    assert all(0.09 < r.extra["window_s"] < 2 for r in results), [r.extra["window_s"] for r in results]
    last = be.tgen.sessions[-1]
    assert last["closed"] is True and last["unaccounted"] == 0, last
