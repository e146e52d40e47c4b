"""The store's packed copies: what `assign estimate` reads of a large run, kept as arrays in one row.

SQLite hands Python a row at a time, at about half a microsecond a row: at a million draws the estimate's
reads (the top 5% of the values for the paper's estimate, 50,000 planned repetitions, the placements of
the 2,800 draws they re-measured) cost more than its arithmetic.  A writable store packs them when it is
closed, as it creates its value index (store.py): per run, a row of table `packs` holding

* 'top': the run's largest values (as many as the paper's estimate reads, evt/top.py) and their draws,
  its counts of successful and failed draws, and its smallest and largest value, as of the measurements
  table's last row (its largest rowid);
* 'repeats': every successful repetition (seq, draw, the draws the run held then, value, purpose) up to a
  seq, the count of each purpose's repetitions (failures included), and the placement of each draw they
  measured.

A copy, not new data: the same numbers, bit for bit, as the rows it was read from
(tests/test_packs.py).  Measurements and repetitions are only ever appended (store.py's triggers), so a
'top' pack serves while the measurements table has no row after it, and a 'repeats' pack always, with
the repetitions after its last seq read as rows.  A run with a flagged cluster worker is neither packed
nor read from a pack (its flagged values are left out, which a copy made without that flag would not
know).  A store without packs, or whose packs were made before its last rows, is read row by row as
before; an older assign leaves them as they are, and they are then out of date, which the checks above
see."""
from __future__ import annotations

import json
import os
import sqlite3
import zlib
from dataclasses import dataclass

import numpy as np

PURPOSES = ("noise", "select")
LAYOUT = 1  # the arrays a pack of this version holds: a pack of another is not read (and is made again on close)


@dataclass(frozen=True)
class TopPack:
    ok: int                          # successful draws
    failed: int
    low: float
    high: float
    values: np.ndarray               # the largest values, largest first
    draws: np.ndarray                # their draws


@dataclass(frozen=True)
class RepeatsPack:
    upto: int                        # last seq packed (-1: none)
    counts: dict[str, int]           # purpose -> repetitions up to upto, failures included
    seq: np.ndarray
    idx: np.ndarray
    draws: np.ndarray
    value: np.ndarray
    purpose: np.ndarray              # index into PURPOSES
    placed: np.ndarray               # draws whose placement is packed, ascending
    placement: np.ndarray            # (placed.size, tasks) PU os_index per task


def _arrays(data: bytes, meta: dict, run_id: int) -> dict[str, np.ndarray]:
    """The pack's arrays; a pack whose bytes are not those written (a damaged page: SQLite keeps no checksum
    of a row, the pack its own) raises sqlite3.DatabaseError, as SQLite does for damage it finds."""
    if zlib.crc32(data) != meta.get("crc32"):
        raise sqlite3.DatabaseError(f"the packed copy of run {run_id}'s values fails its checksum (packs.py)")
    layout = meta["layout"]
    out, at = {}, 0
    buf = memoryview(data)
    for name, dtype, shape in layout:
        count = int(np.prod(shape)) if shape else 0
        size = count * np.dtype(dtype).itemsize
        out[name] = np.frombuffer(buf[at:at + size], dtype=dtype).reshape(shape)
        at += size
    if at != len(buf):
        raise sqlite3.DatabaseError(f"the packed copy of run {run_id}'s values holds {len(buf)} bytes, its layout "
                                    f"says {at}")
    return out


def _blob(arrays: list[tuple[str, np.ndarray]]) -> tuple[bytes, dict]:
    """The arrays' bytes, and their layout and checksum for the pack's meta."""
    data = b"".join(np.ascontiguousarray(a).tobytes() for _, a in arrays)
    return data, {"version": LAYOUT, "layout": [(name, a.dtype.str, list(a.shape)) for name, a in arrays],
                  "crc32": zlib.crc32(data)}


def _row(db: sqlite3.Connection, run_id: int, what: str, upto: int | None = None):
    """The pack's (upto, meta, data); with `upto`, only a pack made at that point."""
    q, params = "SELECT upto, meta, data FROM packs WHERE run_id=? AND what=?", [run_id, what]
    if upto is not None:
        q += " AND upto=?"
        params.append(upto)
    try:
        return db.execute(q, params).fetchone()
    except sqlite3.OperationalError:  # no packs table: a store no writer of this version has closed
        return None


