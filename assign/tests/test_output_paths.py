"""Output files: a path a command cannot write is refused when the command
line is read, before anything is measured; a write that fails after the
measurement sends the result elsewhere and says where, and never leaves a
partial file in place of a good one."""
from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from assign.commands._save import save
from cli_helpers import run_assign

T2 = ["--workload", "ipfwd-mem", "--machine", "ultrasparc-t2", "--backend", "model"]


@pytest.fixture(scope="module")
def t2_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("out") / "t2.db"
    r = run_assign("sample", *T2, "--n", "200", "--quiet", "--db", str(db))
    assert r.returncode == 0, r.stderr
    return db


def output_commands(db: Path, bad: str) -> list[tuple[list[str], str]]:
    """(command line, option) of every command that writes a file the user names."""
    return [
        (["characterize", "--workload", "ipfwd-l1", "--json", bad], "--json"),
        (["characterize", "--workload", "ipfwd-l1", "--plot", bad + ".png"], "--plot"),
        (["calibrate", "--workload", "ipfwd-l1", "--out", bad], "--out"),
        (["validate", "--workload", "ipfwd-l1", "--model-params", str(db), "--n", "5", "--json", bad], "--json"),
        (["validate", "--workload", "ipfwd-l1", "--model-params", str(db), "--n", "5", "--plot", bad + ".png"],
         "--plot"),
        (["search", *T2, "--sampler", "model", "--budget", "10", "--db", str(db), "--json", bad], "--json"),
        (["best", "--db", str(db), "--out", bad], "--out"),
        (["enumerate", "--machine", "ultrasparc-t2", "--workload", "ipfwd-mem", "--out", bad], "--out"),
        (["report", "--db", str(db), "--out", bad], "--out"),
        (["baselines", "--db", str(db), "--measured", "--plot", bad + ".png"], "--plot"),
    ]


def test_a_missing_directory_is_refused_before_anything_runs(t2_db: Path, tmp_path: Path) -> None:
    bad = str(tmp_path / "no-such-dir" / "result")
    for argv, option in output_commands(t2_db, bad):
        r = run_assign(*argv)
        assert r.returncode == 2, (argv, r.returncode, r.stderr)
        # argparse's own refusal: the command itself never started
        assert f"argument {option}" in r.stderr and "does not exist" in r.stderr, (argv, r.stderr)
        assert str(tmp_path / "no-such-dir") in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_given_for_a_file_is_refused(t2_db: Path, tmp_path: Path) -> None:
    r = run_assign("best", "--db", str(t2_db), "--out", str(tmp_path))
    assert r.returncode == 2 and "is a directory" in r.stderr, r.stderr


def test_a_figure_extension_matplotlib_cannot_write_is_refused(t2_db: Path, tmp_path: Path) -> None:
    fig = tmp_path / "fig.xyz"
    r = run_assign("characterize", "--workload", "ipfwd-l1", "--plot", str(fig))
    assert r.returncode == 2 and "argument --plot" in r.stderr and ".png" in r.stderr, r.stderr
    assert not fig.exists()


def test_a_database_in_a_missing_directory_is_named_as_such(tmp_path: Path) -> None:
    db = tmp_path / "nowhere" / "x.db"
    r = run_assign("sample", *T2, "--n", "5", "--db", str(db))
    assert r.returncode == 2, r.stderr
    assert f"cannot create results database {db}: directory {db.parent} does not exist" in r.stderr, r.stderr
    assert "damaged" not in r.stderr


def test_a_failed_write_keeps_the_old_file_and_saves_the_result_elsewhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "params.json"
    out.write_text('{"old": true}')
    result = {"measured": [1.5, 2.5]}
    calls = []

    def write(f) -> None:
        calls.append(1)
        if len(calls) == 1:  # the disk fills up half-way through the first write
            f.write('{"meas')
            raise OSError(errno.ENOSPC, "No space left on device")
        json.dump(result, f)

    assert save(str(out), write, "calibrated parameters") is False
    assert json.loads(out.read_text()) == {"old": True}  # the partial write did not replace it
    assert [p.name for p in tmp_path.iterdir()] == ["params.json"]  # nor was left beside it
    err = capsys.readouterr().err
    assert f"cannot write the calibrated parameters to {out} (No space left on device)" in err
    alt = Path(err.rsplit("written to ", 1)[1].split(" instead")[0])
    try:
        assert json.loads(alt.read_text()) == result
    finally:
        alt.unlink()


def test_a_good_write_replaces_the_file(tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    out.write_text("old")
    assert save(str(out), lambda f: f.write("new"), "x") is True
    assert out.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_a_link_or_a_device_is_written_through_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert save(str(link), lambda f: f.write("new"), "x") is True
    assert link.is_symlink() and target.read_text() == "new"
    null = Path("/dev/null")
    assert null.is_char_device()
    assert save(str(null), lambda f: f.write("gone"), "x") is True
    assert null.is_char_device()  # not replaced by a regular file
