"""The store's packs (packs.py) against the rows they copy, and beside.py's forked work.

* every read a pack serves (the run's counts, smallest and largest value, its top values and their
  draws, its repetitions by purpose and by the draws the run held, their counts, the re-measured draws'
  placements) is the read of the rows, bit for bit, and `assign estimate --json` the same with and without packs, forked or not;
* rows appended after a pack (by an assign that does not pack) are read with it, or instead of it;
* a run with a flagged cluster worker is not read from a pack;
* a pack of another layout is not read, and is made again when a writer closes the store;
* a pack whose bytes changed, and a damaged page of a table the packs stand for, are refused as damage;
* beside() gives fn's result, raises what fn raised, and computes fn itself where the child died.
"""
from __future__ import annotations

import gc
import json
import os
import shutil
import sqlite3

import numpy as np
import pytest

from assign import beside as beside_mod
from assign.beside import beside
from assign.cli import main
from assign.evt.top import top_size
from assign.packs import walk
from assign.store import Store


def _sample(db, n: int, *extra: str) -> None:
    assert main(["sample", "--n", str(n), "--workload", "ipfwd-mem", "--machine", "ultrasparc-t2", "--backend",
                 "model", "--noise", "0.02", "--db", str(db), "--quiet", *extra]) == 0
    gc.collect()  # the command's store is finished (indexed, packed) when collected


def _copy(db, tmp_path, name: str, *sql: str):
    out = tmp_path / name
    shutil.copy(db, out)
    with sqlite3.connect(out) as c:
        for q in sql:
            c.execute(q)
    c.close()
    return out


