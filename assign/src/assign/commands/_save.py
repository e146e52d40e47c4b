"""Writing a command's result file without losing what it measured.

The path was checked at parse time (_args.output_file); what can still go
wrong after a long measurement (the disk full, the directory removed
meanwhile) sends the result to a file in the temporary directory instead,
named on stderr.  A partial write never replaces an existing file."""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import TextIO


def save(path: str, write: Callable[[TextIO], None], what: str) -> bool:
    """Write `what` to path through write(file); False (and where it went
    instead, on stderr) when path could not take it.  A new or regular file
    is written beside and renamed over; a symbolic link, a device or a pipe
    (--json /dev/stdout) is written through, never replaced."""
    direct = os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path))
    tmp = path if direct else f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            write(f)
        if not direct:
            os.replace(tmp, path)
        return True
    except OSError as e:
        if not direct:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        reason = e.strerror or str(e)
    suffix = os.path.splitext(path)[1] or ".txt"
    fd, alt = tempfile.mkstemp(prefix=f"assign-{what.replace(' ', '-')}-", suffix=suffix)
    with os.fdopen(fd, "w") as f:
        write(f)
    print(f"error: cannot write the {what} to {path} ({reason}); written to {alt} instead", file=sys.stderr)
    return False


def save_figure(draw: Callable[[str], None], path: str) -> bool:
    """draw(path) renders a figure; a failure is reported, not raised, since
    the figures come after the results they show were printed or saved."""
    try:
        draw(path)
        return True
    except (OSError, ValueError) as e:
        print(f"error: cannot write the figure {path}: {e}", file=sys.stderr)
        return False
