"""What every test or benchmark needs around a program it starts: the
sanitizer settings that make a report fail the run, the one list of what a
sanitizer report looks like, and the outcome of a run (exit status,
statistics, output) with the check that it was clean."""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

# Any line holding one of these is a sanitizer report.  The tool names alone,
# not "ERROR: AddressSanitizer": a report does not always start with ERROR
# ("AddressSanitizer:DEADLYSIGNAL" comes first for a crash, "WARNING:
# AddressSanitizer failed to allocate" with allocator_may_return_null, a
# report cut short by a second signal), and none of our programs prints these
# words otherwise.  "runtime error:" is how UBSan starts every report.
SANITIZER_MARKS: tuple[str, ...] = (
    "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
    "ThreadSanitizer", "MemorySanitizer", "runtime error:",
)


def sanitizer_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a program under test: the caller's, plus sanitizer
    options that make the first report fail the run, where the caller (for
    example tools/test.sh) has not set its own."""
    env = dict(os.environ if base is None else base)
    # UBSan only reports by default; make a report fail the run.
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    # tools/test.sh sets detect_leaks=0 for the whole suite (DPDK's hugepage
    # bookkeeping looks like leaks); a lone run keeps LeakSanitizer on.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    return env


def sanitizer_reports(text: str) -> list[str]:
    """The lines of text that are part of a sanitizer report."""
    return [line for line in text.splitlines() if any(m in line for m in SANITIZER_MARKS)]


@dataclass
class Result:
    """One finished run: exit status, the statistics JSON it wrote (None when
    it wrote none), its output."""
    rc: int
    stats: dict[str, Any] | None
    stdout: str
    stderr: str
    require_stats: bool = False  # a clean run of this program always writes them
    cmd: tuple[str, ...] = ()

    @property
    def returncode(self) -> int:
        return self.rc

    def sanitizer_reports(self) -> list[str]:
        return sanitizer_reports(self.stderr) + sanitizer_reports(self.stdout)

    def assert_clean(self) -> None:
        reports = self.sanitizer_reports()
        assert not reports, f"sanitizer report ({' '.join(self.cmd)}):\n{self.stderr[-6000:]}"
        assert self.rc == 0, f"exit {self.rc} ({' '.join(self.cmd)}):\n{self.stderr[-4000:]}"
        if self.require_stats:
            assert self.stats is not None, f"no statistics written ({' '.join(self.cmd)})"
        if self.stats is not None and "hugepages" in self.stats and "--" in self.cmd:
            # the statistics say 4 KiB pages exactly when --no-huge was given or the fallback taken
            eal = self.cmd[:self.cmd.index("--")]
            no_huge = "--no-huge" in eal or "running with --no-huge" in self.stderr
            assert self.stats["hugepages"] is (not no_huge), \
                f"statistics say hugepages {self.stats['hugepages']} ({' '.join(self.cmd)}):\n{self.stderr[-2000:]}"


def read_stats(path: Path | None) -> dict[str, Any] | None:
    if path is None or not path.exists() or path.stat().st_size == 0:
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def finish(p: subprocess.Popen[str], stats: Path | None, timeout: float = 60,
           require_stats: bool = False) -> Result:
    """Wait for a program started with Popen (killing it after timeout
    seconds) and collect its result."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    args = p.args if isinstance(p.args, (list, tuple)) else [str(p.args)]
    return Result(p.returncode, read_stats(stats), out or "", err or "", require_stats,
                  tuple(map(str, args)))


def catches_signal(pid: int, sig: int) -> bool:
    """Whether process pid has installed a handler for sig (SigCgt in
    /proc/pid/status): before that, the signal's default action applies
    (SIGUSR1 would kill it)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except FileNotFoundError:
        pass
    return False


def wait_catches_signal(p: subprocess.Popen[str], sig: int, timeout: float = 120) -> None:
    """Wait until p handles sig (no fixed sleep: EAL start-up takes seconds
    on a loaded machine); fail if it exits or takes longer than timeout."""
    end = time.monotonic() + timeout
    while not catches_signal(p.pid, sig):
        assert p.poll() is None, f"exited ({p.returncode}) before handling signal {sig}"
        assert time.monotonic() < end, f"no handler for signal {sig} after {timeout} s"
        time.sleep(0.02)


def json_documents(text: str) -> list[Any]:
    """The JSON documents of a stream of them (as a program writes one per
    snapshot), in order."""
    dec, docs, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        d, i = dec.raw_decode(text, i)
        docs.append(d)
    return docs


F = TypeVar("F", bound=Callable[..., Any])


def die_with_parent() -> None:
    """preexec_fn for a program a script starts in a session of its own
    (start_new_session=True, so that a terminal's Ctrl-C reaches the script
    only): the kernel kills the program when the script dies, however it
    dies (SIGKILL, a timeout's SIGTERM), instead of leaving it polling a
    core.  Linux's PR_SET_PDEATHSIG; nothing elsewhere."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def broken_pipe_safe(main: F) -> F:
    """Wrap a script's main so that it behaves like a Unix tool when its
    reader goes away (`bench/x.py | head -1`): no traceback, exit status
    128 + SIGPIPE as a shell reports for a command killed by it."""
    @functools.wraps(main)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = main(*args, **kwargs)
            sys.stdout.flush()
            return result
        except BrokenPipeError:
            # Python flushes stdout again at exit; point it at /dev/null so
            # that flush cannot raise a second time.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(128 + signal.SIGPIPE)
    return wrapper  # type: ignore[return-value]
