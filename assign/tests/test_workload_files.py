"""Workloads are files (assign/WORKLOADS.md): the five packaged ones behave
as the table in the code did (same apps, options and stored identity), a
bad file is refused naming the file, the key and the value, and a user's
file for a sixth app is sampled by the dpdk backend like the others."""
from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from cli_helpers import run_assign

from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.topology import get_machine
from assign.workload_file import TIERS, WorkloadFileError, read_spec
from assign.workloads import WORKLOADS, Workload, known_workloads

HERE = Path(__file__).resolve().parent


def test_the_packaged_workloads_are_the_papers_five_with_every_tier() -> None:
    """The paper's five, on captures; and netdedup (issue 41),
    netstreamcluster and netferret (issue 54), whose traffic is a client in
    a namespace."""
    assert WORKLOADS == {"ipfwd-l1": ("ipfwd", "l1"), "ipfwd-mem": ("ipfwd", "mem"),
                         "ahocorasick": ("ahocorasick", None), "stateful": ("stateful", None),
                         "analyzer": ("analyzer", None), "netdedup": ("netdedup", None),
                         "netferret": ("netferret", None), "netstreamcluster": ("netstreamcluster", None)}
    assert [n for n, s in known_workloads().items() if s.builtin and s.program is None] == list(WORKLOADS)
    # and three programs we did not write (assign/WORKLOADS.md), packaged beside them
    assert [n for n, s in known_workloads().items() if s.builtin and s.program is not None] == [
        "l3fwd", "ovs-dpdk", "testpmd-io"]
    for client in ("netdedup", "netstreamcluster", "netferret"):
        dd = known_workloads()[client]
        assert tuple(dd.tiers) == TIERS and dd.source == "client" and dd.roles == ("R", "P", "T")
    for name, spec in known_workloads().items():
        if not spec.builtin or name in ("netdedup", "netstreamcluster", "netferret") or spec.program is not None:
            continue
        assert tuple(spec.tiers) == TIERS and spec.source == "capture" and spec.roles == ("R", "P", "T")
        windows = [spec.tiers[t].packets for t in TIERS]
        assert windows == sorted(windows) and spec.tiers["simlarge"].packets == 3_000_000  # the paper's window
        assert spec.tiers["simlarge"].capture_packets is None  # the generator's own capture: assign's default
    assert Workload("ahocorasick", 1).spec.reads_rules and not Workload("stateful", 1).spec.reads_rules


def test_stored_runs_are_identified_as_before_workload_files(build_dir: Path, tmp_path: Path) -> None:
    """What a run stores as its params is what the table in the code made: runs stored then continue."""
    doc = json.loads((HERE / "data" / "params_before_workload_files.json").read_text())
    topo = get_machine("local")
    for name, cases in doc["runs"].items():
        for case in cases:
            kw = dict(case["options"])
            opts = DpdkOptions(build_dir=build_dir, cache_dir=tmp_path / "cache", runner="process", **kw)
            with DpdkBackend(topo, Workload(name, 1), opts, allow_colocate=True) as be:
                got = json.loads(json.dumps(be.describe()))
            got.pop("tgen_contexts", None)
            got["traffic"].pop("generator_contexts", None)
            assert got == case["params"], (name, kw)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


GOOD = """\
name = "mine"
[app]
name = "stateful"
[traffic]
source = "capture"
[traffic.capture]
generator = ["{python}", "{source}/apps/stateful/stateful_traffic.py", "{output}"]
"""


@pytest.mark.parametrize("edit, key, value", [
    (lambda t: t.replace('name = "stateful"', 'name = "stateful"\noptions = "--hash keyed"'), "app.options",
     "--hash keyed"),
    (lambda t: t.replace('source = "capture"', 'source = "carrier-pigeon"'), "traffic.source", "carrier-pigeon"),
    (lambda t: t.replace("[app]", "[app]\nbinay = 'x'"), "app.binay", "x"),
    (lambda t: t.replace('"{output}"', '"{output}", "{colour}"'), "traffic.capture.generator", "{colour}"),
    (lambda t: t.replace('name = "stateful"', 'name = "stateful"\nroles = ["R", "T"]'), "app.roles", "['R', 'T']"),
    (lambda t: t.replace('name = "mine"', 'name = "stateful"'), "name", "stateful"),
    (lambda t: t + "[tiers.huge]\npackets = 5\n", "tiers.huge", "packets"),
    (lambda t: t + "[tiers.test]\npackets = 0\n", "tiers.test.packets", "0"),
    (lambda t: t.replace("[traffic.capture]", "[traffic.capture]\nfile = 'x.pcap'"), "traffic.capture", ""),
])
def test_a_bad_file_is_refused_naming_the_file_the_key_and_the_value(tmp_path: Path, edit, key: str,
                                                                      value: str) -> None:
    from assign.workloads import load_workload_file

    f = write(tmp_path / "bad.toml", edit(GOOD))
    with pytest.raises(WorkloadFileError) as e:
        load_workload_file(f)
    msg = str(e.value)
    assert str(f) in msg and repr(key) in msg and value in msg, msg


