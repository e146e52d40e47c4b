"""Work done beside the caller's: a function run in a forked process on another core, its result
pickled back when asked for.

`assign estimate` computes two independent estimates of one run, the paper's from the top of the single
values and the optimum of placement means with its certificate; at a million draws each takes about a
tenth of a second, and a command that waits for both in turn spends the sum (bench/assign.sh).  Forked
after the store is read, the child holds the values already (copy-on-write) and touches no database
connection (SQLite's rule: none is used across a fork); it ends with os._exit, so nothing of the
parent's (its buffered output, a store's finalizer) runs twice.  Where fork is missing, or the process
may use one CPU only, or the child dies or its result cannot come back, the function runs in the caller
when the result is asked for: the same result, later."""
from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Beside(Generic[T]):
    """fn's result when called (see beside); cancel() stops the child where the result is not wanted."""

    def __init__(self, fn: Callable[[], T], pid: int | None = None, r: int | None = None):
        self.fn, self.pid, self.r = fn, pid, r
        self.outcome: tuple | None = None

    def _collect(self) -> None:
        if self.pid is None:
            return
        with os.fdopen(self.r, "rb") as f:
            data = f.read()
        os.waitpid(self.pid, 0)
        self.pid = None
        try:
            self.outcome = pickle.loads(data) if data else None
        except Exception:  # noqa: BLE001 - cut short: the child died writing
            self.outcome = None

    def __call__(self) -> T:
        self._collect()
        if self.outcome is None:  # no child, or it died, or its outcome did not pickle: computed here
            return self.fn()
        kind, value = self.outcome
        if kind == "raised":
            raise value
        return value

    def cancel(self) -> None:
        if self.pid is not None:
            pid, self.pid = self.pid, None
            os.kill(pid, signal.SIGKILL)
            os.close(self.r)
            os.waitpid(pid, 0)

    def __del__(self) -> None:  # neither asked for nor cancelled: no child left behind
        try:
            self.cancel()
        except Exception:  # noqa: BLE001 - at exit, or gone already
            pass


def beside(fn: Callable[[], T]) -> Beside[T]:
    """Start fn() in a forked child; calling what it returns gives fn's result, or raises what it raised
    (an exception that pickles: its traceback stays in the child).  ASSIGN_SERIAL=1 in the environment:
    fn runs in the caller (bench/assign.sh measures both)."""
    if not hasattr(os, "fork") or _cpus() < 2 or os.environ.get("ASSIGN_SERIAL"):
        return Beside(fn)
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare (a limit on processes, memory): the caller's turn
        os.close(r)
        os.close(w)
        return Beside(fn)
    if pid == 0:  # the child: fn, its outcome down the pipe, and out without the parent's exit handlers
        code = 0
        try:
            os.close(r)
            try:
                out = ("ok", fn())
            except Exception as e:  # noqa: BLE001 - any: the parent raises it
                out = ("raised", e)
            try:
                data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - an outcome that does not pickle: the parent computes it
                data = b""
            with os.fdopen(w, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001 - interrupted, or the parent gone (a closed pipe)
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    return Beside(fn, pid, r)
