"""--rules: the ahocorasick workload's rule set is the user's choice. The app
loads the file given, its default traffic plants that file's keywords, and
the file's content (its SHA-256) is part of what identifies a run, a
characterization and a calibration: values made with another rule set never
join them."""
from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest

from assign.backends.base import BackendError
from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.commands.calibrate import load_characterization
from assign.store import Store
from assign.topology import get_machine
from assign.workloads import Workload
from cli_helpers import digest, run_assign

# Two rules whose keywords random payload bytes never hold by chance (13 and 10 bytes)
RULES = ('alert tcp any any -> any any (msg:"pp test one"; content:"PIPEPLACE-ONE"; sid:9000001; rev:1;)\n'
         'alert udp any any -> any any (msg:"pp test two"; content:"|DE AD BE EF|zz-two"; sid:9000002; rev:1;)\n')
KEYWORDS = (b"PIPEPLACE-ONE", b"\xde\xad\xbe\xefzz-two")


def sha16(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    f = tmp_path / "my.rules"
    f.write_text(RULES)
    return f


def test_the_app_loads_the_file_and_the_traffic_plants_its_keywords(build_dir: Path, tmp_path: Path,
                                                                   rules: Path) -> None:
    opts = DpdkOptions(build_dir=build_dir, cache_dir=tmp_path / "cache", packets=20000, rules=rules)
    topo = get_machine()
    with DpdkBackend(topo, Workload("ahocorasick", 1), opts, allow_colocate=True) as be:
        assert be.describe()["rules"] == {"file": str(rules.resolve()), "sha256": sha16(RULES)}
        capture = be.traffic.captures[0].read_bytes()
        # 5% of the packets carry a planted keyword (cut short in some 64-byte frames)
        planted = sum(capture.count(k) for k in KEYWORDS)
        assert planted > 0.02 * be.traffic.capture_packets, planted
        c = int(topo.os_index[0])
        out = be.runner.run(be.placement([c, c, c]), be.opts.timeout_s())
    assert out.error is None, out.error
    app = out.stats["app_stats"]
    assert app["rules_file"] == str(rules.resolve()) and app["keywords"] == 2, app
    assert app["matches"] > 0 and app["keywords_hit"] == 2
    assert {s for k in app["top_keywords"] for s in k["sids"]} == {9000001, 9000002}


def test_a_changed_rule_file_makes_another_run(build_dir: Path, tmp_path: Path, rules: Path) -> None:
    db = tmp_path / "r.db"
    cmd = ["sample", "--workload", "ahocorasick", "--instances", "1", "--backend", "dpdk", "--build",
           str(build_dir), "--packets", "20000", "--rules", str(rules), "--db", str(db), "--quiet",
           "--allow-colocate"]
    r = run_assign(*cmd, "--n", "2", timeout=300)
    assert r.returncode == 0 and "new run 1" in r.stdout, r.stdout + r.stderr
    with Store(str(db), readonly=True) as s:
        stored = s.run(1).params["rules"]
    assert stored == {"file": str(rules.resolve()), "sha256": sha16(RULES)}

    rules.write_text(RULES + RULES.replace("9000001", "9000003").split("\n")[0] + "\n")
    before = digest(db)
    r = run_assign(*cmd, "--n", "2", "--run", "1", timeout=300)
    assert r.returncode == 2 and "rules" in r.stderr and stored["sha256"] in r.stderr, r.stderr
    assert digest(db) == before
    # resuming with the stored protocol names what changed
    with pytest.raises(BackendError, match="has changed since it was measured"):
        DpdkOptions.from_params(Store(str(db), readonly=True).run(1).params)
    r = run_assign(*cmd, "--n", "2", timeout=300)
    assert r.returncode == 0 and "new run 2" in r.stdout, r.stdout + r.stderr


def test_rules_are_refused_where_they_do_not_apply(build_dir: Path, tmp_path: Path, rules: Path) -> None:
    base = ["sample", "--instances", "1", "--backend", "dpdk", "--build", str(build_dir), "--packets", "1000",
            "--db", str(tmp_path / "x.db"), "--n", "1", "--quiet", "--allow-colocate"]
    r = run_assign(*base, "--workload", "stateful", "--rules", str(rules))
    assert r.returncode == 2 and "only the ahocorasick workload" in r.stderr and str(rules.resolve()) in r.stderr
    missing = tmp_path / "none.rules"
    r = run_assign(*base, "--workload", "ahocorasick", "--rules", str(missing))
    assert r.returncode == 2 and f"--rules {missing}" in r.stderr and "cannot read" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "x.db").exists()


def test_characterization_and_calibration_are_refused_for_another_rule_set(tmp_path: Path, rules: Path) -> None:
    topo = get_machine("local")
    tree = topo.to_json()["tree"]
    mine = DpdkOptions(rules=rules).rules_identity()
    other = {"file": "/elsewhere/old.rules", "sha256": "0123456789abcdef"}
    char = tmp_path / "char.json"
    char.write_text(json.dumps({"workload": "ahocorasick", "machine": tree, "roles": {}, "sharing": {},
                                "timer": {}, "rules": other}))
    with pytest.raises(ValueError, match="another rule set.*old.rules.*default rule set"):
        load_characterization(str(char), "ahocorasick", topo, None)
    with pytest.raises(ValueError, match="another rule set"):
        load_characterization(str(char), "ahocorasick", topo, mine)
    char.write_text(json.dumps({"workload": "ahocorasick", "machine": tree, "roles": {}, "sharing": {},
                                "timer": {}, "rules": dict(mine, file="/moved/my.rules")}))
    assert load_characterization(str(char), "ahocorasick", topo, mine)  # the content decides, not the path

    doc = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    doc["calibrated_for"] = {"workload": "ahocorasick", "machine": tree, "rules": mine}
    params = tmp_path / "params.json"
    params.write_text(json.dumps(doc))
    r = run_assign("validate", "--workload", "ahocorasick", "--model-params", str(params), "--n", "5")
    assert r.returncode == 2 and "calibrated for another rule set" in r.stderr and mine["sha256"] in r.stderr, \
        r.stderr


def test_pipeplace_rules_is_the_default_for_ahocorasick_alone(tmp_path: Path, rules: Path, monkeypatch) -> None:
    # a test bed's bundle names its copy of the rules in PIPEPLACE_RULES (tools/testbed-bundle.sh): the
    # app's built-in default is a path of the machine that built it
    import argparse

    from assign.commands._options import rules_arg

    monkeypatch.setenv("PIPEPLACE_RULES", str(rules))
    assert rules_arg(argparse.Namespace(workload="ahocorasick", rules=None)) == rules
    assert rules_arg(argparse.Namespace(workload="ahocorasick", rules="/x/given.rules")) == Path("/x/given.rules")
    assert rules_arg(argparse.Namespace(workload="stateful", rules=None)) is None  # it reads no rule set
    monkeypatch.delenv("PIPEPLACE_RULES")
    assert rules_arg(argparse.Namespace(workload="ahocorasick", rules=None)) is None  # the app's own default
    missing = tmp_path / "gone.rules"
    monkeypatch.setenv("PIPEPLACE_RULES", str(missing))  # the command inherits it
    r = run_assign("sample", "--workload", "ahocorasick", "--instances", "1", "--backend", "dpdk", "--n", "1",
                   "--db", str(tmp_path / "x.db"), "--quiet", "--allow-colocate")
    assert r.returncode == 2 and f"PIPEPLACE_RULES={missing} (from the environment)" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "x.db").exists()
