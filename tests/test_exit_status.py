"""One exit status for every program (README.md, "Exit status"): 0 done, 2 a
usage error (the command line, or a file or value it names, is wrong: found
before anything runs), 1 a failure while running.  Each case here is one a
user meets: an option the program does not take, a value it cannot use, a
file it cannot read or write, and, for the DPDK programs, a run that
starts and then fails."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import app_binary, eal_args
from harness.placement import placement, write_placement
from harness.process import sanitizer_env

APPS = ("ipfwd", "ahocorasick", "stateful", "analyzer")
VARIANT = {"ipfwd": "l1"}


def run(cmd: list[str], timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """cmd in a session of its own, killed whole on timeout (a script that
    ignored its arguments would go on to run the job it was not asked for)."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          text=True, start_new_session=True, env=env or sanitizer_env()) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


@pytest.mark.parametrize("app", APPS)
def test_an_app_exits_2_on_a_usage_error_and_0_on_help(build_dir: Path, tmp_path: Path, file_prefix: str,
                                                      app: str) -> None:
    exe = str(app_binary(build_dir, app))
    p = run([exe, "--", "--no-such-option"])
    assert p.returncode == 2 and "--no-such-option" in p.stderr, p.stderr[-2000:]
    p = run([exe, "--", "--duration", "soon"])
    assert p.returncode == 2 and "--duration 'soon'" in p.stderr, p.stderr[-2000:]
    p = run([exe, "--", "--placement", str(tmp_path / "none.json"), "--check-placement"])
    assert p.returncode == 2 and str(tmp_path / "none.json") in p.stderr, p.stderr[-2000:]
    # an EAL option EAL does not take: refused by EAL, still the command line's fault
    place = write_placement(tmp_path / "p.json", placement(app, 1, VARIANT.get(app)))
    p = run([exe, *eal_args(file_prefix, no_huge_mb=256), "--no-such-eal-option", "--",
             "--placement", str(place), "--duration", "0.1"])
    assert p.returncode == 2 and "--no-such-eal-option" in p.stderr, p.stderr[-2000:]
    p = run([exe, "--help"])
    assert p.returncode == 0 and "--placement" in p.stdout, p.stderr[-2000:]


def test_an_app_exits_1_when_the_run_fails(build_dir: Path, tmp_path: Path, file_prefix: str) -> None:
    # EAL starts, the capture's port does not (no such file): the run cannot go on
    place = write_placement(tmp_path / "p.json", placement("ipfwd", 1, "l1"))
    p = run([str(app_binary(build_dir, "ipfwd")),
             *eal_args(file_prefix, [f"net_pcap0,rx_pcap={tmp_path / 'none.pcap'}", "net_null0"], no_huge_mb=256),
             "--", "--placement", str(place), "--duration", "0.1"])
    assert p.returncode == 1 and "does not exist (1 DPDK port(s)" in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("app, args, message", [
    ("stateful", ["--dpi-tcp-packets", "10"], "need --dpi"),
    ("stateful", ["--dump-flows", "/no/such/dir/flows.json"], "--dump-flows '/no/such/dir/flows.json'"),
    ("analyzer", ["--log", "/no/such/dir/log.csv"], "--log /no/such/dir/log.csv"),
    ("ahocorasick", ["--mode", "keywords", "--alert-log", "a.json"], "for --mode rules only"),
])
def test_options_that_do_not_go_together_or_an_unwritable_output_are_usage_errors(
        build_dir: Path, tmp_path: Path, file_prefix: str, app: str, args: list[str], message: str) -> None:
    place = write_placement(tmp_path / "p.json", placement(app, 1, VARIANT.get(app)))
    p = run([str(app_binary(build_dir, app)), *eal_args(file_prefix, ["net_null0", "net_null1"], no_huge_mb=256),
             "--", "--placement", str(place), "--duration", "0.1", *args])
    assert p.returncode == 2 and message in p.stderr, p.stderr[-2000:]
    assert "EAL" not in p.stderr, "refused before EAL starts"


def test_a_mempool_driver_this_dpdk_lacks_is_a_usage_error(build_dir: Path, tmp_path: Path,
                                                           file_prefix: str) -> None:
    place = write_placement(tmp_path / "p.json", placement("ipfwd", 1, "l1"))
    p = run([str(app_binary(build_dir, "ipfwd")), *eal_args(file_prefix, ["net_null0", "net_null1"], no_huge_mb=256),
             "--", "--placement", str(place), "--duration", "0.1", "--pool-ops", "no_such_driver"])
    assert p.returncode == 2 and "--pool-ops no_such_driver" in p.stderr, p.stderr[-2000:]


