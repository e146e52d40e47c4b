"""The installed `assign` command, end to end on the model backend."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import ASSIGN, digest, run_assign

T2 = ("--machine", "ultrasparc-t2")


def _rows(db: Path, run_id: int = 1) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT idx, assignment, value, status FROM measurements WHERE run_id=? ORDER BY idx",
                         (run_id,)).fetchall()


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    """A stored run of 1200 modelled ipfwd-mem values on the T2."""
    db = tmp_path_factory.mktemp("run") / "t2.db"
    r = run_assign("sample", "--n", "1200", "--workload", "ipfwd-mem", *T2, "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "modelled" in r.stdout and "1200 modelled values stored" in r.stdout
    return db


def test_help_says_dpdk_is_the_default_backend_here_and_model_elsewhere():
    r = run_assign("sample", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "default: dpdk on --machine local" in text and "model elsewhere" in text


def test_sample_stores_every_draw_once(sampled):
    rows = _rows(sampled)
    assert [r[0] for r in rows] == list(range(1200))
    assert all(r[3] == "ok" and r[2] > 0 for r in rows)
    contexts = json.loads(rows[0][1])
    assert len(contexts) == 24 and len(set(contexts)) == 24 and all(0 <= c < 64 for c in contexts)


def test_larger_n_continues_the_same_run(sampled, tmp_path):
    db = tmp_path / "grow.db"
    for n in ("300", "500"):
        r = run_assign("sample", "--n", n, "--workload", "ipfwd-mem", *T2, "--db", str(db), "--quiet")
        assert r.returncode == 0, r.stderr
    assert "continuing run 1" in r.stdout
    grown = _rows(db)
    assert grown == _rows(sampled)[:500]  # same draws and values as one uninterrupted run


def test_estimate_text_and_json(sampled):
    r = run_assign("estimate", "--db", str(sampled))
    assert r.returncode == 0, r.stderr
    assert "(modelled)" in r.stdout and "(estimated)" in r.stdout
    r = run_assign("estimate", "--db", str(sampled), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    for key in ("n", "best", "threshold", "exceedances", "xi", "sigma", "upb", "upb_ci_low", "upb_ci_high",
                "gap_pct", "confidence"):
        assert key in d
    assert d["n"] == 1200 and d["value_kind"] == "modelled"
    assert d["best"] == max(r[2] for r in _rows(sampled))


def test_estimate_from_csv_matches_the_db(sampled, tmp_path):
    csv = tmp_path / "values.csv"
    csv.write_text("# modelled values\n" + "\n".join(repr(r[2]) for r in _rows(sampled)) + "\n")
    a = json.loads(run_assign("estimate", "--csv", str(csv), "--json").stdout)
    b = json.loads(run_assign("estimate", "--db", str(sampled), "--json").stdout)
    assert a["upb"] == b["upb"] and a["n"] == b["n"]


def test_report_writes_png_svg_html(sampled, tmp_path):
    out = tmp_path / "report"
    r = run_assign("report", "--db", str(sampled), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert str(out / "index.html") in r.stdout
    for stem in ("ordered_sample", "mean_excess", "gpd_qq", "profile_upb", "threshold_stability", "ecdf",
                 "capture_probability", "estimate_vs_n"):
        assert (out / f"{stem}.png").stat().st_size > 1000, stem
        assert (out / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
    page = (out / "index.html").read_text()
    assert "modelled" in page and "estimated" in page and "Linux-like" in page


def test_baselines_scored_by_the_backend(sampled):
    r = run_assign("baselines", "--db", str(sampled))
    assert r.returncode == 0, r.stderr
    lines = {l.split()[0]: l for l in r.stdout.splitlines() if l.startswith("  ")}
    assert {"naive", "Linux-like", "best"} <= set(lines)
    assert "(modelled)" in lines["Linux-like"]
    with sqlite3.connect(sampled) as c:
        (value,) = c.execute("SELECT value FROM baselines WHERE name='linux-like'").fetchone()
    assert value > 0


def test_best_writes_a_placement(sampled, tmp_path):
    out = tmp_path / "placement.json"
    r = run_assign("best", "--db", str(sampled), "--out", str(out), "--single")
    assert r.returncode == 0, r.stderr
    assert "the paper's choice, not a placement's mean" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["app"] == "ipfwd" and doc["variant"] == "mem" and doc["allow_colocate"] is False
    assert len(doc["instances"]) == 8
    best = max(_rows(sampled), key=lambda r: r[2])
    flat = [doc["instances"][i]["tasks"][role] for i in range(8) for role in "RPT"]
    assert flat == json.loads(best[1])
    assert [(i["rx"], i["tx"]) for i in doc["instances"]] == [
        ({"port": 0, "queue": q}, {"port": 1, "queue": q}) for q in range(8)]


def test_enumerate_matches_count():
    r = run_assign("enumerate", "--workload", "ipfwd-l1", "--instances", "2", *T2, "--top", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("1526 distinct assignments")
    assert "add up to 53981544960 raw placements (expected 53981544960; count 1526)" in r.stdout
    assert "optimum (modelled)" in r.stdout


def test_iterate_reaches_a_loose_target_and_resumes(tmp_path):
    db = tmp_path / "it.db"
    args = ("iterate", "--target-gap", "10", "--n-init", "400", "--n-delta", "100", "--max-n", "800",
            "--workload", "analyzer", *T2, "--db", str(db), "--quiet")
    r = run_assign(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "target reached" in r.stdout
    first = _rows(db)
    r = run_assign(*args)
    assert r.returncode == 0 and "continuing run 1" in r.stdout
    assert _rows(db) == first  # nothing re-measured, nothing lost
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM estimates").fetchone()[0] >= 1


def test_resume_after_kill_loses_nothing_and_duplicates_nothing(tmp_path):
    db = tmp_path / "kill.db"
    cmd = [str(ASSIGN), "sample", "--n", "200000", "--workload", "stateful", *T2, "--db", str(db), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline and stored < 1500:
            time.sleep(0.2)
            if db.exists():
                try:
                    with sqlite3.connect(db, timeout=5) as c:
                        stored = c.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
                except sqlite3.OperationalError:
                    pass
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = _rows(db)
    assert 1500 <= len(before) < 200000
    target = len(before) + 300
    r = run_assign("sample", "--n", str(target), "--workload", "stateful", *T2, "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    after = _rows(db)
    assert after[:len(before)] == before                      # nothing stored was lost or changed
    assert [row[0] for row in after] == list(range(target))   # no gap, no duplicate
    fresh = tmp_path / "fresh.db"
    r = run_assign("sample", "--n", str(target), "--workload", "stateful", *T2, "--db", str(fresh), "--quiet")
    assert r.returncode == 0
    assert _rows(fresh) == after                              # same as never interrupted


# --- bad input: a clear message, a non-zero exit, nothing stored changed ----

@pytest.fixture
def small_db(tmp_path) -> Path:
    db = tmp_path / "small.db"
    r = run_assign("sample", "--n", "50", "--workload", "ipfwd-l1", *T2, "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    return db


@pytest.mark.parametrize("args, message", [
    (("--workload", "nope", *T2), "unknown workload 'nope'"),
    (("--workload", "ipfwd-l1", "--machine", "sparc-t9"), "unknown machine 'sparc-t9'"),
    (("--workload", "ipfwd-l1", "--topology", "pack:x"), "hwloc rejected"),
    (("--workload", "ipfwd-l1", *T2, "--instances", "22"), "needs 66 hardware contexts"),
    (("--workload", "ipfwd-l1", *T2, "--backend", "dpdk"), "machine ultrasparc-t2 is not it"),
    (("--workload", "ipfwd-l1", *T2, "--backend", "magic"), "unknown backend 'magic'"),
    (("--workload", "ipfwd-l1", *T2, "--run", "7"), "has no run 7"),
])
def test_bad_sample_options_change_nothing(small_db, args, message):
    before = digest(small_db)
    r = run_assign("sample", "--n", "60", "--db", str(small_db), "--quiet", *args)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert digest(small_db) == before


def test_workload_too_big_for_this_host_says_what_to_change(tmp_path):
    r = run_assign("sample", "--n", "10", "--workload", "ipfwd-l1", "--instances", "200", "--machine", "local",
                   "--db", str(tmp_path / "x.db"))
    assert r.returncode != 0
    for hint in ("--instances", "--allow-colocate", "--backend model --machine ultrasparc-t2"):
        assert hint in r.stderr
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("content, message", [
    ("", "holds no values"),
    ("1\n2\nabc\n", "line 3: 'abc' is not a number"),
    ("1\nnan\n", "line 2: 'nan' is not a finite number"),
    ("1\n-5\n", "line 2: -5 is negative"),
    ("1,2\n", "line 1"),
    ("5\n" * 500, "constant"),
    ("1\n2\n3\n", "too few values"),
])
def test_bad_csv_is_refused_with_file_and_line(tmp_path, content, message):
    csv = tmp_path / "v.csv"
    csv.write_text(content)
    r = run_assign("estimate", "--csv", str(csv))
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    if "line" in message or "no values" in message:
        assert str(csv) in r.stderr


def test_estimate_of_a_tiny_run_fails_and_leaves_it(small_db):
    before = digest(small_db)
    r = run_assign("estimate", "--db", str(small_db))
    assert r.returncode != 0 and "too few values" in r.stderr
    r = run_assign("estimate", "--db", str(small_db), "--run", "3")
    assert r.returncode != 0 and "no run 3" in r.stderr
    assert digest(small_db) == before


def test_missing_database_is_named(tmp_path):
    r = run_assign("estimate", "--db", str(tmp_path / "none.db"))
    assert r.returncode != 0 and "none.db does not exist" in r.stderr
    assert not (tmp_path / "none.db").exists()


def test_report_of_a_run_too_small_to_estimate_says_why(small_db, tmp_path):
    out = tmp_path / "rep"
    r = run_assign("report", "--db", str(small_db), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "No EVT estimate: too few values" in r.stdout
    assert "not drawn: GPD quantile plot" in r.stdout
    assert (out / "ordered_sample.svg").exists() and (out / "index.html").exists()
    assert "No EVT estimate" in (out / "index.html").read_text()


def test_estimate_threshold_and_confidence_options(sampled):
    auto = json.loads(run_assign("estimate", "--db", str(sampled), "--json").stdout)
    lower = sorted(r[2] for r in _rows(sampled))[-45]
    given = json.loads(run_assign("estimate", "--db", str(sampled), "--json", "--threshold", repr(lower),
                                  "--confidence", "0.9").stdout)
    assert given["threshold"] == lower and given["confidence"] == 0.9
    assert given["exceedances"] == 44 != auto["exceedances"]
    r = run_assign("estimate", "--db", str(sampled), "--confidence", "1.5")
    assert r.returncode != 0 and "confidence" in r.stderr and "1.5" in r.stderr


def test_the_report_and_its_figures_name_the_workloads_unit(tmp_path):
    """A workload measured in MB/s (netdedup) gets MB/s on the page's baseline
    table and on every throughput axis, never packets/s."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from assign import figures
    from assign.baselines import Baseline
    from assign.report import ReportInput, build

    values = list(np.random.default_rng(3).uniform(60.0, 80.0, 600))
    bars = [Baseline("naive", 70.0, "all tasks on one core", "measured")]
    out = build(ReportInput("netdedup", "measured", values, baselines=bars, unit="MB/s"), str(tmp_path / "r"))
    page = open(out.html).read()
    assert "<th>MB/s</th>" in page and "packets/s" not in page
    fig, axes = plt.subplots(1, 4)
    figures.ordered_sample(axes[0], values, None, "measured", "MB/s")
    figures.ecdf(axes[1], values, "measured", None, "MB/s")
    figures.estimate_vs_n(axes[2], [{"n": 600, "best": 80.0}], "measured", "MB/s")
    figures.baselines(axes[3], bars, "netdedup", None, "MB/s")
    labels = [axes[0].get_ylabel(), axes[1].get_xlabel(), axes[2].get_ylabel(), axes[3].get_ylabel()]
    plt.close(fig)
    assert all("MB/s" in s and "packets" not in s for s in labels), labels
    assert axes[3].get_ylabel() == "MB/s"  # tens of MB/s are not scaled to millions
