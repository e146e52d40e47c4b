"""What every end-to-end test needs around a DPDK program it starts: the
sanitizer settings that make a report fail the run, and the outcome of a
run (exit status, statistics, output) with the check that it was clean."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "UndefinedBehaviorSanitizer")


def sanitizer_env() -> dict[str, str]:
    env = dict(os.environ)
    # UBSan only reports by default; make a report fail the run.
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    return env


@dataclass
class Result:
    rc: int
    stats: dict[str, Any] | None
    stdout: str
    stderr: str
    require_stats: bool = False  # a clean run of this program always writes them

    def assert_clean(self) -> None:
        for mark in SANITIZER_MARKS:
            assert mark not in self.stderr, f"sanitizer report:\n{self.stderr[-4000:]}"
        assert self.rc == 0, f"exit {self.rc}:\n{self.stderr[-4000:]}"
        if self.require_stats:
            assert self.stats is not None, "no statistics written"
