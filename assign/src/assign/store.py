"""The results database (SQLite).

Tables: runs (what was sampled, on what, by which backend), measurements
(one row per draw, value or failure with its reason, and the cluster worker
that measured it), estimates (what `assign iterate` concluded at each step),
and for `sample --cluster` workers (each worker of a run, and whether its
values are flagged: measured on a machine that differs from the others) and
reference_measurements (the reference placement each worker measures at
start and every K draws; see machine_check.py), and sittings (each `assign
sample` that measured into a measured run, and its ground; a worker's own
ground is stored with the worker), repeats (further measurements of draws
already measured: the noise repetitions a run plans while it samples, and
the rounds of `assign best`'s selection) and selections (each such
selection, its parameters and, once finished, its result), and packs (copies
of what `assign estimate` reads of a run, as arrays, made when a writable
store closes: packs.py).  Flagged values are kept,
never deleted, and left out of values(), progress() and best().  Measurements are inserted as
they come, one transaction per backend batch (one measurement for the dpdk
backend, up to the model's batch_size for the model), and never updated or
deleted (triggers refuse it), so a killed process loses at most the batch in
flight.

Durability: WAL journal.  A run whose backend measures for real commits with
synchronous=FULL (each commit reaches the disk; a measurement takes seconds
anyway); a modelled run uses synchronous=NORMAL, which survives the process
being killed but not a power cut, because a modelled value is recomputed
exactly from the seed and commits at disk speed would make 5000 model
points slow.
"""
from __future__ import annotations

