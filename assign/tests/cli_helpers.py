"""Running the installed `assign` command in tests."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ASSIGN = Path(sys.executable).parent / "assign"


def run_assign(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    if not ASSIGN.exists():
        raise AssertionError(f"{ASSIGN} not found: pip install -e assign[test] into this venv")
    return subprocess.run([str(ASSIGN), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def digest(path: Path) -> str:
    """Content hash of a database and its WAL, to prove a command changed nothing."""
    h = hashlib.sha256()
    for p in (path, Path(str(path) + "-wal")):
        h.update(p.read_bytes() if p.exists() else b"<absent>")
    return h.hexdigest()
