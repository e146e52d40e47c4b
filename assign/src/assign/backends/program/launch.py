"""Starting a program we did not write, and stopping everything it took.

A start is the workload file's steps in order (program_file.Step):
commands run to completion, and processes started and kept running (a
daemon such as ovsdb-server, and the placed process itself).  Every
process gets its own session (its group is killed if it does not stop)
and the parent-death signal (it goes when assign goes, even by SIGKILL).
`stop` ends them in reverse order: the placed process by its stop signal,
the others by SIGTERM, each killed after 10 s; it always runs, also after
a failed start.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..dpdk.runners import describe_exit, die_with_assign, kill_group
from .value import OutputLog

STOP_GRACE_S = 10.0


class StartError(RuntimeError):
    """A step failed or the program ended while starting: `step` says which (its index), `reason` why."""

    def __init__(self, step: int, reason: str):
        super().__init__(reason)
        self.step = step
        self.reason = reason


@dataclass
class Started:
    proc: subprocess.Popen
    command: list[str]
    placed: bool
    log: Path
    output: OutputLog | None = None
    stdin_open: bool = False


@dataclass
class Launch:
    """One start of the program (all its steps)."""

    steps: list[tuple[str, list[str], str | None, bool]]   # (kind, command, ready file, placed)
    env: dict[str, str]
    workdir: Path
    stdin_open: bool = False
    stop_signal: int = signal.SIGINT
    value_pattern: str | None = None
    ready_pattern: str | None = None
    timeout_s: float = 60.0
    started: list[Started] = field(default_factory=list)
    start_s: float = 0.0
    stop_s: float = 0.0
    exits: list[str] = field(default_factory=list)
    companions: list = field(default_factory=list)   # processes it runs with (pp-tgen): ended() says theirs too

    @property
    def placed(self) -> Started:
        return next(s for s in self.started if s.placed)

    @property
    def pid(self) -> int:
        return self.placed.proc.pid

    def start(self) -> None:
        """Every step in order; raises StartError (everything started so far is left to stop())."""
        t0 = time.perf_counter()
        for i, (kind, cmd, ready, placed) in enumerate(self.steps):
            log = self.workdir / f"step{i}-{Path(cmd[0]).name}.log"
            if kind == "run":
                self._run(i, cmd, log)
                continue
            # by its path: die_with_assign gives only an executable path the parent-death signal
            cmd = [shutil.which(cmd[0], path=self.env.get("PATH")) or cmd[0], *cmd[1:]]
            try:
                out = subprocess.PIPE if placed else log.open("ab")
                proc = subprocess.Popen(die_with_assign(cmd), stdin=subprocess.PIPE if placed and self.stdin_open
                                        else subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True, env=self.env, cwd=self.workdir)
            except OSError as e:
                raise StartError(i, f"cannot start {cmd[0]}: {e.strerror}") from None
            finally:
                if not placed:
                    out.close()
            s = Started(proc, cmd, placed, log, stdin_open=placed and self.stdin_open)
            if placed:
                s.output = OutputLog(proc.stdout, log, self.value_pattern, self.ready_pattern)
            self.started.append(s)
            if ready is not None:
                self._wait_file(i, s, Path(ready), t0)
        self.start_s = time.perf_counter() - t0

    def _run(self, i: int, cmd: list[str], log: Path) -> None:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s, env=self.env,
                               cwd=self.workdir)
        except subprocess.TimeoutExpired:
            raise StartError(i, f"{' '.join(cmd)}: no end within {self.timeout_s:g} s") from None
        except OSError as e:
            raise StartError(i, f"cannot run {cmd[0]}: {e.strerror}") from None
        log.write_text(p.stdout + p.stderr)
        if p.returncode != 0:
            raise StartError(i, f"{' '.join(cmd)}: {describe_exit(p.returncode)}: "
                                f"{(p.stderr or p.stdout).strip()[-400:]}")

    def _wait_file(self, i: int, s: Started, path: Path, t0: float) -> None:
        while not path.exists():
            if s.proc.poll() is not None:
                raise StartError(i, f"{s.command[0]} ended ({describe_exit(s.proc.returncode)}) before "
                                    f"{path} appeared: {self.last_words(s)}")
            if time.perf_counter() - t0 > self.timeout_s:
                raise StartError(i, f"{s.command[0]}: {path} did not appear within {self.timeout_s:g} s")
            time.sleep(0.01)

    def last_words(self, s: Started | None = None) -> str:
        s = s or self.placed
        if s.output is not None:
            s.output.join(1.0)
            return s.output.last_lines() or "(no output)"
        try:
            lines = s.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no output)"
        return " | ".join(lines[-8:]) or "(no output)"

    def ended(self) -> str | None:
        """None while every started process runs; else which ended and how, with its last output."""
        for s in self.started:
            rc = s.proc.poll()
            if rc is not None:
                return f"{Path(s.command[0]).name} (PID {s.proc.pid}) ended: {describe_exit(rc)}; its last " \
                       f"output: {self.last_words(s)}"
        for c in self.companions:
            why = c.ended()
            if why is not None:
                return why
        return None

    def stop(self) -> None:
        """Stop every started process, the last started first; never raises."""
        t0 = time.perf_counter()
        for s in reversed(self.started):
            sig = self.stop_signal if s.placed else signal.SIGTERM
            if s.proc.poll() is None:
                try:
                    s.proc.send_signal(sig)
                except OSError:
                    pass
                if s.stdin_open and s.proc.stdin is not None:
                    try:
                        s.proc.stdin.close()
                    except OSError:
                        pass
                try:
                    s.proc.wait(timeout=STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    pass
            if s.proc.poll() is None:  # it did not stop: it and what it started in its session
                kill_group(s.proc)
            if s.output is not None:
                s.output.join(2.0)
            if s.proc.stdout is not None:
                s.proc.stdout.close()
            if s.proc.stdin is not None and not s.proc.stdin.closed:
                try:
                    s.proc.stdin.close()
                except OSError:
                    pass
            self.exits.append(f"{Path(s.command[0]).name}: {describe_exit(s.proc.returncode)}"
                              if s.proc.returncode is not None else f"{Path(s.command[0]).name}: killed")
        self.started.clear()
        self.stop_s = time.perf_counter() - t0


def environment(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