def test_the_command_line_refuses_a_bad_file_with_status_2_before_anything_runs(tmp_path: Path) -> None:
    f = write(tmp_path / "w.toml", GOOD.replace("[traffic]", "[traffic]\nsourse = 1"))
    db = tmp_path / "x.db"
    r = run_assign("sample", "--workload-file", str(f), "--n", "1", "--db", str(db), "--instances", "1",
                   "--allow-colocate")
    assert r.returncode == 2 and f"workload file {f}: key 'traffic.sourse'" in r.stderr and "(got 1)" in r.stderr
    assert "Traceback" not in r.stderr and not db.exists()
    r = run_assign("sample", "--workload-file", str(tmp_path / "none.toml"), "--n", "1", "--db", str(db))
    assert r.returncode == 2 and "none.toml: cannot read it" in r.stderr and not db.exists()
    r = run_assign("sample", "--workload", "stateful", "--workload-file", str(f), "--n", "1", "--db", str(db))
    assert r.returncode == 2 and "not allowed with" in r.stderr


def test_a_users_workload_file_for_a_sixth_app_is_sampled_and_read_back_without_it(
        build_dir: Path, tmp_path: Path) -> None:
    """An existing binary under another name, with other fixed options and a capture of its own."""
    binary = tmp_path / "bin" / "flowkeeper"
    binary.parent.mkdir()
    shutil.copy2(build_dir / "apps" / "stateful" / "stateful", binary)
    capture = tmp_path / "flows.pcap"
    gen = build_dir / "meson-info" / "meson-info.json"
    src = Path(json.loads(gen.read_text())["directories"]["source"])
    import subprocess
    subprocess.run([sys.executable, str(src / "apps" / "stateful" / "stateful_traffic.py"), str(capture),
                    "--packets", "3000", "--seed", "7"], check=True, capture_output=True)
    f = write(tmp_path / "flowkeeper.toml", f"""\
# stateful's binary under another name, with the keyed hash
name = "flowkeeper"
description = "stateful with SipHash"
[app]
name = "stateful"                 # the pp_app name the binary answers to
binary = "bin/flowkeeper"         # relative to this file
options = ["--hash", "keyed", "--hash-key", "000102030405060708090a0b0c0d0e0f"]
[traffic]
source = "capture"
[traffic.capture]
file = "flows.pcap"
[tiers.test]
packets = 2000
""")
    db = tmp_path / "s.db"
    r = run_assign("sample", "--workload-file", str(f), "--backend", "dpdk", "--n", "5", "--instances", "1",
                   "--allow-colocate", "--packets", "2000", "--build", str(build_dir), "--db", str(db), "--quiet",
                   timeout=600)
    assert r.returncode == 0 and "new run 1" in r.stdout, r.stdout + r.stderr
    with sqlite3.connect(db) as c:
        rows = list(c.execute("SELECT value, status FROM measurements WHERE status = 'ok'"))
        workload, params = c.execute("SELECT workload, params FROM runs").fetchone()
    assert len(rows) == 5 and all(v > 0 for v, _ in rows)
    stored = json.loads(params)["workload"]
    assert workload == "flowkeeper" and stored["binary"] == str(binary) and "--hash" in stored["options"]
    assert stored["capture"]["file"] == str(capture) and len(stored["capture"]["file_sha256"]) == 16
    # the run is read back from what it stored: the file is not needed any more
    f.unlink()
    r = run_assign("best", "--db", str(db), "--out", str(tmp_path / "best.json"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "best.json").read_text())["app"] == "stateful"


def test_the_format_guides_examples_are_workload_files_that_read(tmp_path: Path) -> None:
    """assign/WORKLOADS.md's examples (a capture workload, netdedup's client workload, a program we did not
    write) stay true."""
    import re

    text = (HERE.parent / "WORKLOADS.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    specs = []
    for i, b in enumerate(blocks):
        f = write(tmp_path / f"example{i}.toml", b)
        specs.append(read_spec(f))
    assert specs[0].capture.generator and specs[0].tgen and specs[0].options == ("--hash", "keyed")
    nd = specs[1]
    assert nd.source == "client" and nd.tx_port == 0 and nd.client.stop == "exit" and nd.client.check
    assert nd.default_tier == "test" and nd.tiers["test"].params == {"tier": "test"}
    assert nd.value_label.startswith("check.mb_per_s") and nd.result["restored_identical"].startswith("check.")
    tp = specs[2]
    assert tp.launch == "eal" and tp.program.task_names == ["fwd0", "fwd1"] and tp.program.repin
    assert tp.program.value.ports == (0, 1) and tp.program.baselines[0].in_order
