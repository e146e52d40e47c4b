"""Sanitizer settings for the programs the tests start, the one list of
what a sanitizer report looks like, and the result of a run."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

# Any line naming a sanitizer is a report (ASan's "ERROR: AddressSanitizer",
# its "AddressSanitizer:DEADLYSIGNAL" and "WARNING: AddressSanitizer ..."
# lines, LeakSanitizer's, UBSan's "runtime error:" and its summary): the
# strictest reading, so no kind of report slips through.
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                     "runtime error:")


def sanitizer_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment with the sanitizers told to stop at the first report
    (tools/test.sh sets the same; a test run by hand gets them here)."""
    env = dict(os.environ if base is None else base)
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:halt_on_error=1")
    return env


def sanitizer_reports(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in SANITIZER_MARKERS)]


@dataclass
class Result:
    """One run: exit status, the statistics JSON it wrote (None if none),
    its output, and what else the caller read back (flow dumps, logs)."""

    rc: int
    stats: dict[str, Any] | None
    stdout: str
    stderr: str
    require_stats: bool = False  # a clean run of this program always writes them
    extra: Any = None

    @property
    def returncode(self) -> int:
        return self.rc

    def assert_clean(self) -> None:
        reports = sanitizer_reports(self.stderr)
        assert not reports, f"sanitizer report:\n{self.stderr[-6000:]}"
        assert self.rc == 0, f"exit {self.rc}:\n{self.stderr[-4000:]}"
        if self.require_stats:
            assert self.stats is not None, "no statistics written"