def test_ahocorasick_refuses_a_rules_file_it_cannot_read_before_it_starts(build_dir: Path, tmp_path: Path) -> None:
    missing = tmp_path / "none.rules"
    p = run([str(app_binary(build_dir, "ahocorasick")), "--", "--rules", str(missing)])
    assert p.returncode == 2 and f"cannot read rules file '{missing}'" in p.stderr, p.stderr[-2000:]
    p = run([str(app_binary(build_dir, "ahocorasick", "ac-rules")), "--rules", str(missing)])
    assert p.returncode == 2 and f"cannot read rules file '{missing}'" in p.stderr, p.stderr[-2000:]


def test_pp_tgen_exits_2_on_a_usage_error(build_dir: Path, file_prefix: str) -> None:
    exe = str(build_dir / "traffic-gen" / "pp-tgen")
    p = run([exe, *eal_args(file_prefix, ["net_null0"], lcores="0", no_huge_mb=512), "--", "--no-such-option"])
    assert p.returncode == 2 and "--no-such-option" in p.stderr, p.stderr[-2000:]
    p = run([exe, *eal_args(file_prefix, ["net_null0"], no_huge_mb=512), "--no-such-eal-option"])
    assert p.returncode == 2 and "--no-such-eal-option" in p.stderr, p.stderr[-2000:]
    missing = "/no/such/replay.pcap"
    p = run([exe, *eal_args(file_prefix, ["net_null0"], lcores="0,1", no_huge_mb=512), "--", "--pcap", missing])
    assert p.returncode == 2 and f"pcap {missing}" in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("tool, args", [
    ("tools/pp-timer-floor", ["--no-such-option"]),
    ("tools/pp-stressor", ["--no-such-option"]),
    ("tools/pp-steadiness", ["--no-such-option"]),
    ("apps/analyzer/an-pcap-decode", ["--no-such-option"]),
    ("apps/analyzer/an-pcap-decode", ["/no/such.pcap"]),
    ("apps/analyzer/an-decode-bench", ["--no-such-option"]),
    ("apps/ahocorasick/ac-rules", ["--no-such-option"]),
    ("apps/stateful/stateful-flood", ["--no-such-option"]),
])
def test_the_c_tools_exit_2_on_a_usage_error(build_dir: Path, tool: str, args: list[str]) -> None:
    exe = build_dir / tool
    assert exe.is_file(), f"{exe} not built"
    p = run([str(exe), *args])
    assert p.returncode == 2 and args[0] in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("script, args", [
    ("apps/ipfwd/ipfwd_traffic.py", ["--packets", "16", "l1"]),
    ("apps/stateful/stateful_traffic.py", ["--packets", "16"]),
    ("apps/analyzer/analyzer_traffic.py", ["--packets", "16"]),
    ("tools/routegen.py", ["--routes", "16"]),
])
def test_the_python_tools_exit_2_on_a_usage_error(repo_dir: Path, tmp_path: Path, script: str,
                                                  args: list[str]) -> None:
    p = run([sys.executable, str(repo_dir / script), *args, str(tmp_path / "out"), "--no-such-option"],
            env=dict(os.environ))
    assert p.returncode == 2 and "--no-such-option" in p.stderr, p.stderr[-2000:]
    out = tmp_path / "no-such-dir" / "out"
    p = run([sys.executable, str(repo_dir / script), *args, str(out)], env=dict(os.environ))
    assert p.returncode == 2 and str(out) in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("script", ["tools/main.sh", "tools/test.sh", "tools/setup.sh", "tools/testbed-bundle.sh"])
def test_the_scripts_exit_2_on_an_option_they_do_not_take(repo_dir: Path, script: str) -> None:
    p = run([str(repo_dir / script), "--no-such-option"], env=dict(os.environ))
    assert p.returncode == 2 and "--no-such-option" in p.stderr, p.stderr[-2000:]


def test_pipeplace_exits_2_on_a_usage_error(repo_dir: Path) -> None:
    pipeplace = repo_dir / ".venv" / "bin" / "pipeplace"
    assert pipeplace.is_file(), "tools/setup.sh installs pipeplace into .venv/bin"
    p = run([str(pipeplace), "run", "-a", "ipfwd", "-i", "test", "--no-such-option"], env=dict(os.environ))
    assert p.returncode == 2 and "--no-such-option" in p.stderr, p.stderr[-2000:]


def test_assign_exits_2_on_a_usage_error(repo_dir: Path, tmp_path: Path) -> None:
    assign = str(repo_dir / ".venv" / "bin" / "assign")
    p = run([assign, "count", "--tasks", "3", "--no-such-option"], env=dict(os.environ))
    assert p.returncode == 2 and "--no-such-option" in p.stderr, p.stderr[-2000:]
    p = run([assign, "estimate", "--csv", str(tmp_path / "none.csv")], env=dict(os.environ))
    assert p.returncode == 2 and str(tmp_path / "none.csv") in p.stderr, p.stderr[-2000:]