import json
import os
import sqlite3
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import repeat

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    workload TEXT NOT NULL,
    instances INTEGER NOT NULL,
    machine TEXT NOT NULL,
    topology TEXT NOT NULL,          -- JSON: the hwloc tree (see topology.py)
    backend TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('measured', 'modelled')),
    seed INTEGER NOT NULL,
    allow_colocate INTEGER NOT NULL,
    params TEXT NOT NULL,            -- JSON: backend configuration
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS measurements (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    idx INTEGER NOT NULL,            -- draw number: the draw is a function of (seed, idx)
    assignment TEXT NOT NULL,        -- JSON list: PU os_index of task 0, 1, ... (R0 P0 T0 R1 ...)
    value REAL,                      -- packets/s; NULL when status = 'failed'
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    extra TEXT,                      -- JSON: per-instance / per-task data from the backend
    measured_at TEXT NOT NULL,
    worker TEXT,                     -- dask worker address (sample --cluster); NULL: measured in-process
    PRIMARY KEY (run_id, idx),
    CHECK ((status = 'ok') = (value IS NOT NULL))
);
CREATE TABLE IF NOT EXISTS estimates (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    n INTEGER NOT NULL,
    result TEXT NOT NULL,            -- JSON: evt Estimate.to_dict()
    created TEXT NOT NULL,
    PRIMARY KEY (run_id, n)
);
CREATE TABLE IF NOT EXISTS baselines (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,              -- 'linux-like'
    assignment TEXT NOT NULL,
    value REAL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    extra TEXT,
    measured_at TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS workers (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    address TEXT NOT NULL,           -- dask worker address, as measurements.worker names it
    name TEXT NOT NULL,              -- its dask name (dask worker --name; 0, 1, ... for local:N)
    host TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    flagged TEXT,                    -- why its values are left out (its machine differs); NULL: not flagged
    flagged_at TEXT,
    ground TEXT,                     -- JSON: what it measured on (ground.py), as it reported when first seen;
                                     -- NULL: not recorded (a worker of a store before schema 4)
    PRIMARY KEY (run_id, address)
);
CREATE TABLE IF NOT EXISTS reference_measurements (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    worker TEXT NOT NULL,            -- dask worker address
    seq INTEGER NOT NULL,            -- the worker's reference count (0: its first)
    at_idx INTEGER NOT NULL,         -- the draw the worker was about to measure
    worker_draws INTEGER NOT NULL,   -- draws that worker had measured before it
    assignment TEXT NOT NULL,        -- JSON list: PU os_index per task (the run's draw 0)
    value REAL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    measured_at TEXT NOT NULL,
    CHECK ((status = 'ok') = (value IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS reference_measurements_run ON reference_measurements (run_id, worker);
CREATE TABLE IF NOT EXISTS sittings (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,            -- 0, 1, ...: each `assign sample` that measured into the run
    first_idx INTEGER NOT NULL,      -- its first draw; its draws run up to the next sitting's first
    started TEXT NOT NULL,
    ground TEXT NOT NULL,            -- JSON: what it measured on (host, boot, CPU, kernel, the app's build)
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS sitting_workers (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,            -- the sitting (sittings.seq) a cluster worker measured in
    address TEXT NOT NULL,           -- the worker (workers.address)
    ground TEXT NOT NULL,            -- JSON: what it measured on in that sitting (a worker rebuilt at the
                                     -- same address between two sittings reports other ground)
    PRIMARY KEY (run_id, seq, address)
);
CREATE TABLE IF NOT EXISTS repeats (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,            -- 0, 1, ...: the run's repeated measurements in the order made
    idx INTEGER NOT NULL,            -- the draw whose placement was measured again (measurements.idx)
    purpose TEXT NOT NULL CHECK (purpose IN ('noise', 'select')),
    selection INTEGER,               -- selections.id, for purpose 'select'
    round INTEGER,                   -- its round in that selection (0, 1, ...)
    draws INTEGER NOT NULL,          -- successful draws the run held when it was measured
    value REAL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    extra TEXT,
    measured_at TEXT NOT NULL,
    worker TEXT,                     -- dask worker address; NULL: measured in-process
    PRIMARY KEY (run_id, seq),
    CHECK ((status = 'ok') = (value IS NOT NULL))
);
CREATE TABLE IF NOT EXISTS selections (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    id INTEGER NOT NULL,             -- 1, 2, ...: each `assign best` that chose by re-measuring
    params TEXT NOT NULL,            -- JSON: candidates (draws), indifference zone, confidence, first stage, budget
    created TEXT NOT NULL,
    result TEXT,                     -- JSON once finished; NULL while its rounds are measured
    finished TEXT,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE IF NOT EXISTS truths (
    id INTEGER PRIMARY KEY,          -- `assign enumerate --reps --db`: every distinct placement, measured
    workload TEXT NOT NULL,
    instances INTEGER NOT NULL,
    machine TEXT NOT NULL,
    topology TEXT NOT NULL,
    backend TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('measured', 'modelled')),
    seed INTEGER NOT NULL,           -- the order of each round's measurements
    allow_colocate INTEGER NOT NULL,
    params TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS truth_values (
    truth_id INTEGER NOT NULL REFERENCES truths(id),
    placement INTEGER NOT NULL,      -- 0, 1, ...: the distinct placement, in enumeration order
    round INTEGER NOT NULL,          -- 0, 1, ...: every placement is measured once a round
    multiplicity INTEGER NOT NULL,   -- raw placements it stands for
    assignment TEXT NOT NULL,        -- JSON list: PU os_index per task
    value REAL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    measured_at TEXT NOT NULL,
    PRIMARY KEY (truth_id, placement, round),
    CHECK ((status = 'ok') = (value IS NOT NULL))
);
CREATE TABLE IF NOT EXISTS searches (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    id INTEGER NOT NULL,             -- 1, 2, ...: each search of the run (assign search, assign best)
    sampler TEXT NOT NULL,           -- its --sampler
    params TEXT NOT NULL,            -- JSON: budget, seed, what it started from
    created TEXT NOT NULL,
    result TEXT,                     -- JSON once it stopped (how: converged, resolution, ...); NULL while it runs
    finished TEXT,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE IF NOT EXISTS search_values (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    search INTEGER NOT NULL,         -- searches.id
    seq INTEGER NOT NULL,            -- 0, 1, ...: its measurements in the order made
    assignment TEXT NOT NULL,        -- JSON list: PU os_index per task
    selection INTEGER,               -- selections.id where this is a selection round of a placement it found
    round INTEGER,                   -- its round in that selection
    value REAL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    extra TEXT,
    measured_at TEXT NOT NULL,
    PRIMARY KEY (run_id, search, seq),
    CHECK ((status = 'ok') = (value IS NOT NULL))
);
CREATE TRIGGER IF NOT EXISTS search_values_keep_update BEFORE UPDATE ON search_values
BEGIN SELECT RAISE(ABORT, 'stored measurements are never changed'); END;
CREATE TRIGGER IF NOT EXISTS search_values_keep_delete BEFORE DELETE ON search_values
BEGIN SELECT RAISE(ABORT, 'stored measurements are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS searches_finish_once BEFORE UPDATE ON searches
WHEN OLD.result IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a finished search is never changed'); END;
CREATE TRIGGER IF NOT EXISTS searches_keep_delete BEFORE DELETE ON searches
BEGIN SELECT RAISE(ABORT, 'searches are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS truth_values_keep_update BEFORE UPDATE ON truth_values
BEGIN SELECT RAISE(ABORT, 'stored measurements are never changed'); END;
CREATE TRIGGER IF NOT EXISTS truth_values_keep_delete BEFORE DELETE ON truth_values
BEGIN SELECT RAISE(ABORT, 'stored measurements are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS repeats_keep_update BEFORE UPDATE ON repeats
BEGIN SELECT RAISE(ABORT, 'stored measurements are never changed'); END;
CREATE TRIGGER IF NOT EXISTS repeats_keep_delete BEFORE DELETE ON repeats
BEGIN SELECT RAISE(ABORT, 'stored measurements are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS selections_finish_once BEFORE UPDATE ON selections
WHEN OLD.result IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a finished selection is never changed'); END;
CREATE TRIGGER IF NOT EXISTS selections_keep_delete BEFORE DELETE ON selections
BEGIN SELECT RAISE(ABORT, 'selections are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS references_keep_update BEFORE UPDATE ON reference_measurements
BEGIN SELECT RAISE(ABORT, 'stored measurements are never changed'); END;
CREATE TRIGGER IF NOT EXISTS references_keep_delete BEFORE DELETE ON reference_measurements
BEGIN SELECT RAISE(ABORT, 'stored measurements are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS measurements_keep_update BEFORE UPDATE ON measurements
BEGIN SELECT RAISE(ABORT, 'stored measurements are never changed'); END;
CREATE TRIGGER IF NOT EXISTS measurements_keep_delete BEFORE DELETE ON measurements
BEGIN SELECT RAISE(ABORT, 'stored measurements are never deleted'); END;
CREATE TABLE IF NOT EXISTS packs (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    what TEXT NOT NULL CHECK (what IN ('top', 'repeats')),
    upto INTEGER NOT NULL,           -- top: the measurements table's largest rowid; repeats: the last seq packed
    meta TEXT NOT NULL,              -- JSON: counts, and the arrays' types and shapes
    data BLOB NOT NULL,              -- the arrays, one after the other
    PRIMARY KEY (run_id, what)
);
"""
# Table packs: copies of what `assign estimate` reads of a large run, as arrays (packs.py); like the value index,
# not a schema change: derived from the rows, made when a writable store closes, read only while it matches them.


_COMPACT = json.JSONEncoder(separators=(",", ":"))  # one encoder: json.dumps(..., separators=) builds one per call


class StoreError(ValueError):
    """The database is missing, unreadable, or has no such run."""


SCHEMA_VERSION = 6  # PRAGMA user_version; 0: written before it was recorded (the tables of 1)
# 6: tables searches and search_values (assign search and assign best's search: placements that are not
#    draws, each measured as the searcher asked, and the selection rounds of those it found).
# 5: tables repeats (a run's planned repetitions and selection rounds: measurements of draws already
#    measured), selections (each `assign best` that re-measured the leading placements), truths and
#    truth_values (`assign enumerate --reps --db`: every distinct placement measured in rounds).
# 4: workers.ground (what each cluster worker measured on when first seen: a sitting's ground is the
#    coordinator's) and table sitting_workers (what each worker measured on in each sitting).
# 3: table sittings (what each `assign sample` of a measured run measured on; estimate compares them).
# 2: measurements.worker, tables workers and reference_measurements (sample --cluster's machine check).
# An older store is migrated when opened for writing (the columns and tables added, nothing else
# touched); opened read-only it is read as it is (no worker ever flagged, no sitting, no worker's ground).
# a measurement of an unflagged worker (not a correlated subquery: SQLite evaluates it once a query)
_UNFLAGGED = ("(worker IS NULL OR worker NOT IN "
              "(SELECT address FROM workers WHERE run_id={run} AND flagged IS NOT NULL))")
# The value index: a run's values in order of size, so that `assign estimate` reads only the top of a run (the
# paper's 5%) and its size, not a million rows (bench/assign.sh).  An index, not a schema change: a store
# without it is read as before (a read-only store opened since before it existed), and an older assign
# keeps it up to date.  Kept up to date by SQLite on every insert, except in bulk: each commit of a batch
# (4096 model draws) rewrites a page of the index for nearly every row, so that maintaining it through a
# sample of a million draws cost more than the sample itself (+19 s of CPU, measured); a writer that inserts
# more than BULK_ROWS and an eighth of what the table held drops it, and every writable store creates it
# when it is closed, collected or the interpreter exits (one sort: about 2 s for a million rows), so only a
# killed writer leaves a store without it, until the next writer ends.
VALUE_INDEX = "measurements_value"
_VALUE_INDEX_SQL = f"CREATE INDEX IF NOT EXISTS {VALUE_INDEX} ON measurements (run_id, value, idx)"
BULK_ROWS = 4096


def _check_header(path: str) -> None:
    """Refuse a file that is not an SQLite database, or is shorter than its
    header says (a truncated copy), naming the file and what is wrong."""
    size = os.path.getsize(path)
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError as e:
        raise StoreError(f"cannot read results database {path}: {e.strerror}") from None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        raise StoreError(f"{path} is not an SQLite database (no SQLite header in its first 100 bytes); "
                         f"give an assign results database or a new file name")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    header_valid = head[24:28] == head[92:96]  # the in-header size is current (SQLite file format 1.3.3)
    wal = f"{path}-wal"
    if os.path.exists(wal) and os.path.getsize(wal) > 0:
        # a write-ahead log holds frames not yet (or not all) copied into the file: a process
        # killed in a checkpoint leaves the file shorter than its new header says, and SQLite
        # completes it from the log; only SQLite itself can judge such a file
        return
    if page < 512 or size % page or (header_valid and size < page * pages):
        raise StoreError(f"results database {path} is truncated or damaged: {size} bytes, its header says "
                         f"{pages} pages of {page} bytes ({pages * page} bytes)")


def _finish(db: sqlite3.Connection, writable: bool) -> None:
    """Close a store's connection; a writable one first creates the value index if it lacks it, and brings
    its packs up to date (packs.py)."""
    try:
        if writable:
            try:
                with db:
                    db.execute(_VALUE_INDEX_SQL)
            except sqlite3.Error:  # the index only speeds reading: a store that cannot take it is read without
                pass
            try:
                from .packs import pack

                pack(db)
            except Exception:  # noqa: BLE001 - packs only speed reading (packs.py): without them, rows are read
                pass
    finally:
        db.close()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Run:
    id: int
    workload: str
    instances: int
    machine: str
    topology: dict
    backend: str
    kind: str
    seed: int
    allow_colocate: bool
    params: dict
    created: str

    def label(self) -> str:
        return (f"run {self.id}: {self.workload} x{self.instances} on {self.machine}, "
                f"backend {self.backend} ({self.kind}), seed {self.seed}")


@dataclass(frozen=True)
class Measurement:
    idx: int
    assignment: list[int]
    value: float | None
    status: str
    reason: str | None
    extra: dict


@dataclass(frozen=True)
class Repeat:
    """One more measurement of a draw's placement: a planned noise repetition or a selection round."""

    seq: int
    idx: int
    purpose: str
    selection: int | None
    round: int | None
    draws: int
    value: float | None
    status: str
    reason: str | None
    extra: dict


class Store:
    def __init__(self, path: str, *, readonly: bool = False):
        """Open (or, unless readonly, create) a results database.  A file that
        is not one, is truncated, or was written by a newer schema is refused
        before anything is written to it."""
        self.path = path
        self.readonly = readonly
        self._inserted = 0                # rows this writer has inserted into measurements
        self._rows_at_open: int | None = None
        exists = os.path.exists(path) and os.path.getsize(path) > 0
        if readonly and not os.path.exists(path):
            raise StoreError(f"results database {path} does not exist")
        if exists:
            _check_header(path)
        elif not readonly:
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise StoreError(f"cannot create results database {path}: directory {parent} does not exist")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise StoreError(f"cannot create results database {path}: directory {parent} is not writable")
        if readonly:
            self.db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
        else:
            self.db = sqlite3.connect(path)
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"results database {path} was written by a newer assign (schema version "
                                 f"{version}; this one knows up to {SCHEMA_VERSION}): use that version, or "
                                 f"another --db")
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if exists and not {"runs", "measurements"} <= tables:
                raise StoreError(f"{path} is an SQLite database but not an assign results database (its tables: "
                                 f"{', '.join(sorted(tables)) or 'none'}); give another --db")
            if not readonly:
                self.db.execute("PRAGMA journal_mode=WAL")
                if exists and "measurements" in tables and not self._has_worker_column():
                    with self.db:  # schema 2: the column before SCHEMA's tables and triggers
                        self.db.execute("ALTER TABLE measurements ADD COLUMN worker TEXT")
                self.db.executescript(SCHEMA)
                if not self._has_column("workers", "ground"):
                    with self.db:  # schema 4: a workers table of 2 or 3 (SCHEMA creates it with the column)
                        self.db.execute("ALTER TABLE workers ADD COLUMN ground TEXT")
                if version < SCHEMA_VERSION:
                    self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            else:
                self.db.execute("SELECT 1 FROM runs LIMIT 1")
            # a read-only store of schema < 2 has no workers: nothing in it is flagged
            self._workers = self._has_worker_column()
            # nor, below 3, sittings: its values are all from before they were recorded
            self._sittings = bool(self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='sittings'").fetchone())
            # nor, below 4, the workers' grounds
            self._worker_grounds = self._has_column("workers", "ground")
            self._sitting_workers = bool(self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='sitting_workers'").fetchone())
            # nor, below 5, repetitions or selections
            self._repeats = bool(self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='repeats'").fetchone())
            # nor, below 6, searches
            self._searches = bool(self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='searches'").fetchone())
            self._value_index = bool(self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='index' AND name=?", (VALUE_INDEX,)).fetchone())
            self._finish = weakref.finalize(self, _finish, self.db, not readonly)
        except StoreError:
            self.db.close()
            raise
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise StoreError(f"{path} is not an assign results database, or is damaged: {e}") from None

    def _unflagged(self, run_id: int) -> str:
        """SQL condition: a measurement of run_id not left out (its worker not flagged)."""
        return _UNFLAGGED.format(run=int(run_id)) if self._workers else "1"

    def _has_worker_column(self) -> bool:
        return self._has_column("measurements", "worker")

    def _has_column(self, table: str, column: str) -> bool:
        """Whether `table` exists and has `column` (PRAGMA table_info of a missing table: no rows)."""
        return any(r[1] == column for r in self.db.execute(f"PRAGMA table_info({table})"))

    def close(self) -> None:
        """Close; a writable store first creates the value index if it lacks it (VALUE_INDEX) and brings
        its packs up to date (packs.py).  A store not closed is finished so when collected or when the
        interpreter exits."""
        self._finish()

    def _before_insert(self, rows: int) -> None:
        """Drop the value index ahead of a bulk insert (VALUE_INDEX: it is created again on close)."""
        self._inserted += rows
        if not self._value_index or self._inserted < BULK_ROWS:
            return
        if self._rows_at_open is None:
            self._rows_at_open = int(self.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])
        if self._inserted >= self._rows_at_open / 8:
            with self.db:
                self.db.execute(f"DROP INDEX IF EXISTS {VALUE_INDEX}")
            self._value_index = False

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # runs -----------------------------------------------------------------
    def _run(self, row) -> Run:
        return Run(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6], row[7],
                   bool(row[8]), json.loads(row[9]), row[10])

    def runs(self) -> list[Run]:
        return [self._run(r) for r in self.db.execute("SELECT * FROM runs ORDER BY id")]

    def run(self, run_id: int | None) -> Run:
        """The run asked for, or the only run in the database."""
        runs = self.runs()
        if not runs:
            raise StoreError(f"{self.path} holds no runs yet: run `assign sample` first")
        if run_id is None:
            if len(runs) > 1:
                listing = "; ".join(r.label() for r in runs)
                raise StoreError(f"{self.path} holds {len(runs)} runs, pick one with --run ID ({listing})")
            return runs[0]
        for r in runs:
            if r.id == run_id:
                return r
        raise StoreError(f"{self.path} has no run {run_id} (runs: {', '.join(str(r.id) for r in runs)})")

    def find_or_create_run(self, *, workload: str, instances: int, machine: str, topology: dict,
                           backend: str, kind: str, seed: int, allow_colocate: bool,
                           params: dict) -> tuple[Run, bool]:
        topo_json = json.dumps(topology, sort_keys=True, separators=(",", ":"))
        params_json = json.dumps(params, sort_keys=True)
        row = self.db.execute(
            "SELECT * FROM runs WHERE workload=? AND instances=? AND machine=? AND topology=? AND backend=? "
            "AND kind=? AND seed=? AND allow_colocate=? AND params=? ORDER BY id LIMIT 1",
            (workload, instances, machine, topo_json, backend, kind, seed, int(allow_colocate), params_json),
        ).fetchone()
        if row is not None:
            return self._run(row), False
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs (workload, instances, machine, topology, backend, kind, seed, allow_colocate, "
                "params, created) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (workload, instances, machine, topo_json, backend, kind, seed, int(allow_colocate), params_json,
                 _now()),
            )
        return self.run(cur.lastrowid), True

    # measurements ---------------------------------------------------------
    def set_durability(self, kind: str) -> None:
        self.db.execute("PRAGMA synchronous=" + ("FULL" if kind == "measured" else "NORMAL"))

    def add(self, run_id: int, idx: int, assignment: list[int], value: float | None, status: str,
            reason: str | None, extra: dict) -> None:
        """Store one measurement in its own transaction."""
        self.add_many(run_id, [(idx, assignment, value, status, reason, extra)])

    def add_many(self, run_id: int, rows: Sequence[tuple[int, list[int], float | None, str, str | None, dict]]) -> None:
        """Store (idx, assignment, value, status, reason, extra) rows in one transaction."""
        now = _now()
        dumps, compact = json.dumps, _COMPACT.encode
        self._before_insert(len(rows))
        with self.db:
            self.db.executemany(
                "INSERT INTO measurements (run_id, idx, assignment, value, status, reason, extra, measured_at) "
                "VALUES (?,?,?,?,?,?,?,?)",
                [(run_id, idx, dumps(assignment), value, status, reason,
                  compact(extra), now)
                 for idx, assignment, value, status, reason, extra in rows])

    def add_values(self, run_id: int, idx: Sequence[int], assignments_json: Sequence[str],
                   values: Sequence[float], extras_json: Sequence[str]) -> None:
        """Store a batch of successful measurements given as JSON text, in one transaction."""
        self.add_rows(run_id, zip(idx, assignments_json, values, repeat("ok"), repeat(None), extras_json))

    def add_rows(self, run_id: int, rows: Iterable[tuple[int, str, float | None, str, str | None, str]],
                 worker: str | None = None) -> None:
        """Store (idx, assignment JSON, value, status, reason, extra JSON) rows in one
        transaction; `worker`: the cluster worker that measured them."""
        now = _now()
        rows = list(rows)
        self._before_insert(len(rows))
        with self.db:
            self.db.executemany(
                "INSERT INTO measurements (run_id, idx, assignment, value, status, reason, extra, measured_at, "
                "worker) VALUES (?,?,?,?,?,?,?,?,?)",
                ((run_id, i, a, v, st, why, e, now, worker) for i, a, v, st, why, e in rows))

    def progress(self, run_id: int) -> tuple[int, int, int, float | None]:
        """(next idx, ok count, failed count, best value) of a run; the counts and
        the best leave out the values of flagged workers (next idx does not)."""
        if self._fast_values(run_id):  # through the indexes, without reading the rows
            nxt = self.db.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM measurements WHERE run_id=?",
                                  (run_id,)).fetchone()[0]
            ok, failed = self._counts(run_id)
            best = self.db.execute("SELECT MAX(value) FROM measurements WHERE run_id=?", (run_id,)).fetchone()[0]
            return int(nxt), ok, failed, best
        keep = self._unflagged(run_id)
        nxt, ok, failed, best = self.db.execute(
            f"SELECT COALESCE(MAX(idx) + 1, 0), SUM(status='ok' AND {keep}), "
            f"SUM(status='failed' AND {keep}), MAX(CASE WHEN {keep} THEN value END) "
            "FROM measurements WHERE run_id=?", (run_id,)).fetchone()
        return int(nxt), int(ok or 0), int(failed or 0), best

    # reading through the value index (VALUE_INDEX) -------------------------
    def _fast_values(self, run_id: int) -> bool:
        """Whether the run's values can be read through the value index: the store has it, and no
        worker of the run is flagged (their values are left out, which the index cannot do)."""
        return self._value_index and not self._has_flagged(run_id)

    def _has_flagged(self, run_id: int) -> bool:
        """Whether a worker of the run is flagged (its values left out)."""
        return bool(self._workers and self.db.execute(
            "SELECT 1 FROM workers WHERE run_id=? AND flagged IS NOT NULL LIMIT 1", (run_id,)).fetchone())

    def _counts(self, run_id: int) -> tuple[int, int]:
        """(successful, failed) measurements of a run, through the indexes (a failure's value is NULL);
        remembered by a read-only store."""
        memo = self.__dict__.setdefault("_count_memo", {})
        if self.readonly and run_id in memo:
            return memo[run_id]
        memo[run_id] = out = self._count(run_id)
        return out

    def _top_pack(self, run_id: int):
        """The run's 'top' pack (packs.py) where the value index serves and the pack matches the rows."""
        memo = self.__dict__.setdefault("_top_packs", {})
        if self.readonly and run_id in memo:
            return memo[run_id]
        from .packs import read_top

        # a writer reads it again each time: what it appended since makes the pack out of date (rows are
        # never deleted; packs.walk counts them against the packs, beside the estimate)
        memo[run_id] = out = read_top(self.db, run_id) if self._fast_values(run_id) else None
        return out

    def _count(self, run_id: int) -> tuple[int, int]:
        top = self._top_pack(run_id)
        if top is not None:
            return top.ok, top.failed
        failed = int(self.db.execute("SELECT COUNT(*) FROM measurements WHERE run_id=? AND value IS NULL",
                                     (run_id,)).fetchone()[0])
        if self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1:
            # the table holds this run alone: SQLite counts a whole b-tree page by page, a range row by row
            total = int(self.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])
            return total - failed, failed
        return int(self.db.execute("SELECT COUNT(*) FROM measurements WHERE run_id=? AND value IS NOT NULL",
                                   (run_id,)).fetchone()[0]), failed

    def value_summary(self, run_id: int) -> tuple[int, float, float] | None:
        """(count, smallest, largest) of the values `values` gives, without reading them; None where the
        value index cannot give them (`_fast_values`) or the run holds none.  A read-only store
        remembers it (what it holds does not change under one command)."""
        memo = self.__dict__.setdefault("_summaries", {})
        if self.readonly and run_id in memo:
            return memo[run_id]
        memo[run_id] = out = self._value_summary(run_id)
        return out

    def _value_summary(self, run_id: int) -> tuple[int, float, float] | None:
        if not self._fast_values(run_id):
            return None
        top = self._top_pack(run_id)
        if top is not None:
            return top.ok, top.low, top.high
        n, _ = self._counts(run_id)
        if n == 0:
            return None
        lo = self.db.execute("SELECT MIN(value) FROM measurements WHERE run_id=?", (run_id,)).fetchone()[0]
        hi = self.db.execute("SELECT MAX(value) FROM measurements WHERE run_id=?", (run_id,)).fetchone()[0]
        return n, float(lo), float(hi)

    def top_values(self, run_id: int, m: int):
        """The m largest of the values `values` gives, largest first (a numpy array); only where
        value_summary gives a summary."""
        import numpy as np

        top = self._top_pack(run_id)
        if top is not None and top.values.size >= min(int(m), top.ok):
            return top.values[:int(m)].copy()
        rows = self.db.execute("SELECT value FROM measurements WHERE run_id=? AND value IS NOT NULL "
                               "ORDER BY value DESC LIMIT ?", (run_id, int(m)))
        # straight from the cursor: the paper's 5% is 50,000 rows at a million draws (a list of them first
        # took twice as long)
        return np.fromiter((r[0] for r in rows), dtype=float)

    def count_above(self, run_id: int, threshold: float) -> int:
        """How many of the values `values` gives exceed `threshold` (through the value index)."""
        return int(self.db.execute("SELECT COUNT(*) FROM measurements WHERE run_id=? AND value > ?",
                                   (run_id, float(threshold))).fetchone()[0])

    def draw_values(self, run_id: int, idx: Sequence[int]) -> dict[int, float]:
        """The first (successful) values of the given draws, those of flagged workers left out."""
        out: dict[int, float] = {}
        want = sorted({int(i) for i in idx})
        keep = self._unflagged(run_id)
        for i in range(0, len(want), 500):
            chunk = want[i:i + 500]
            out.update(self.db.execute(f"SELECT idx, value FROM measurements WHERE run_id=? AND status='ok' AND "
                                       f"{keep} AND idx IN ({','.join('?' * len(chunk))})", (run_id, *chunk)))
        return out

    def top_draws(self, run_id: int, at_least: float):
        """(draws, values) of the values `values` gives that are at least `at_least`, in draw order
        (numpy arrays); only where value_summary gives a summary."""
        import numpy as np

        top = self._top_pack(run_id)
        # from the pack where it holds every such value: its smallest below at_least, or the run's every value
        if top is not None and top.values.size and (top.values[-1] < at_least or top.values.size >= top.ok):
            keep = top.values >= at_least
            order = np.argsort(top.draws[keep], kind="stable")
            return top.draws[keep][order], top.values[keep][order]
        rows = self.db.execute("SELECT idx, value FROM measurements WHERE run_id=? AND value >= ? ORDER BY idx",
                               (run_id, float(at_least))).fetchall()
        a = np.array(rows, dtype=float).reshape(-1, 2)
        return a[:, 0].astype(np.int64), a[:, 1].copy()

    def task_count(self, run_id: int) -> int | None:
        """How many tasks the run places: the length of its first draw's placement (a PU per task); None
        while it holds no measurement."""
        row = self.db.execute("SELECT assignment FROM measurements WHERE run_id=? ORDER BY idx LIMIT 1",
                              (run_id,)).fetchone()
        return None if row is None else len(json.loads(row[0]))

    def values(self, run_id: int, limit: int | None = None) -> list[float]:
        """Successful values in draw order (failures are never values), without
        the values of flagged workers (excluded_count says how many those are)."""
        q = self._ok_values("value", run_id)
        rows = self.db.execute(q + (" LIMIT ?" if limit else ""), (run_id, limit) if limit else (run_id,))
        return [r[0] for r in rows]

    def _ok_values(self, columns: str, run_id: int) -> str:
        """The query of a run's successful values not left out, in draw order (one parameter: run_id)."""
        return (f"SELECT {columns} FROM measurements WHERE run_id=? AND status='ok' AND "
                f"{self._unflagged(run_id)} ORDER BY idx")

    def excluded_count(self, run_id: int) -> int:
        """Successful values left out because their worker is flagged."""
        if not self._has_flagged(run_id):
            return 0
        return int(self.db.execute(f"SELECT COUNT(*) FROM measurements WHERE run_id=? AND status='ok' AND NOT "
                                   f"{self._unflagged(run_id)}", (run_id,)).fetchone()[0])

    def values_by_worker(self, run_id: int) -> dict[str, list[float]]:
        """Successful values of a cluster run by worker address, flagged ones included
        (values measured in-process are not listed)."""
        if not self._workers:
            return {}
        out: dict[str, list[float]] = {}
        for w, v in self.db.execute("SELECT worker, value FROM measurements WHERE run_id=? AND status='ok' AND "
                                    "worker IS NOT NULL ORDER BY idx", (run_id,)):
            out.setdefault(w, []).append(v)
        return out

    # cluster workers and their reference measurements -----------------------
    # sittings: the `assign sample` commands that measured into a run --------
    def add_sitting(self, run_id: int, first_idx: int, ground: dict) -> int:
        """A sitting of a measured run, starting at draw first_idx; its number."""
        with self.db:
            seq = self.db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM sittings WHERE run_id=?",
                                  (run_id,)).fetchone()[0]
            self.db.execute("INSERT INTO sittings (run_id, seq, first_idx, started, ground) VALUES (?,?,?,?,?)",
                            (run_id, seq, first_idx, _now(), json.dumps(ground, sort_keys=True)))
        return int(seq)

    def sittings(self, run_id: int) -> list[tuple[int, int, str, dict]]:
        """(seq, first draw, started, ground) of a run's sittings, in order."""
        if not self._sittings:
            return []
        return [(int(q), int(i), t, json.loads(g)) for q, i, t, g in self.db.execute(
            "SELECT seq, first_idx, started, ground FROM sittings WHERE run_id=? ORDER BY seq", (run_id,))]

    def indexed_values(self, run_id: int) -> list[tuple[int, float]]:
        """(draw, value) of the values `values` gives, in the same order."""
        return [(int(i), v) for i, v in self.db.execute(self._ok_values("idx, value", run_id), (run_id,))]

    def value_workers(self, run_id: int) -> list[tuple[int, str]]:
        """(draw, worker address) of the values `values` gives that a cluster worker measured."""
        if not self._workers:
            return []
        return [(int(i), w) for i, w in self.db.execute(self._ok_values("idx, worker", run_id), (run_id,))
                if w is not None]

    def add_worker(self, run_id: int, address: str, name: str, host: str, ground: dict | None = None) -> None:
        """A worker of a cluster run, once (a worker seen again keeps its row, flag and ground);
        `ground`: what it measures on (ground.ground on the worker)."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO workers (run_id, address, name, host, first_seen, ground) "
                            "VALUES (?,?,?,?,?,?)", (run_id, address, name, host, _now(),
                                                     None if ground is None else json.dumps(ground, sort_keys=True)))

    def worker_grounds(self, run_id: int) -> dict[str, dict | None]:
        """Each worker's ground by address, in order of appearance (None: not recorded)."""
        if not self._worker_grounds:
            return {a: None for a, *_ in self.workers(run_id)}
        return {a: None if g is None else json.loads(g) for a, g in self.db.execute(
            "SELECT address, ground FROM workers WHERE run_id=? ORDER BY first_seen, address", (run_id,))}

    def add_sitting_worker(self, run_id: int, seq: int, address: str, ground: dict) -> None:
        """What a cluster worker measures on in sitting `seq`, once per sitting."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO sitting_workers (run_id, seq, address, ground) VALUES (?,?,?,?)",
                            (run_id, seq, address, json.dumps(ground, sort_keys=True)))

    def sitting_worker_grounds(self, run_id: int) -> dict[tuple[int, str], dict]:
        """(sitting, worker address) -> what the worker measured on in that sitting."""
        if not self._sitting_workers:
            return {}
        return {(int(q), a): json.loads(g) for q, a, g in self.db.execute(
            "SELECT seq, address, ground FROM sitting_workers WHERE run_id=?", (run_id,))}

    def flag_worker(self, run_id: int, address: str, why: str) -> None:
        """Leave out a worker's values (all of them in this run, before and after), saying why."""
        with self.db:
            self.db.execute("UPDATE workers SET flagged=?, flagged_at=? WHERE run_id=? AND address=? AND "
                            "flagged IS NULL", (why, _now(), run_id, address))

    def workers(self, run_id: int) -> list[tuple[str, str, str, str | None]]:
        """(address, name, host, flagged reason or None) of a run's workers, in order of appearance."""
        if not self._workers:
            return []
        return list(self.db.execute("SELECT address, name, host, flagged FROM workers WHERE run_id=? "
                                    "ORDER BY first_seen, address", (run_id,)))

    def add_references(self, run_id: int, worker: str,
                       rows: Sequence[tuple[int, int, int, str, float | None, str, str | None]]) -> None:
        """(seq, at_idx, worker_draws, assignment JSON, value, status, reason) reference
        measurements of one worker, in one transaction."""
        now = _now()
        with self.db:
            self.db.executemany(
                "INSERT INTO reference_measurements (run_id, worker, seq, at_idx, worker_draws, assignment, value, "
                "status, reason, measured_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [(run_id, worker, *r, now) for r in rows])

    def references(self, run_id: int) -> dict[str, list[float]]:
        """Successful reference values by worker address, in the order measured."""
        if not self._workers:
            return {}
        out: dict[str, list[float]] = {}
        for w, v in self.db.execute("SELECT worker, value FROM reference_measurements WHERE run_id=? AND "
                                    "status='ok' ORDER BY rowid", (run_id,)):
            out.setdefault(w, []).append(v)
        return out

    def measurements(self, run_id: int) -> list[Measurement]:
        rows = self.db.execute(
            "SELECT idx, assignment, value, status, reason, extra FROM measurements WHERE run_id=? ORDER BY idx",
            (run_id,))
        return [Measurement(r[0], json.loads(r[1]), r[2], r[3], r[4], json.loads(r[5] or "{}")) for r in rows]

    def best(self, run_id: int) -> Measurement | None:
        r = self.db.execute(
            "SELECT idx, assignment, value, status, reason, extra FROM measurements "
            f"WHERE run_id=? AND status='ok' AND {self._unflagged(run_id)} ORDER BY value DESC, idx LIMIT 1",
            (run_id,)).fetchone()
        return None if r is None else Measurement(r[0], json.loads(r[1]), r[2], r[3], r[4], json.loads(r[5] or "{}"))

    def failures(self, run_id: int) -> list[tuple[int, str]]:
        return list(self.db.execute(
            "SELECT idx, reason FROM measurements WHERE run_id=? AND status='failed' ORDER BY idx", (run_id,)))

    # baselines ------------------------------------------------------------
    def baseline(self, run_id: int, name: str) -> Measurement | None:
        r = self.db.execute("SELECT assignment, value, status, reason, extra FROM baselines "
                            "WHERE run_id=? AND name=?", (run_id, name)).fetchone()
        return None if r is None else Measurement(-1, json.loads(r[0]), r[1], r[2], r[3], json.loads(r[4] or "{}"))

    def baseline_values(self, run_id: int) -> list[tuple[list[int], float]]:
        """(assignment, value) of every baseline measurement of the run that succeeded."""
        return [(json.loads(a), v) for a, v in self.db.execute(
            "SELECT assignment, value FROM baselines WHERE run_id=? AND status='ok'", (run_id,))]

    def add_baseline(self, run_id: int, name: str, assignment: list[int], value: float | None, status: str,
                     reason: str | None, extra: dict) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO baselines (run_id, name, assignment, value, status, reason, extra, measured_at) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (run_id, name, json.dumps(assignment), value, status, reason,
                 json.dumps(extra, separators=(",", ":")), _now()))

    # repeated measurements: planned noise repetitions and selection rounds ----
    def add_repeats(self, run_id: int, rows: Sequence[tuple[int, str, int | None, int | None, int, float | None,
                                                            str, str | None, dict]],
                    worker: str | None = None) -> list[int]:
        """Store (idx, purpose, selection, round, draws, value, status, reason, extra) rows in
        one transaction, numbered after the run's last; their numbers (seq)."""
        now = _now()
        with self.db:
            first = self.db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM repeats WHERE run_id=?",
                                    (run_id,)).fetchone()[0]
            self.db.executemany(
                "INSERT INTO repeats (run_id, seq, idx, purpose, selection, round, draws, value, status, reason, "
                "extra, measured_at, worker) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(run_id, first + i, idx, purpose, sel, rnd, draws, value, status, reason, _COMPACT.encode(extra),
                  now, worker) for i, (idx, purpose, sel, rnd, draws, value, status, reason, extra) in
                 enumerate(rows)])
        return list(range(first, first + len(rows)))

    def _repeats_pack(self, run_id: int):
        """The run's 'repeats' pack (packs.py), where it has one and no flagged worker."""
        flagged = self.__dict__.setdefault("_flagged_runs", {})
        if not self.readonly or run_id not in flagged:  # a writer may flag a worker between two reads
            flagged[run_id] = self._has_flagged(run_id)
        if not self._repeats or flagged[run_id]:
            return None
        # read once: the repetitions up to its last seq never change, those after it are read as rows
        memo = self.__dict__.setdefault("_repeat_packs", {})
        if run_id not in memo:
            from .packs import read_repeats

            memo[run_id] = read_repeats(self.db, run_id)
        return memo[run_id]

    def repeat_counts(self, run_id: int) -> dict[str, int]:
        """purpose -> how many repeated measurements the run holds (failures included)."""
        if not self._repeats:
            return {}
        pack = self._repeats_pack(run_id)
        q = f"SELECT purpose, COUNT(*) FROM repeats WHERE run_id=? AND {self._unflagged(run_id)}"
        if pack is None:
            return {p: int(c) for p, c in self.db.execute(q + " GROUP BY purpose", (run_id,))}
        out = dict(pack.counts)
        for p, c in self.db.execute(q + " AND seq > ? GROUP BY purpose", (run_id, pack.upto)):
            out[p] = out.get(p, 0) + int(c)
        return out

    def search_counts(self, run_id: int) -> tuple[int, int]:
        """(search measurements, selection rounds of found placements) the run holds, failures included."""
        if not self._searches:
            return 0, 0
        a, b = self.db.execute("SELECT COALESCE(SUM(selection IS NULL), 0), COALESCE(SUM(selection IS NOT NULL), 0) "
                               "FROM search_values WHERE run_id=?", (run_id,)).fetchone()
        return int(a), int(b)

    def next_repeat_seq(self, run_id: int) -> int:
        """The number (seq) the run's next repeated measurement gets."""
        if not self._repeats:
            return 0
        return int(self.db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM repeats WHERE run_id=?",
                                    (run_id,)).fetchone()[0])

    def repeats(self, run_id: int, purpose: str | None = None, selection: int | None = None) -> list[Repeat]:
        """A run's repeated measurements in order (failures included, status says), those of
        flagged cluster workers left out."""
        if not self._repeats:
            return []
        q = ("SELECT seq, idx, purpose, selection, round, draws, value, status, reason, extra FROM repeats "
             f"WHERE run_id=? AND {self._unflagged(run_id)}")
        params: list = [run_id]
        if purpose is not None:
            q += " AND purpose=?"
            params.append(purpose)
        if selection is not None:
            q += " AND selection=?"
            params.append(selection)
        return [Repeat(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], json.loads(r[9] or "{}"))
                for r in self.db.execute(q + " ORDER BY seq", params)]

    def repeat_values(self, run_id: int, purposes: Sequence[str], max_draws: int | None = None
                      ) -> list[tuple[int, float]]:
        """(draw, value) of the run's successful repeated measurements of these purposes, in order,
        those of flagged cluster workers left out; `max_draws`: only those made while the run held at
        most that many draws.  What `repeats` gives, without the rows' backend data."""
        idx, value = self.repeat_arrays(run_id, purposes, max_draws)
        return list(zip(idx.tolist(), value.tolist()))

    def repeat_arrays(self, run_id: int, purposes: Sequence[str], max_draws: int | None = None):
        """repeat_values's draws and values as two numpy arrays: from the run's pack (packs.py) and the
        rows after it, where it has one (50,000 rows at a million draws cost more than the estimate's
        arithmetic)."""
        import numpy as np

        if not self._repeats or not purposes:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=float)
        pack = self._repeats_pack(run_id)
        q = (f"SELECT idx, value FROM repeats WHERE run_id=? AND status='ok' AND {self._unflagged(run_id)} "
             f"AND purpose IN ({','.join('?' * len(purposes))})")
        params: list = [run_id, *purposes]
        if max_draws is not None:
            q += " AND draws <= ?"
            params.append(int(max_draws))
        if pack is not None:
            q += " AND seq > ?"
            params.append(pack.upto)
        rows = self.db.execute(q + " ORDER BY seq", params).fetchall()
        idx = np.array([r[0] for r in rows], dtype=np.int64)
        value = np.array([r[1] for r in rows], dtype=float)
        if pack is None:
            return idx, value
        from .packs import PURPOSES

        # every packed repetition where all its purposes are asked for (no mask to build over 50,000)
        keep = np.ones(pack.idx.size, dtype=bool) if set(PURPOSES) <= set(purposes) else \
            np.isin(pack.purpose, [PURPOSES.index(p) for p in purposes if p in PURPOSES])
        if max_draws is not None:
            keep &= pack.draws <= int(max_draws)
        return np.concatenate([pack.idx[keep], idx]), np.concatenate([pack.value[keep], value])

    def measurement(self, run_id: int, idx: int) -> Measurement | None:
        r = self.db.execute("SELECT idx, assignment, value, status, reason, extra FROM measurements "
                            "WHERE run_id=? AND idx=?", (run_id, idx)).fetchone()
        return None if r is None else Measurement(r[0], json.loads(r[1]), r[2], r[3], r[4], json.loads(r[5] or "{}"))

    def assignments(self, run_id: int, idx: Sequence[int]) -> dict[int, list[int]]:
        """The placements (PU os_index per task) of the given draws."""
        draws: list[int] = []
        texts: list[str] = []
        want = sorted({int(i) for i in idx})
        packed: dict[int, list[int]] = {}
        pack = self._repeats_pack(run_id) if self._repeats and want else None
        if pack is not None and pack.placed.size:  # the re-measured draws' placements, from their pack
            import numpy as np

            w = np.array(want, dtype=np.int64)
            at = np.minimum(np.searchsorted(pack.placed, w), pack.placed.size - 1)
            hit = pack.placed[at] == w
            packed = dict(zip(w[hit].tolist(), pack.placement[at[hit]].tolist()))
            want = w[~hit].tolist()
        for i in range(0, len(want), 500):
            chunk = want[i:i + 500]
            for j, a in self.db.execute(f"SELECT idx, assignment FROM measurements WHERE run_id=? AND idx IN "
                                        f"({','.join('?' * len(chunk))})", (run_id, *chunk)):
                draws.append(int(j))
                texts.append(a)
        # one JSON document for all of them: a decoder call per placement costs more than the lists
        out = dict(zip(draws, json.loads("[" + ",".join(texts) + "]")))
        out.update(packed)
        return out

    # selections (assign best) ------------------------------------------------
    def add_selection(self, run_id: int, params: dict) -> int:
        with self.db:
            sid = self.db.execute("SELECT COALESCE(MAX(id) + 1, 1) FROM selections WHERE run_id=?",
                                  (run_id,)).fetchone()[0]
            self.db.execute("INSERT INTO selections (run_id, id, params, created) VALUES (?,?,?,?)",
                            (run_id, sid, json.dumps(params, sort_keys=True), _now()))
        return int(sid)

    def finish_selection(self, run_id: int, sid: int, result: dict) -> None:
        with self.db:
            self.db.execute("UPDATE selections SET result=?, finished=? WHERE run_id=? AND id=? AND result IS NULL",
                            (json.dumps(result, default=_json_default), _now(), run_id, sid))

    def selections(self, run_id: int) -> list[tuple[int, dict, dict | None]]:
        """(id, params, result or None while unfinished) of a run's selections, in order."""
        if not self._repeats:
            return []
        return [(int(i), json.loads(p), None if r is None else json.loads(r)) for i, p, r in self.db.execute(
            "SELECT id, params, result FROM selections WHERE run_id=? ORDER BY id", (run_id,))]

    # searches (assign search, assign best) ------------------------------------
    def add_search(self, run_id: int, sampler: str, params: dict) -> int:
        with self.db:
            sid = self.db.execute("SELECT COALESCE(MAX(id) + 1, 1) FROM searches WHERE run_id=?",
                                  (run_id,)).fetchone()[0]
            self.db.execute("INSERT INTO searches (run_id, id, sampler, params, created) VALUES (?,?,?,?,?)",
                            (run_id, sid, sampler, json.dumps(params, sort_keys=True), _now()))
        return int(sid)

    def finish_search(self, run_id: int, sid: int, result: dict) -> None:
        with self.db:
            self.db.execute("UPDATE searches SET result=?, finished=? WHERE run_id=? AND id=? AND result IS NULL",
                            (json.dumps(result, default=_json_default), _now(), run_id, sid))

    def searches(self, run_id: int) -> list[tuple[int, str, dict, dict | None]]:
        """(id, sampler, params, result or None while unfinished) of a run's searches, in order."""
        if not self._searches:
            return []
        return [(int(i), s, json.loads(p), None if r is None else json.loads(r)) for i, s, p, r in self.db.execute(
            "SELECT id, sampler, params, result FROM searches WHERE run_id=? ORDER BY id", (run_id,))]

    def add_search_values(self, run_id: int, sid: int,
                          rows: Sequence[tuple[list[int], int | None, int | None, float | None, str, str | None,
                                               dict]]) -> list[int]:
        """Store (assignment, selection, round, value, status, reason, extra) rows of search sid in one
        transaction, numbered after its last; their numbers (seq)."""
        now = _now()
        with self.db:
            first = self.db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM search_values WHERE run_id=? AND "
                                    "search=?", (run_id, sid)).fetchone()[0]
            self.db.executemany(
                "INSERT INTO search_values (run_id, search, seq, assignment, selection, round, value, status, "
                "reason, extra, measured_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(run_id, sid, first + i, _COMPACT.encode([int(c) for c in a]), sel, rnd, value, status, reason,
                  _COMPACT.encode(extra), now) for i, (a, sel, rnd, value, status, reason, extra) in enumerate(rows)])
        return list(range(first, first + len(rows)))

    def next_search_seq(self, run_id: int, sid: int) -> int:
        """The number (seq) search sid's next measurement gets."""
        return int(self.db.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM search_values WHERE run_id=? AND "
                                   "search=?", (run_id, sid)).fetchone()[0])

    def search_values(self, run_id: int, sid: int | None = None, selection: int | None = None
                      ) -> list[tuple[int, int, list[int], int | None, int | None, float | None, str]]:
        """(search, seq, assignment, selection, round, value, status) rows in order: one search's, or
        every search's; `selection`: only that selection's rounds."""
        if not self._searches:
            return []
        q = "SELECT search, seq, assignment, selection, round, value, status FROM search_values WHERE run_id=?"
        params: list = [run_id]
        if sid is not None:
            q += " AND search=?"
            params.append(sid)
        if selection is not None:
            q += " AND selection=?"
            params.append(selection)
        return [(int(a), int(b), json.loads(c), d, e, f, g)
                for a, b, c, d, e, f, g in self.db.execute(q + " ORDER BY search, seq", params)]

    # ground truth: every distinct placement measured in rounds (assign enumerate --reps) ----
    def find_or_create_truth(self, *, workload: str, instances: int, machine: str, topology: dict, backend: str,
                             kind: str, seed: int, allow_colocate: bool, params: dict) -> tuple[int, bool]:
        topo_json = json.dumps(topology, sort_keys=True, separators=(",", ":"))
        params_json = json.dumps(params, sort_keys=True)
        row = self.db.execute(
            "SELECT id FROM truths WHERE workload=? AND instances=? AND machine=? AND topology=? AND backend=? "
            "AND kind=? AND seed=? AND allow_colocate=? AND params=? ORDER BY id LIMIT 1",
            (workload, instances, machine, topo_json, backend, kind, seed, int(allow_colocate), params_json)
        ).fetchone()
        if row is not None:
            return int(row[0]), False
        with self.db:
            cur = self.db.execute(
                "INSERT INTO truths (workload, instances, machine, topology, backend, kind, seed, allow_colocate, "
                "params, created) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (workload, instances, machine, topo_json, backend, kind, seed, int(allow_colocate), params_json,
                 _now()))
        return int(cur.lastrowid), True

    def add_truth_values(self, truth_id: int, rows: Sequence[tuple[int, int, int, list[int], float | None, str,
                                                                   str | None]]) -> None:
        """(placement, round, multiplicity, assignment, value, status, reason) rows, one transaction."""
        now = _now()
        with self.db:
            self.db.executemany(
                "INSERT INTO truth_values (truth_id, placement, round, multiplicity, assignment, value, status, "
                "reason, measured_at) VALUES (?,?,?,?,?,?,?,?,?)",
                [(truth_id, p, r, m, json.dumps(a), v, st, why, now) for p, r, m, a, v, st, why in rows])

    def truth_values(self, truth_id: int) -> dict[tuple[int, int], float | None]:
        """(placement, round) -> value (None: failed) of a ground truth."""
        return {(int(p), int(r)): v for p, r, v in self.db.execute(
            "SELECT placement, round, value FROM truth_values WHERE truth_id=?", (truth_id,))}

    # estimates ------------------------------------------------------------
    def add_estimate(self, run_id: int, n: int, result: dict) -> None:
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO estimates (run_id, n, result, created) VALUES (?,?,?,?)",
                            (run_id, n, json.dumps(result, default=_json_default), _now()))

    def estimates(self, run_id: int) -> list[tuple[int, dict]]:
        return [(n, json.loads(r)) for n, r in
                self.db.execute("SELECT n, result FROM estimates WHERE run_id=? ORDER BY n", (run_id,))]


def _json_default(o):
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(o)


def json_rows(a, sep: str = ", ", tenths: bool = False) -> list[str]:
    """Each row of a non-negative integer array (B, K) as the inside of a JSON
    list ("3, 17, 42"), as json.dumps writes it, for a whole batch at once:
    digits by array arithmetic, one decode and one split, instead of one
    encoder call per row (what makes storing a million model draws take
    seconds, not a minute).  tenths: the integers are tenths, written with one
    decimal ("812345.6", json's text of round(x, 1))."""
    import numpy as np

    a = np.asarray(a, dtype=np.int64)
    b, k = a.shape
    if b == 0:
        return []
    if k == 0:
        return [""] * b
    if a.min() < 0:
        raise ValueError("json_rows writes non-negative integers only")
    whole = a // 10 if tenths else a
    ndig = len(str(int(whole.max())))
    pow10 = 10 ** np.arange(ndig - 1, -1, -1, dtype=np.int64)
    chars = ((whole[..., None] // pow10) % 10).astype(np.uint8) + ord("0")
    chars[(whole[..., None] < pow10) & (pow10 > 1)] = 0  # leading zeros
    parts = [chars]
    if tenths:
        parts += [np.full((b, k, 1), ord("."), np.uint8), ((a % 10)[..., None] + ord("0")).astype(np.uint8)]
    parts.append(np.broadcast_to(np.frombuffer(sep.encode(), np.uint8), (b, k, len(sep))))
    tok = np.concatenate(parts, axis=2).reshape(b, -1)
    if sep:
        tok[:, -len(sep):] = 0  # no separator after a row's last value
    tok = np.concatenate([tok, np.full((b, 1), ord("\n"), np.uint8)], axis=1).ravel()
    return tok[tok != 0].tobytes().decode("ascii").split("\n")[:-1]
