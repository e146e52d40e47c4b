"""Bad input to assign is refused with a message naming the file and what is
wrong, exit status 2, and nothing written (issue 13)."""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import run_assign

T2_SAMPLE = ["sample", "--workload", "ipfwd-mem", "--machine", "ultrasparc-t2", "--backend", "model", "--quiet"]


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def good_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("bad") / "good.db"
    r = run_assign(*T2_SAMPLE, "--n", "5000", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert not Path(f"{db}-wal").exists()  # checkpointed: the file holds everything
    return db


def commands(db: Path, tmp: Path) -> list[list[str]]:
    """Every command that reads a database, with this one."""
    return [["estimate", "--db", str(db)], ["baselines", "--db", str(db)], ["best", "--db", str(db), "--out",
            str(tmp / "best.json")], ["report", "--db", str(db), "--out", str(tmp / "rep")],
            [*T2_SAMPLE, "--n", "6000", "--db", str(db)]]


def refused_by_all(db: Path, tmp: Path, why: str) -> None:
    before = file_hash(db)
    for argv in commands(db, tmp):
        r = run_assign(*argv)
        assert r.returncode == 2, (argv, r.returncode, r.stderr)
        assert str(db) in r.stderr and why in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr)
        assert file_hash(db) == before, f"{argv[0]} wrote to {db}"
    assert not (tmp / "best.json").exists() and not (tmp / "rep").exists()


def test_a_truncated_database_is_refused(good_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "cut.db"
    data = good_db.read_bytes()
    db.write_bytes(data[:len(data) // 2 + 100])  # not even a whole page
    refused_by_all(db, tmp_path, "truncated")
    db.write_bytes(data[:len(data) // 2 // 4096 * 4096])  # whole pages, fewer than the header says
    refused_by_all(db, tmp_path, "truncated")


def test_a_corrupted_database_is_refused(good_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "corrupt.db"
    data = bytearray(good_db.read_bytes())
    mid = len(data) // 2 // 4096 * 4096
    data[mid:mid + 4096] = bytes(range(256)) * 16  # one page of the measurements, garbage
    db.write_bytes(bytes(data))
    refused_by_all(db, tmp_path, "damaged")


def test_a_file_that_is_no_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    db.write_text("these are my notes, not a database\n" * 200)
    refused_by_all(db, tmp_path, "not an SQLite database")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    refused_by_all(other, tmp_path, "not an assign results database")


def test_a_database_from_a_newer_schema_is_refused(good_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    db.write_bytes(good_db.read_bytes())
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    refused_by_all(db, tmp_path, "newer assign (schema version 99")


@pytest.mark.parametrize("content, where", [
    ("1\nnan\n", "line 2: 'nan' is not a finite number"),
    ("1\ninf\n", "line 2: 'inf' is not a finite number"),
    ("1\n-Infinity\n", "line 2: '-Infinity' is not a finite number"),
    ("1\n-5\n", "line 2: -5 is negative"),
    ("1\n\n2\n", "line 2: blank line"),
    ("1\n   \n2\n", "line 2: blank line"),
    ("1\n2\nabc\n", "line 3: 'abc' is not a number"),
    ("1\n2 3\n", "line 2: '2 3' holds more than one field"),
    ("\xff\xfe", "is not a text file"),
])
def test_bad_value_files_are_refused(tmp_path: Path, content: str, where: str) -> None:
    f = tmp_path / "values.txt"
    f.write_bytes(content.encode("latin-1"))
    r = run_assign("estimate", "--csv", str(f))
    assert r.returncode == 2 and str(f) in r.stderr and where in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_trailing_blank_lines_end_a_value_file(tmp_path: Path) -> None:
    from assign.valuefile import read_values

    f = tmp_path / "v.txt"
    f.write_text("# values\n1\n2.5\n\n  \n")
    assert read_values(str(f)) == [1.0, 2.5]


def test_a_placement_for_another_machine_is_refused(tmp_path: Path) -> None:
    """A placement written for the T2 (contexts up to 63) on this machine."""
    from assign.placement import placement
    from assign.topology import get_machine
    from assign.workloads import Workload

    here = {int(o) for o in get_machine().os_index}
    t2 = [c for c in range(64) if c not in here][:3]
    p = tmp_path / "t2.json"
    p.write_text(json.dumps(placement(Workload("ipfwd-l1", 1), t2)))
    r = run_assign("noise", "--placement", str(p), "--reps", "2", "--duration", "0.1")
    assert r.returncode == 2 and str(p) in r.stderr and "not hardware contexts of this machine" in r.stderr, r.stderr
    assert sorted(tmp_path.iterdir()) == [p]


def test_a_database_killed_in_a_checkpoint_is_not_refused(good_db: Path, tmp_path: Path) -> None:
    """A process killed while copying its write-ahead log into the file leaves
    the file shorter than its (already rewritten) header says; the log holds
    the rest, so that is no truncation: SQLite completes it and sampling goes on."""
    src = tmp_path / "live.db"
    src.write_bytes(good_db.read_bytes())
    con = sqlite3.connect(src)
    con.execute("PRAGMA wal_autocheckpoint=0")  # new rows stay in the log
    run_id = con.execute("SELECT id FROM runs").fetchone()[0]
    con.executemany("INSERT INTO measurements (run_id, idx, assignment, value, status, reason, extra, measured_at) "
                    "VALUES (?, ?, '[]', 1.0, 'ok', NULL, '{}', 'now')",
                    [(run_id, 10 ** 6 + i, ) for i in range(20000)])
    con.commit()
    db = tmp_path / "killed.db"
    db.write_bytes(src.read_bytes())
    Path(f"{db}-wal").write_bytes(Path(f"{src}-wal").read_bytes())  # as a kill leaves them
    con.close()
    head = bytearray(db.read_bytes()[:100])
    head[28:32] = (int.from_bytes(head[28:32], "big") + 500).to_bytes(4, "big")  # page 1 copied, the rest not
    with open(db, "r+b") as f:
        f.write(bytes(head))
    r = run_assign("estimate", "--db", str(db))
    assert r.returncode == 0 and "25000 modelled values" in r.stdout, r.stderr


@pytest.mark.parametrize("text, why", [("x", "expected packet counts"), ("100,", "expected packet counts"),
                                       ("", "expected packet counts"), ("0,5", "at least 1"),
                                       ("-3", "at least 1")])
def test_benchmark_packet_counts_are_refused_naming_the_value(text: str, why: str) -> None:
    import argparse

    from assign.commands._args import packet_counts

    assert packet_counts("100000,1000000") == [100_000, 1_000_000] and packet_counts("7") == [7]
    with pytest.raises(argparse.ArgumentTypeError, match=why) as e:
        packet_counts(text)
    assert repr(text) in str(e.value)
