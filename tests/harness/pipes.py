"""Bench scripts and tools behave like Unix tools in a pipe: when their
reader goes away (`bench/x.py | head -1`) they end quietly."""
from __future__ import annotations

import functools
import os
import sys
from typing import Callable


def quiet_when_reader_goes(main: Callable[..., int | None]) -> Callable[..., int]:
    """Wrap a script's main: a BrokenPipeError on stdout ends it with status
    0 and no traceback (what was printed up to then was all the reader wanted)."""
    @functools.wraps(main)
    def wrapped(*a, **kw) -> int:
        try:
            rc = main(*a, **kw)
            sys.stdout.flush()
            return int(rc or 0)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail
            os.close(devnull)
            return 0
    return wrapped
