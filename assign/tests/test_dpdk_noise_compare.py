"""`assign noise` and `assign baselines --measured` / `assign compare` (dpdk
backend), driven through the parser cli.py builds from assign/commands/."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assign.baselines import one_core
from assign.cli import run_command
from assign.evt import estimate
from assign.placement import placement
from assign.store import Store
from assign.topology import get_machine
from assign.workloads import Workload

FAST = ["--duration", "0.3", "--warmup", "0.05"]  # 0.3 s: stalls under other load get rare


def cli(*argv: str) -> int:
    return run_command(list(argv))


@pytest.fixture
def env(build_dir: Path, monkeypatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PIPEPLACE_BUILD", str(build_dir))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_noise_reports_mean_sd_and_cv_of_its_own_measurements(env: Path, capsys) -> None:
    p = env / "p.json"
    p.write_text(json.dumps(placement(Workload("ipfwd-l1", 1), [0, 0, 0], True)))
    assert cli("noise", "--placement", str(p), "--reps", "4", "--json", *FAST) == 0
    out = json.loads(capsys.readouterr().out)
    v = np.array(out["values"])
    assert out["kind"] == "measured" and len(v) == 4 and (v > 0).all() and out["failures"] == []
    assert out["summary"]["mean"] == pytest.approx(v.mean())
    assert out["summary"]["cv"] == pytest.approx(v.std(ddof=1) / v.mean())
    assert out["protocol"]["window"] == {"duration_s": 0.3} and out["contexts"] == [0, 0, 0]
    assert cli("noise", "--placement", str(p), "--reps", "2", *FAST) == 0
    text = capsys.readouterr().out
    assert "CV" in text and "(measured)" in text and "R0@0 P0@0 T0@0" in text


@pytest.mark.parametrize("content, why", [
    (None, "cannot read it"), ("{", "not JSON"),
    ('{"app": "ipfwd", "variant": "l1", "instances": [{"tasks": {"R": 0, "P": 0, "T": 999}}]}',
     r"context\(s\) \[999\] are not hardware contexts of this machine"),
    ('{"app": "nope", "instances": [{"tasks": {"R": 0, "P": 0, "T": 0}}]}', "is no workload assign knows"),
])
def test_noise_refuses_bad_placement_files_naming_them(env: Path, content: str | None, why: str) -> None:
    p = env / "bad.json"
    if content is not None:
        p.write_text(content)
    with pytest.raises(ValueError, match=why) as e:
        cli("noise", "--placement", str(p), "--reps", "2", *FAST)
    assert str(p) in str(e.value)


def test_one_core_keeps_each_instance_on_one_core() -> None:
    t2 = get_machine("ultrasparc-t2")
    ctx = one_core(t2, 24)
    cores = t2.level_ids[2]
    for i in range(8):
        assert len({int(cores[c]) for c in ctx[3 * i:3 * i + 3]}) == 1   # one core per instance
        assert len(set(ctx[3 * i:3 * i + 3])) == 3                      # distinct strands of it
    assert len({int(cores[c]) for c in ctx}) == 8                        # every core used once


def sample_run(db: Path, values: list[float], build_dir: Path) -> None:
    """A dpdk run holding `values` (for the arithmetic of compare; its baselines are measured for real)."""
    topo = get_machine()
    with Store(str(db)) as st:
        run, _ = st.find_or_create_run(workload="ipfwd-l1", instances=1, machine=topo.name, topology=topo.to_json(),
                                       backend="dpdk", kind="measured", seed=1, allow_colocate=True,
                                       params={"window": {"duration_s": 0.3}, "warmup_s": 0.05})
        for i, v in enumerate(values):
            st.add(run.id, i, [0, 0, 0], v, "ok", None, {})


def test_compare_measures_baselines_once_stores_them_and_gives_gaps_to_the_estimate(env: Path, build_dir: Path,
                                                                                     capsys) -> None:
    db = env / "c.db"
    values = list(np.random.default_rng(3).uniform(1e6, 2e6, size=500))  # known end point 2e6
    sample_run(db, values, build_dir)
    fig = env / "fig.png"
    assert cli("compare", "--db", str(db), "--reps", "2", "--json", "--plot", str(fig)) == 0
    out = json.loads(capsys.readouterr().out)
    bars = {b["name"]: b for b in out["bars"]}
    upb = estimate(values).upb
    # no repetitions in this run: the noise is not measured, so the gaps are to the paper's UPB
    upb_bar = bars["UPB (paper's, single values)"]
    assert upb_bar["value"] == pytest.approx(upb) and upb_bar["label"] == "estimated"
    assert "optimum of means" not in bars
    assert bars["naive (random)"]["gap_pct"] == pytest.approx(100 * (upb - np.mean(values)) / upb)
    assert bars["best found"]["value"] == max(values)
    for name in ("Linux-like", "one core per instance"):
        assert bars[name]["label"] == "measured" and bars[name]["value"] > 0
        assert bars[name]["gap_pct"] == pytest.approx(100 * (upb - bars[name]["value"]) / upb)
    assert bars["one core per instance"]["contexts"] == [0, 0, 0]
    assert fig.stat().st_size > 1000
    with Store(str(db), readonly=True) as st:
        stored = st.baseline(1, "compare:Linux-like")
    assert stored.extra["reps"] == 2 and stored.value == pytest.approx(np.mean(stored.extra["values"]))
    # a second call reuses what is stored: nothing measured again, nothing changed
    assert cli("compare", "--db", str(db), "--reps", "2") == 0
    text = capsys.readouterr().out
    assert "(stored earlier)" in text and "below the paper's UPB (estimated)" in text
    with Store(str(db), readonly=True) as st:
        assert st.baseline(1, "compare:Linux-like") == stored


def test_compare_refuses_a_run_of_another_backend(env: Path) -> None:
    db = env / "m.db"
    topo = get_machine()
    with Store(str(db)) as st:
        run, _ = st.find_or_create_run(workload="ipfwd-l1", instances=1, machine="local", topology=topo.to_json(),
                                       backend="model", kind="modelled", seed=1, allow_colocate=True, params={})
        st.add(run.id, 0, [0, 0, 0], 1.0, "ok", None, {})
    with pytest.raises(ValueError, match="this run's backend is model"):
        cli("compare", "--db", str(db))
