"""The exit status of the project's Python scripts, as every program's
(README.md, "Exit status"): 0 done, 1 a failure while running, 2 a usage
error.  argparse already exits 2 on a bad option; this adds the files a
script writes: a path the command line names that cannot be written is a
usage error, said in one line naming it, not a traceback."""
from __future__ import annotations

import errno
import sys
from collections.abc import Callable

# the path is wrong (no such directory, not a directory, not allowed); anything
# else (a full disk, an I/O error) is a failure while running
USAGE_ERRNOS = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.EROFS}


def run(main: Callable[[], int | None], prog: str) -> int:
    try:
        return main() or 0
    except OSError as e:
        where = e.filename if e.filename is not None else "output"
        print(f"{prog}: {where}: {e.strerror or e}", file=sys.stderr)
        return 2 if e.errno in USAGE_ERRNOS else 1
