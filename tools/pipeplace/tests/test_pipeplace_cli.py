"""`pipeplace`, the management command (tools/pipeplace/README.md): what it
lists, a measured run on the test tier with --json, usage errors (exit 2)
against runtime failures (exit 1), status, and clean removing what a killed
run left and nothing else."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assign.workload_file import TIERS
from assign.workloads import WORKLOADS

PIPEPLACE = Path(sys.executable).parent / "pipeplace"
PREFIX = "pp41m"  # this branch's namespaces


def pipeplace(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    if not PIPEPLACE.exists():
        raise AssertionError(f"{PIPEPLACE} not found: tools/setup.sh installs it into the venv")
    return subprocess.run([str(PIPEPLACE), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def in_process(capsys, *args: str) -> tuple[int, str, str]:
    """pipeplace's main() in this process (no interpreter start-up): status, stdout, stderr."""
    from pipeplace.cli import main

    try:
        status = main(list(args))
    except SystemExit as e:  # argparse's own usage errors
        status = e.code
    out = capsys.readouterr()
    return status, out.out, out.err


def test_list_names_every_app_workload_and_tier(build_dir: Path, capsys) -> None:
    status, out, err = in_process(capsys, "list", "--json", "--build", str(build_dir))
    assert status == 0, err
    doc = json.loads(out)
    assert doc["tiers"] == list(TIERS)
    # the paper's five on captures, then netdedup, netferret and netstreamcluster (clients in a namespace)
    assert [w["workload"] for w in doc["workloads"]][:8] == list(WORKLOADS)
    dd, nf, sc = doc["workloads"][5:8]
    assert dd["traffic"] == "client" and dd["unit"] == "MB/s" and list(dd["tiers"]) == list(TIERS)
    assert nf["traffic"] == "client" and nf["unit"] == "queries/s" and list(nf["tiers"]) == list(TIERS)
    assert sc["traffic"] == "client" and sc["unit"] == "points/s" and list(sc["tiers"]) == list(TIERS)
    for w in doc["workloads"][:5]:
        assert list(w["tiers"]) == list(TIERS) and all(t["packets"] for t in w["tiers"].values())
        assert all(t["capture_packets"] for t in w["tiers"].values()), w  # a number, also the generator's default
    assert {a["app"]: a["built"] for a in doc["apps"]}["stateful"] is True
    text = in_process(capsys, "list", "--build", str(build_dir))[1]
    assert "ipfwd-mem    simlarge   capture 1,048,576, window 3,000,000" in text


def test_run_on_the_test_tier_prints_one_object_with_app_tier_and_result(build_dir: Path, tmp_path: Path, capsys,
                                                                         monkeypatch) -> None:
    r = pipeplace("run", "-a", "stateful", "-i", "test", "--json", "--build", str(build_dir),
                  env={"XDG_CACHE_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["app"] == "stateful" and doc["tier"] == "test"
    res = doc["result"]
    assert res["kind"] == "measured" and res["value"] > 0 and res["unit"] == "packets/s"
    assert res["forwarded_packets"] > 0 and res["window_s"] > 0
    assert doc["traffic"]["capture_packets"] == 2048  # the tier's capture (stateful's test tier)
    # the human form says what the figure is
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    status, out, err = in_process(capsys, "run", "-a", "ipfwd-l1", "-i", "test", "-n", "1", "--build", str(build_dir))
    assert status == 0 and "Mpps (measured: total.pps" in out, out + err


@pytest.mark.parametrize("args, says", [
    (("run", "-a", "ipfwd", "-i", "test"), "app ipfwd has several workloads (ipfwd-l1, ipfwd-mem"),
    (("run", "-a", "nope", "-i", "test"), "-a nope: no such app or workload"),
    (("run", "-a", "stateful", "-i", "huge"), "-i huge: workload stateful has no such tier"),
    (("run", "-a", "stateful", "-i", "test", "-n", "0"), "'0' must be at least 1"),
    (("run", "-a", "/nonexistent/w.toml", "-i", "test"), "/nonexistent/w.toml: cannot read it"),
    (("run", "-a", "stateful", "-i", "test", "--placement", "/nonexistent.json"), "/nonexistent.json"),
    (("build", "-p", "toaster"), "-p toaster: no such part"),
    (("bench", "nope"), "bench nope: no such benchmark"),
    (("bench", "-i", "test", "tgen"), "bench tgen takes no tier"),
    (("frobnicate",), "invalid choice"),
])
def test_usage_errors_exit_2_naming_the_value(args: tuple, says: str, capsys) -> None:
    status, _, err = in_process(capsys, *args)
    assert status == 2 and says in err, err


def test_a_run_that_measures_nothing_exits_1(tmp_path: Path) -> None:
    r = pipeplace("run", "-a", "stateful", "-i", "test", "--json", "--build", str(tmp_path / "nobuild"))
    assert r.returncode == 1 and "no Meson build" in r.stderr, r.stderr
    assert json.loads(r.stdout)["result"] is None


def test_build_of_one_part_builds_its_targets(build_dir: Path, capfd) -> None:
    from pipeplace.cli import main

    status = main(["build", "-p", "stateful", "--build", str(build_dir)])
    out = capfd.readouterr().out
    assert status == 0 and "ninja -C" in out and "apps/stateful/stateful" in out, out


def test_status_says_what_is_built_and_what_the_machine_has(build_dir: Path, capsys) -> None:
    status, out, err = in_process(capsys, "status", "--json", "--build", str(build_dir))
    assert status == 0, err
    st = json.loads(out)
    assert st["build"]["configured"] and st["build"]["binaries"]["stateful"] is True
    assert st["hugepages"]["page_kib"] > 0 and "leftovers" in st


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="network namespaces need root")
def test_clean_removes_what_a_killed_run_left_and_only_that(tmp_path: Path) -> None:
    from assign.backends.dpdk.client import NET_STATE

    gone = subprocess.Popen(["true"])
    gone.wait()
    dead, alive = f"{PREFIX}dead01", f"{PREFIX}live01"
    try:
        NET_STATE.mkdir(parents=True, exist_ok=True)
        for name, pid in ((dead, gone.pid), (alive, os.getpid())):
            subprocess.run(["ip", "netns", "add", name], check=True)
            (NET_STATE / f"{name}.pid").write_text(f"{pid}\n")
        r = pipeplace("clean")
        assert r.returncode == 0 and f"namespace {dead}" in r.stdout and alive not in r.stdout, r.stdout + r.stderr
        assert not Path(f"/run/netns/{dead}").exists() and Path(f"/run/netns/{alive}").exists()
    finally:
        for name in (dead, alive):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            (NET_STATE / f"{name}.pid").unlink(missing_ok=True)
