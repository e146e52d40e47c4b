"""What identifies a run includes how its values are made: a sample with
other model parameters (--model-params) starts a run of its own instead of
adding another model's values to a stored one, and --run refuses options
that differ from the run's, naming what differs."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from cli_helpers import digest, run_assign

T2 = ["sample", "--workload", "ipfwd-l1", "--machine", "ultrasparc-t2", "--backend", "model", "--quiet"]


def test_other_model_parameters_make_another_run(tmp_path: Path) -> None:
    doc = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    for role in doc["workloads"]["ipfwd-l1"]["roles"].values():
        role["base_ns"] = float(role["base_ns"]) * 2
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    db = tmp_path / "m.db"

    r = run_assign(*T2, "--n", "100", "--db", str(db))
    assert r.returncode == 0 and "new run 1" in r.stdout, r.stderr
    r = run_assign(*T2, "--n", "100", "--db", str(db), "--model-params", str(slow))
    assert r.returncode == 0 and "new run 2" in r.stdout, r.stdout + r.stderr
    before = digest(db)
    r = run_assign(*T2, "--n", "200", "--db", str(db), "--model-params", str(slow), "--run", "1")
    assert r.returncode == 2 and "--run 1" in r.stderr and "model_params_sha256: stored absent" in r.stderr, \
        r.stderr
    assert digest(db) == before
    # the packaged parameters keep the identity runs stored before this key had: they continue
    r = run_assign(*T2, "--n", "200", "--db", str(db), "--run", "1")
    assert r.returncode == 0 and "continuing run 1" in r.stdout, r.stdout + r.stderr
    # the same parameters from another file are the same model: run 2 continues
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(doc, indent=2))
    r = run_assign(*T2, "--n", "200", "--db", str(db), "--model-params", str(moved))
    assert r.returncode == 0 and "continuing run 2" in r.stdout, r.stdout + r.stderr
