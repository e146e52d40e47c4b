"""Running an app binary on one placement and reading its statistics back.

Two ways, same result (`Outcome`):

* `ProcessRunner`: one process per placement (contract 3): start DPDK, warm
  up, measure, tear down.  Always available; pays EAL start-up and
  tear-down every time.
* `ServeRunner`: one persistent process (`<app> ... -- --serve`) that reads
  one placement JSON per line on stdin and answers one statistics JSON line
  per placement on stdout, re-pinning its worker lcores in between.  Only
  the warm-up and the window are paid per placement.  Used when the binary's
  --help lists --serve; restarted after any failure.

Wall-clock time around each placement is measured here, so the overhead
(everything but the warm-up and the window the app reports) is a measured
figure in either mode.
"""
from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

STDERR_TAIL = 1500  # characters of the app's stderr kept in a failure reason
SETPRIV = shutil.which("setpriv")  # util-linux (essential in Debian)


def die_with_assign(cmd: list[str]) -> list[str]:
    """cmd, started so that it gets SIGTERM when this process dies, even by
    SIGKILL, which runs no finalizer: an app measuring a long window, or a
    stressor, would otherwise go on alone.  setpriv sets the parent-death
    signal and execs cmd (no Python code runs between fork and exec).  The
    signal follows the thread that forked: only the main thread asks for it,
    so that a worker thread that ends does not take a live app with it.  A
    cmd that cannot be executed is left to Popen, whose error names why."""
    if (SETPRIV is None or threading.current_thread() is not threading.main_thread()
            or not os.access(cmd[0], os.X_OK)):
        return cmd
    return [SETPRIV, "--pdeathsig", "TERM", *cmd]


@dataclass
class Outcome:
    """What one attempt produced: statistics, or why there are none."""

    stats: dict | None
    wall_s: float                 # measured around the attempt (start to stats in hand)
    error: str | None = None      # set when the attempt failed
    rc: int | None = None
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)
    client: dict | None = None    # a client workload: {"client": its JSON line, "check": the check's}


def describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


def stderr_tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    lines = [ln for ln in text.strip().splitlines() if not ln.startswith("TELEMETRY:")]
    return " | ".join(lines)[-STDERR_TAIL:]