def _reads(path, run_id: int = 1) -> dict:
    """Everything the packs serve, as the store reads it."""
    with Store(str(path), readonly=True) as s:
        n = s.value_summary(run_id)[0]
        out = {"summary": s.value_summary(run_id), "progress": s.progress(run_id), "counts": s.repeat_counts(run_id),
               "top": s.top_values(run_id, top_size(n)), "top10": s.top_values(run_id, 10)}
        for purposes in (("noise",), ("select",), ("noise", "select")):
            for limit in (None, n // 2):
                out[purposes, limit] = s.repeat_arrays(run_id, purposes, limit)
        top = out["top"]
        for k in (0, 10, top.size // 2, top.size - 1):  # the last: ties beyond the pack may exist, read as rows
            out["draws", k] = s.top_draws(run_id, float(top[k]))
        out["draws", "below"] = s.top_draws(run_id, float(top[-1]) - 1.0)
        redrawn = np.unique(out[("noise",), None][0]).tolist()
        out["placements"] = s.assignments(run_id, redrawn + [0, 1, n - 1])
        out["packed"] = (s._top_pack(run_id) is not None, s._repeats_pack(run_id) is not None)
    return out


def _same(a: dict, b: dict) -> None:
    for key in a:
        if key == "packed":
            continue
        x, y = a[key], b[key]
        if isinstance(x, tuple) and x and isinstance(x[0], np.ndarray):
            assert all(np.array_equal(u, v) and u.dtype == v.dtype for u, v in zip(x, y)), key
        elif isinstance(x, np.ndarray):
            assert np.array_equal(x, y), key
        else:
            assert x == y, key


def _estimate(capsys, db, monkeypatch, serial: bool) -> dict:
    if serial:
        monkeypatch.setenv("ASSIGN_SERIAL", "1")
    else:
        monkeypatch.delenv("ASSIGN_SERIAL", raising=False)
    capsys.readouterr()
    assert main(["estimate", "--db", str(db), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    d.pop("source")
    return d


def test_packed_reads_are_the_rows(tmp_path, capsys, monkeypatch) -> None:
    db = tmp_path / "r.db"
    _sample(db, 3000, "--repeat-every", "20")
    with sqlite3.connect(db) as c:
        assert {w for w, in c.execute("SELECT what FROM packs WHERE run_id=1")} == {"top", "repeats"}
    c.close()
    rows = _copy(db, tmp_path, "rows.db", "DELETE FROM packs")
    packed, read = _reads(db), _reads(rows)
    assert packed["packed"] == (True, True) and read["packed"] == (False, False)
    assert packed["counts"]["noise"] > 100 and len(packed["placements"]) > 10
    _same(packed, read)
    reference = _estimate(capsys, rows, monkeypatch, serial=True)
    assert reference["optimum_mean"]["noise"]["repetitions"] == packed["counts"]["noise"]
    for serial in (True, False):
        assert _estimate(capsys, db, monkeypatch, serial) == reference


def test_rows_after_a_pack_are_read_with_it(tmp_path) -> None:
    """An assign that does not pack appends a draw and repetitions: the top pack no longer serves, the
    repetitions' pack serves with the rows after it."""
    db = tmp_path / "r.db"
    _sample(db, 2000, "--repeat-every", "20")
    with sqlite3.connect(db) as c:
        redrawn, seq = c.execute("SELECT MIN(idx), MAX(seq) + 1 FROM repeats WHERE run_id=1").fetchone()
    c.close()
    appended = [
        "INSERT INTO measurements (run_id, idx, assignment, value, status, measured_at) "
        "SELECT 1, 2000, assignment, 9.9e6, 'ok', measured_at FROM measurements WHERE run_id=1 AND idx=0",
        *(f"INSERT INTO repeats (run_id, seq, idx, purpose, selection, round, draws, value, status, measured_at) "
          f"VALUES (1, {seq + k}, {i}, '{p}', NULL, NULL, 2001, {v}, '{st}', 'now')"
          for k, (i, p, v, st) in enumerate([(redrawn, "noise", 6.1e6, "ok"), (2000, "noise", 9.8e6, "ok"),
                                             (5, "noise", "NULL", "failed"), (redrawn, "select", 6.2e6, "ok")])),
    ]
    later = _copy(db, tmp_path, "later.db", *appended)
    rows = _copy(later, tmp_path, "rows.db", "DELETE FROM packs")
    packed, read = _reads(later), _reads(rows)
    assert packed["packed"] == (False, True)  # the top pack was made before the draw appended
    _same(packed, read)
    assert packed["counts"]["select"] == 1
    assert packed["summary"][2] == 9.9e6 and packed["top10"][0] == 9.9e6


def test_a_run_with_a_flagged_worker_is_read_from_its_rows(tmp_path) -> None:
    db = tmp_path / "r.db"
    _sample(db, 1500, "--repeat-every", "20")
    with Store(str(db)) as s:
        s.add_worker(1, "tcp://198.18.0.9:1", "w0", "h")
        s.flag_worker(1, "tcp://198.18.0.9:1", "its machine differs")
    gc.collect()
    with Store(str(db), readonly=True) as s:
        assert s._top_pack(1) is None and s._repeats_pack(1) is None
        assert s.repeat_arrays(1, ("noise",))[0].size > 0


def test_a_damaged_pack_or_table_page_is_refused(tmp_path, capsys) -> None:
    db = tmp_path / "r.db"
    _sample(db, 2000, "--repeat-every", "20")
    bad = _copy(db, tmp_path, "bad.db")
    with sqlite3.connect(bad) as c:
        data = bytearray(c.execute("SELECT data FROM packs WHERE run_id=1 AND what='repeats'").fetchone()[0])
        data[len(data) // 2] ^= 0x40
        c.execute("UPDATE packs SET data=? WHERE run_id=1 AND what='repeats'", (bytes(data),))
    c.close()
    capsys.readouterr()
    assert main(["estimate", "--db", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "checksum" in err and str(bad) in err
    with pytest.raises(ChildProcessError):  # the error came while its forked part ran: that was stopped and reaped
        os.waitpid(-1, os.WNOHANG)
    # a page of the measurements table that the estimate does not read through its packs and index
    walk(str(db))
    with sqlite3.connect(db) as c:
        pages = [p for p, in c.execute("SELECT pageno FROM dbstat WHERE name='measurements' AND pagetype='leaf' "
                                       "ORDER BY pageno")]
        size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    raw = bytearray(db.read_bytes())
    at = (pages[len(pages) // 3] - 1) * size
    raw[at:at + size] = bytes(range(256)) * (size // 256)
    broken = tmp_path / "broken.db"
    broken.write_bytes(bytes(raw))
    with pytest.raises(sqlite3.DatabaseError):
        walk(str(broken))
    for serial in ("1", ""):
        os.environ["ASSIGN_SERIAL"] = serial
        try:
            assert main(["estimate", "--db", str(broken)]) == 2
        finally:
            del os.environ["ASSIGN_SERIAL"]
        err = capsys.readouterr().err
        assert "damaged" in err and str(broken) in err


def test_beside_gives_what_the_function_gives(monkeypatch) -> None:
    parent = os.getpid()
    forks = beside_mod._cpus() >= 2
    assert beside(os.getpid)() != parent if forks else beside(os.getpid)() == parent
    assert beside(lambda: {"a": [1.5, None]})() == {"a": [1.5, None]}

    def fails():
        raise ValueError("no estimate: too few values")

    with pytest.raises(ValueError, match="too few values"):
        beside(fails)()
    # the child dies, or its result does not pickle: computed here
    assert beside(lambda: os._exit(3) if os.getpid() != parent else 42)() == 42
    assert beside(lambda: (lambda: 7))()() == 7
    monkeypatch.setenv("ASSIGN_SERIAL", "1")
    assert beside(os.getpid)() == parent


def test_a_pack_of_another_layout_is_not_read_and_is_made_again(tmp_path) -> None:
    db = tmp_path / "r.db"
    _sample(db, 1500, "--repeat-every", "20")
    other = _copy(db, tmp_path, "other.db", "UPDATE packs SET meta = json_set(meta, '$.version', 0)")
    rows = _copy(db, tmp_path, "rows.db", "DELETE FROM packs")
    got = _reads(other)
    assert got["packed"] == (False, False)
    _same(got, _reads(rows))
    Store(str(other)).close()  # a writer of this version packs it again
    assert _reads(other)["packed"] == (True, True)


def test_rows_deleted_past_the_triggers_are_told(tmp_path, capsys) -> None:
    """A store of one run whose rows were deleted past its triggers no longer matches its packs: estimate
    refuses it, naming the pack and how to remove the packs; without them it is read from its rows."""
    db = tmp_path / "r.db"
    _sample(db, 1500, "--repeat-every", "20")
    for table, what in (("repeats", "repetitions"), ("measurements", "measurements")):
        cut = _copy(db, tmp_path, f"cut-{table}.db", f"DROP TRIGGER {table}_keep_delete",
                    f"DELETE FROM {table} WHERE rowid = (SELECT MIN(rowid) FROM {table})")
        with pytest.raises(sqlite3.DatabaseError, match=f"run 1's {what} counts"):
            walk(str(cut))
        capsys.readouterr()
        assert main(["estimate", "--db", str(cut)]) == 2
        err = capsys.readouterr().err
        assert "damaged" in err and "DELETE FROM packs" in err
        with sqlite3.connect(cut) as c:
            c.execute("DELETE FROM packs")
        c.close()
        assert main(["estimate", "--db", str(cut)]) == 0
