"""Running the installed `assign` command in tests."""
from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

ASSIGN = Path(sys.executable).parent / "assign"


def run_assign(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    if not ASSIGN.exists():
        raise AssertionError(f"{ASSIGN} not found: pip install -e assign[test] into this venv")
    return subprocess.run([str(ASSIGN), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def digest(path: Path) -> str:
    """Hash of everything a database holds (schema and rows, WAL included),
    to prove a command changed nothing."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return hashlib.sha256("\n".join(db.iterdump()).encode()).hexdigest()
    finally:
        db.close()