def hugetlbfs_dirs() -> list[str]:
    """Every hugetlbfs mount (/dev/hugepages on Debian; a test bed may use another)."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return ["/dev/hugepages"]
    return [f[1] for f in (ln.split() for ln in lines) if len(f) > 2 and f[2] == "hugetlbfs"]


def cleanup_prefix(prefix: str) -> None:
    """Files a DPDK process leaves behind under its --file-prefix once it has
    ended, killed or not: DPDK 22.11 keeps a hugepage file per page it used
    (for secondary processes), so the pages stay taken until the next DPDK
    start clears them, hundreds of MB per instance of a replayed capture."""
    for d in hugetlbfs_dirs():
        try:
            for name in os.listdir(d):
                if name.startswith(prefix + "map_"):
                    try:
                        os.unlink(os.path.join(d, name))
                    except OSError:
                        pass
        except OSError:
            pass
    shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


def port_started(prefix: str, port: int = 0) -> bool:
    """Whether the DPDK process of --file-prefix `prefix` has started port
    `port`, as its telemetry socket reports (/ethdev/info)."""
    tel = Path("/var/run/dpdk") / prefix / "dpdk_telemetry.v2"
    if not tel.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(2.0)
            s.connect(str(tel))
            s.recv(4096)  # greeting: version, pid, max_output_len
            s.send(f"/ethdev/info,{port}".encode())
            info = json.loads(s.recv(16384))["/ethdev/info"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return isinstance(info, dict) and info.get("dev_started") == 1


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not wait long
        pass


@dataclass
class RunSpec:
    """Everything but the placement: binary, EAL options, window options."""

    binary: Path
    eal: list[str]           # EAL options (vdevs, --no-pci, log level); --file-prefix is added per runner
    window: list[str]        # --packets N | --duration S, and --warmup S
    app_args: list[str]      # runtime and app options (--mbufs, --mbuf-size, ...)
    file_prefix: str
    workdir: Path


class ProcessRunner:
    mode = "process"

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.n = 0

    def run(self, doc: dict, timeout: float) -> Outcome:
        s = self.spec
        self.n += 1
        pfile = s.workdir / "placement.json"
        sfile = s.workdir / "stats.json"
        efile = s.workdir / "stderr.txt"
        pfile.write_text(json.dumps(doc))
        if sfile.exists():
            sfile.unlink()
        cmd = [str(s.binary), *s.eal, "--file-prefix", s.file_prefix, "--",
               "--placement", str(pfile), *s.window, "--stats", str(sfile), *s.app_args]
        t0 = time.perf_counter()
        with efile.open("w") as err:
            try:
                proc = subprocess.Popen(die_with_assign(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=err, start_new_session=True)
            except OSError as e:  # e.g. the binary is being relinked: a failed attempt, not a crash of assign
                return Outcome(None, time.perf_counter() - t0, f"cannot start {s.binary}: {e.strerror}")
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                cleanup_prefix(s.file_prefix)
                return Outcome(None, time.perf_counter() - t0, f"hung: no result within the {timeout:g} s timeout "
                               f"(killed); stderr: {stderr_tail(efile) or '(empty)'}", None, True)
        wall = time.perf_counter() - t0
        cleanup_prefix(s.file_prefix)
        stats = None
        if sfile.exists():
            try:
                stats = json.loads(sfile.read_text())
            except ValueError as e:
                return Outcome(None, wall, f"statistics file {sfile} is not JSON ({e}); {describe_exit(rc)}", rc)
        # rc 2 = the accounting check failed (stats still written): judged by the backend from the stats
        if rc != 0 and not (rc == 2 and stats is not None):
            return Outcome(None, wall, f"{describe_exit(rc)}; stderr: {stderr_tail(efile) or '(empty)'}", rc)
        if stats is None:
            return Outcome(None, wall, f"{describe_exit(rc)} but no statistics written to {sfile}", rc)
        return Outcome(stats, wall, None, rc)

    def close(self) -> None:
        cleanup_prefix(self.spec.file_prefix)
        shutil.rmtree(self.spec.workdir, ignore_errors=True)


class ServeRunner:
    """A persistent app process fed placements one line at a time."""

    mode = "serve"
    START_GRACE_S = 30.0  # EAL start-up is not in the per-placement timeout

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.proc: subprocess.Popen | None = None
        self.errfile: Path = spec.workdir / "serve-stderr.txt"
        self.starts = 0
        self.start_s: list[float] = []  # measured start-up of each process (until its first answer)
        self._sel: selectors.DefaultSelector | None = None
        self._buf = b""
        self.exits: list[int | None] = []  # exit status of each process ended by end of input (None: killed)
        # per process ended by end of input: its "serve end" report (what its rx queues still held,
        # drained and counted after the last placement; runtime/README.md), None when it wrote none
        self.end_reports: list[dict | None] = []

    def _start(self) -> None:
        s = self.spec
        cmd = [str(s.binary), *s.eal, "--file-prefix", s.file_prefix, "--", "--serve", *s.window, *s.app_args]
        self._err = self.errfile.open("w")
        self.proc = subprocess.Popen(die_with_assign(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._err, start_new_session=True)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        self._buf = b""
        self.starts += 1

    def _stop(self, kill: bool) -> None:
        if self.proc is None:
            return
        if kill:
            kill_group(self.proc)
            cleanup_prefix(self.spec.file_prefix)
        else:
            try:
                self.proc.stdin.close()  # EOF: the app tears down and exits
                self.exits.append(self.proc.wait(timeout=30))
            except (OSError, subprocess.TimeoutExpired):
                self.exits.append(None)
                kill_group(self.proc)
                cleanup_prefix(self.spec.file_prefix)
            self._err.flush()
            self.end_reports.append(serve_end_report(self.errfile))
        if self._sel is not None:
            self._sel.close()
        self._err.close()
        cleanup_prefix(self.spec.file_prefix)  # the process has ended: its pages are free to take back
        self.proc = None

    def _readline(self, deadline: float) -> bytes | None:
        """One line from the app, or None on EOF; raises TimeoutError past the deadline."""
        assert self.proc is not None and self._sel is not None
        while b"\n" not in self._buf:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError
            if not self._sel.select(timeout=left):
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def run(self, doc: dict, timeout: float) -> Outcome:
        t0 = time.perf_counter()
        fresh = self.proc is None
        if fresh:
            try:
                self._start()
            except OSError as e:
                self._err.close()
                self.proc = None
                return Outcome(None, time.perf_counter() - t0, f"cannot start {self.spec.binary}: {e.strerror}")
        assert self.proc is not None
        notes = [f"serve process #{self.starts} started for this placement"] if fresh else []
        try:
            self.proc.stdin.write((json.dumps(doc) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            pass  # it died: the read below sees EOF and says why
        deadline = t0 + timeout + (self.START_GRACE_S if fresh else 0.0)
        try:
            while True:
                line = self._readline(deadline)
                if line is None or line.lstrip().startswith(b"{"):
                    break
                if line.strip():  # not an answer: something the app printed, kept with the result
                    notes.append("app stdout: " + line.decode(errors="replace")[:200])
        except TimeoutError:
            self._stop(kill=True)
            return Outcome(None, time.perf_counter() - t0,
                           f"hung: no statistics within the {timeout:g} s timeout (serve process killed); "
                           f"stderr: {stderr_tail(self.errfile) or '(empty)'}", None, True, notes)
        wall = time.perf_counter() - t0
        if line is None:
            rc = self.proc.wait()
            err = stderr_tail(self.errfile)
            self._stop(kill=True)
            return Outcome(None, wall, f"serve process ended: {describe_exit(rc)}; stderr: {err or '(empty)'}",
                           rc, False, notes)
        try:
            stats = json.loads(line)
        except ValueError as e:
            self._stop(kill=True)
            return Outcome(None, wall, f"serve process answered a line that is not JSON ({e}): "
                           f"{line[:200]!r}", None, False, notes)
        if not isinstance(stats, dict) or "error" in stats:
            why = stats.get("error") if isinstance(stats, dict) else stats
            return Outcome(None, wall, f"app refused the placement: {why}", None, False, notes)
        if fresh:
            self.start_s.append(wall)
        return Outcome(stats, wall, None, 0, False, notes)

    def stop(self) -> None:
        """End of input: the app tears down and exits (its exit status goes to `exits`)."""
        self._stop(kill=False)

    def restart(self) -> None:
        """After a failure: the next placement gets a fresh process."""
        self._stop(kill=True)

    def close(self) -> None:
        self._stop(kill=False)
        shutil.rmtree(self.spec.workdir, ignore_errors=True)


SERVE_END = "pipeplace: serve end: "


def serve_end_report(errfile: Path) -> dict | None:
    """The serve process's last words on stderr: what its ports' rx queues
    still held after the last placement (drained, counted, freed)."""
    try:
        lines = errfile.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for ln in reversed(lines):
        if ln.startswith(SERVE_END):
            try:
                rep = json.loads(ln[len(SERVE_END):])
            except ValueError:
                return None
            return rep if isinstance(rep, dict) else None
    return None


def serve_supported(binary: Path) -> bool:
    """Whether the app's --help lists the persistent --serve mode."""
    try:
        p = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--serve" in (p.stdout + p.stderr)


def workdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"assign-dpdk-{prefix}-"))