def _meta(row) -> dict | None:
    """A pack's meta, where it is one of this version's."""
    if row is None:
        return None
    meta = json.loads(row[1])
    return meta if meta.get("version") == LAYOUT else None


def last_rowid(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COALESCE(MAX(rowid), -1) FROM measurements").fetchone()[0])


def read_top(db: sqlite3.Connection, run_id: int) -> TopPack | None:
    """The run's 'top' pack where the measurements table holds no row after it."""
    row = _row(db, run_id, "top", last_rowid(db))
    meta = _meta(row)
    if meta is None:
        return None
    a = _arrays(row[2], meta, run_id)
    return TopPack(meta["ok"], meta["failed"], meta["low"], meta["high"], a["values"], a["draws"])


def read_repeats(db: sqlite3.Connection, run_id: int) -> RepeatsPack | None:
    row = _row(db, run_id, "repeats")
    meta = _meta(row)
    if meta is None:
        return None
    a = _arrays(row[2], meta, run_id)
    return RepeatsPack(int(row[0]), meta["counts"], a["seq"], a["idx"], a["draws"], a["value"], a["purpose"],
                       a["placed"], a["placement"])


def _pack_top(db: sqlite3.Connection, run_id: int, upto: int) -> None:
    from .evt.optimum import TAIL_FRACTION
    from .evt.top import top_size

    if _meta(_row(db, run_id, "top", upto)) is not None:
        return
    failed = int(db.execute("SELECT COUNT(*) FROM measurements WHERE run_id=? AND value IS NULL",
                            (run_id,)).fetchone()[0])
    ok, low, high = db.execute("SELECT COUNT(value), MIN(value), MAX(value) FROM measurements WHERE run_id=?",
                               (run_id,)).fetchone()
    if not ok:
        return
    rows = db.execute("SELECT value, idx FROM measurements WHERE run_id=? AND value IS NOT NULL "
                      "ORDER BY value DESC LIMIT ?", (run_id, top_size(int(ok), TAIL_FRACTION))).fetchall()
    values = np.array([r[0] for r in rows], dtype=np.float64)
    draws = np.array([r[1] for r in rows], dtype=np.int64)
    data, meta = _blob([("values", values), ("draws", draws)])
    meta.update(ok=int(ok), failed=failed, low=float(low), high=float(high))
    db.execute("INSERT OR REPLACE INTO packs (run_id, what, upto, meta, data) VALUES (?,?,?,?,?)",
               (run_id, "top", upto, json.dumps(meta), data))


def _pack_repeats(db: sqlite3.Connection, run_id: int) -> None:
    last = db.execute("SELECT MAX(seq) FROM repeats WHERE run_id=?", (run_id,)).fetchone()[0]
    if last is None or _meta(_row(db, run_id, "repeats", int(last))) is not None:
        return
    rows = db.execute("SELECT seq, idx, draws, value, purpose FROM repeats WHERE run_id=? AND status='ok' "
                      "ORDER BY seq", (run_id,)).fetchall()
    counts = {p: int(c) for p, c in db.execute(
        "SELECT purpose, COUNT(*) FROM repeats WHERE run_id=? AND seq <= ? GROUP BY purpose", (run_id, last))}
    code = {p: i for i, p in enumerate(PURPOSES)}
    seq = np.array([r[0] for r in rows], dtype=np.int64)
    idx = np.array([r[1] for r in rows], dtype=np.int64)
    draws = np.array([r[2] for r in rows], dtype=np.int64)
    value = np.array([r[3] for r in rows], dtype=np.float64)
    purpose = np.array([code[r[4]] for r in rows], dtype=np.uint8)
    placed = np.unique(idx)
    texts: dict[int, str] = {}
    want = placed.tolist()
    for i in range(0, len(want), 500):
        chunk = want[i:i + 500]
        texts.update(db.execute(f"SELECT idx, assignment FROM measurements WHERE run_id=? AND idx IN "
                                f"({','.join('?' * len(chunk))})", (run_id, *chunk)))
    lists = json.loads("[" + ",".join(texts[i] for i in want if i in texts) + "]")
    placed = np.array([i for i in want if i in texts], dtype=np.int64)
    tasks = {len(a) for a in lists}
    if len(tasks) > 1:  # placements of unequal length: not packed (read as rows)
        placed, lists = placed[:0], []
    placement = np.array(lists, dtype=np.int32).reshape(placed.size, tasks.pop() if len(tasks) == 1 else 0)
    data, meta = _blob([("seq", seq), ("idx", idx), ("draws", draws), ("value", value), ("purpose", purpose),
                        ("placed", placed), ("placement", placement)])
    meta["counts"] = counts
    db.execute("INSERT OR REPLACE INTO packs (run_id, what, upto, meta, data) VALUES (?,?,?,?,?)",
               (run_id, "repeats", int(last), json.dumps(meta), data))


def pack(db: sqlite3.Connection) -> None:
    """Bring every run's packs up to date (a writable store, as it closes)."""
    has = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "packs" not in has:
        return
    upto = last_rowid(db)
    flagged = {r[0] for r in db.execute("SELECT DISTINCT run_id FROM workers WHERE flagged IS NOT NULL")} \
        if "workers" in has else set()
    with db:
        for (run_id,) in db.execute("SELECT id FROM runs").fetchall():
            if run_id in flagged:
                continue
            _pack_top(db, run_id, upto)
            if "repeats" in has:
                _pack_repeats(db, run_id)


def walk(path: str) -> None:
    """Read every page of the tables the packs stand for (measurements, repeats), on a connection of its own:
    a damaged page raises sqlite3.DatabaseError.  Reading through the packs, `assign estimate` reads few of
    those pages itself (a million draws' table is 300 MB), so it has this done beside it (beside.py), where
    reading every value found such damage before (tests/test_bad_input.py).  The file is memory-mapped (no
    copy of each page into SQLite's cache): 7 to 16 ms at a million draws instead of 60.  (A file cut short
    while mapped raises SIGBUS; a store is never cut short by assign, and one that is shorter than its
    header says was refused when it was opened: store._check_header.)

    A store of one run has its rows counted against its packs as well: a pack that counts other than the
    rows (rows deleted past the triggers that refuse it) raises sqlite3.DatabaseError too, naming it."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db.execute(f"PRAGMA mmap_size={os.path.getsize(path)}")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = {}
        for table in ("measurements", "repeats"):
            if table in tables:  # NOT INDEXED: the table's own pages, not a smaller index's
                rows[table] = int(db.execute(f"SELECT COUNT(*) FROM {table} NOT INDEXED").fetchone()[0])
        runs = [r for r, in db.execute("SELECT id FROM runs")]
        if "packs" in tables and len(runs) == 1:
            _count_packs(db, runs[0], rows)
    finally:
        db.close()


def _count_packs(db: sqlite3.Connection, run_id: int, rows: dict[str, int]) -> None:
    """The packs of a store's one run against its tables' row counts (walk)."""
    def refuse(what: str, packed: int, held: int) -> None:
        raise sqlite3.DatabaseError(
            f"the packed copy of run {run_id}'s {what} counts {packed:,} rows where the table holds {held:,} "
            f"(rows deleted past the store's triggers?); the packs are copies, made again when a writer closes "
            f"the store: `DELETE FROM packs` removes them")

    top = _meta(_row(db, run_id, "top", last_rowid(db)))
    if top is not None and top["ok"] + top["failed"] != rows.get("measurements"):
        refuse("measurements", top["ok"] + top["failed"], rows.get("measurements", 0))
    row = _row(db, run_id, "repeats")
    reps = _meta(row)
    if reps is not None:
        after = int(db.execute("SELECT COUNT(*) FROM repeats WHERE run_id=? AND seq > ?",
                               (run_id, row[0])).fetchone()[0])
        if sum(reps["counts"].values()) + after != rows.get("repeats"):
            refuse("repetitions", sum(reps["counts"].values()), rows.get("repeats", 0) - after)
