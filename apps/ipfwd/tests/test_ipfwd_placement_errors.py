"""Bad placements and bad command lines through the ipfwd binary: each kind
is refused with its own message naming the file, the task and the value,
and a non-zero exit."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from ipfwd_harness import instance, ipfwd_binary, placement, run_ipfwd, sanitizer_env  # noqa: E402
import harness  # noqa: E402
from harness import sanitizer_reports  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402

T2 = "pack:1 core:8 group:2 pu:4"
FIXTURES = Path(__file__).resolve().parents[3] / "runtime" / "tests" / "placements"

BAD_FILES = {
    "bad_unknown_context.json": ["instance 0 task P", "context 64 does not exist"],
    "bad_context_twice.json": ["instance 1 task R", "context 2 is already used by instance 0 task T"],
    "bad_missing_task.json": ["instance 0 task T is missing"],
    "bad_unknown_role.json": ["instance 0", 'unknown task role "X"'],
    "bad_instance_count.json": ['"instances" is []', "1..1024 instances"],
    "bad_port.json": ["instance 0 rx", '"port" is 99'],
    "bad_queue.json": ["instance 0 tx", '"queue" is -1'],
    "bad_duplicate_rx_queue.json": ["instance 1 rx", "port 0 queue 0 is already the rx queue of instance 0"],
    "bad_app_mismatch.json": ['"app" is "stateful" but this binary is "ipfwd"'],
    "bad_malformed.json": ["line 3 column", "malformed JSON"],
    "bad_context_type.json": ["instance 0 task P", 'context "three" is not a context number'],
    "bad_unknown_key.json": ['unknown key "colocate"'],
}


def run(build_dir: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([str(ipfwd_binary(build_dir))] + args, capture_output=True, text=True,
                       timeout=60, env=sanitizer_env())
    # Refusing must be clean too: no leak or UB report on the error paths.
    assert not sanitizer_reports(p.stderr), p.stderr
    return p


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_placement_file_is_refused(build_dir: Path, name: str) -> None:
    path = FIXTURES / name
    p = run(build_dir, ["--", "--placement", str(path), "--topology", T2, "--check-placement"])
    assert p.returncode != 0
    assert str(path) in p.stderr
    for part in BAD_FILES[name]:
        assert part in p.stderr, p.stderr
    assert "EAL" not in p.stderr  # refused before DPDK starts


def test_messages_differ_by_kind(build_dir: Path) -> None:
    msgs = set()
    for name in BAD_FILES:
        p = run(build_dir, ["--", "--placement", str(FIXTURES / name), "--topology", T2, "--check-placement"])
        msgs.add(p.stderr.strip())
    assert len(msgs) == len(BAD_FILES)


def test_good_t2_placement_is_printed(build_dir: Path) -> None:
    p = run(build_dir, ["--", "--placement", str(FIXTURES / "good_t2_eight_instances.json"),
                        "--topology", T2, "--check-placement"])
    assert p.returncode == 0, p.stderr
    assert "8 instance(s)" in p.stdout and "instance 7: rx port 0 queue 7" in p.stdout
    # The path of each task up the topology shows the T2's pipelines (Groups).
    assert "PU#23 < Group0#5 < Core#2" in p.stdout, p.stdout


def test_context_missing_on_this_machine(build_dir: Path, tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text('{"app":"ipfwd","instances":[{"rx":{"port":0,"queue":0},"tx":{"port":0,"queue":0},'
                 '"tasks":{"R":0,"P":4000,"T":1}}]}')
    p = run(build_dir, ["--", "--placement", str(f), "--check-placement"])
    assert p.returncode != 0
    assert f"{f}: instance 0 task P: context 4000 does not exist in the topology of this machine" in p.stderr


def test_synthetic_topology_cannot_run(build_dir: Path) -> None:
    p = run(build_dir, ["--", "--placement", str(FIXTURES / "good_one_instance.json"), "--topology", T2])
    assert p.returncode != 0 and "cannot run tasks" in p.stderr


@pytest.mark.parametrize("args, message", [
    (["--variant", "l3"], 'variant "l3" is not one of ipfwd\'s variants'),
    (["--packets", "abc"], "--packets 'abc': expected an integer"),
    (["--duration", "-1"], "--duration '-1': expected a number of seconds"),
    (["--table-entries", "0"], "--table-entries '0': expected an integer in 1.."),
    (["--ring-size", "100"], "--ring-size 100: expected a power of two"),
    (["--frobnicate"], "unknown option --frobnicate"),
    (["--packets", "5", "--duration", "1"], "--packets and --duration: give one of them"),
    (["--serve", "--duration", "1"], "--serve reads placements on stdin and writes statistics on stdout"),
])
def test_bad_command_line(build_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    f = tmp_path / "p.json"
    f.write_text('{"app":"ipfwd","allow_colocate":true,"instances":[{"rx":{"port":0,"queue":0},'
                 '"tx":{"port":0,"queue":0},"tasks":{"R":0,"P":0,"T":0}}]}')
    p = run(build_dir, ["--", "--placement", str(f), "--check-placement"] + args)
    assert p.returncode != 0 and message in p.stderr, p.stderr


def test_no_placement(build_dir: Path) -> None:
    p = run(build_dir, ["--no-pci", "--"])
    assert p.returncode != 0 and "no placement: give --placement FILE" in p.stderr


def test_lcore_options_are_refused(build_dir: Path) -> None:
    p = run(build_dir, ["-l", "0-1", "--", "--placement", str(FIXTURES / "good_colocate.json")])
    assert p.returncode != 0 and "do not give -l" in p.stderr


def test_missing_port_is_refused_at_launch(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    res = run_ipfwd(build_dir, file_prefix, tmp_path, ["net_null0"],
                    placement([instance(0, 0, 3, 0)]), ["--packets", "10"])
    assert res.rc != 0
    assert "instance 0 tx: port 3 does not exist" in res.stderr and "placement.json" in res.stderr
    assert not res.sanitizer_reports(), res.stderr


def test_missing_queue_is_refused_at_launch(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = tmp_path / "one.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 4, 1, 64, 0.0, 1))
    # net_pcap has one rx queue per rx_pcap= argument: queue 1 does not exist.
    res = run_ipfwd(build_dir, file_prefix, tmp_path, [f"net_pcap0,rx_pcap={cap}", "net_null0"],
                    placement([instance(0, 0, 1, 0), instance(0, 1, 1, 1, r=1, p=0, t=1)]),
                    ["--packets", "10"])
    assert res.rc != 0
    assert "instance 1 rx: queue 1 does not exist on port 0" in res.stderr, res.stderr
    assert not res.sanitizer_reports(), res.stderr


def test_serve_needs_an_end(build_dir: Path) -> None:
    p = run(build_dir, ["--", "--serve"])
    assert p.returncode != 0 and "--serve needs --duration S or --packets N" in p.stderr


def test_stats_path_that_cannot_be_written_is_refused_before_the_run(build_dir: Path, file_prefix: str,
                                                                     tmp_path: Path) -> None:
    """Checked up front: a 60 s window is never measured into a path that cannot take it."""
    missing = tmp_path / "no-such-dir" / "stats.json"
    res = harness.run_app(ipfwd_binary(build_dir), file_prefix, tmp_path, ["net_null0", "net_null1"],
                          placement([instance(0, 0, 1, 0)]), ["--duration", "60"], timeout=30, stats=missing)
    assert res.rc != 0
    assert f"--stats {missing}: cannot open for writing: No such file or directory" in res.stderr, res.stderr
    assert "EAL" not in res.stderr and not missing.parent.exists()
    assert not res.sanitizer_reports(), res.stderr


def test_stats_check_leaves_no_file_behind(build_dir: Path, tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text('{"app":"ipfwd","allow_colocate":true,"instances":[{"rx":{"port":0,"queue":0},'
                 '"tx":{"port":0,"queue":0},"tasks":{"R":0,"P":0,"T":0}}]}')
    stats = tmp_path / "new-stats.json"
    p = run(build_dir, ["--", "--placement", str(f), "--check-placement", "--stats", str(stats)])
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["p.json"]


def test_statistics_that_cannot_be_written_after_the_run_go_to_stdout(build_dir: Path, file_prefix: str,
                                                                     tmp_path: Path) -> None:
    """/dev/full opens, and every write to it fails (ENOSPC), as a full disk would after the check."""
    full = Path("/dev/full")
    assert full.is_char_device(), "this test needs the /dev/full device"
    # --stats through args: the harness's own stats option removes its file first
    res = harness.run_app(ipfwd_binary(build_dir), file_prefix, tmp_path, ["net_null0", "net_null1"],
                          placement([instance(0, 0, 1, 0)]), ["--packets", "1000", "--stats", str(full)],
                          stats=None)
    assert full.is_char_device()
    assert res.rc == 1, res.stderr
    assert ("--stats /dev/full: cannot write: No space left on device; writing the statistics to stdout"
            in res.stderr), res.stderr
    stats = json.loads(res.stdout)
    assert stats["kind"] == "measured" and stats["total"]["rx_packets"] == 1000, res.stdout[:500]
    assert not res.sanitizer_reports(), res.stderr


def test_stats_to_a_link_is_written_through(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    link = tmp_path / "stats.json"
    link.symlink_to(target)  # dangling until the run writes through it
    res = harness.run_app(ipfwd_binary(build_dir), file_prefix, tmp_path, ["net_null0", "net_null1"],
                          placement([instance(0, 0, 1, 0)]), ["--packets", "1000", "--stats", str(link)],
                          stats=None)
    assert res.rc == 0, res.stderr
    assert link.is_symlink() and json.loads(target.read_text())["total"]["rx_packets"] == 1000
