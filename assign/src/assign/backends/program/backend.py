"""The dpdk backend's side for programs we did not write (launch "eal" or
"threads", assign/WORKLOADS.md): start the program, place its threads,
read every pin back, measure its value over a window, stop it.

Per placement:

  start (restart: every placement; repin: the first, and after a failure)
    -> ready: every task's thread exists (an eal task: its lcore's
       thread; a threads task: at least one thread whose name matches),
       the value's telemetry ports are started, the ready pattern seen
  -> place: eal at start through --lcores; a re-pinned program by
     sched_setaffinity of every thread of each task; a control interface
     by its own commands (OVS: pmd-cpu-mask, pmd-rxq-affinity)
  -> read back: every matched thread's affinity is exactly its task's CPU
     (a control interface's: polled until its threads are where it was
     told, at most 15 s)
  -> warm-up -> window (the value's counter at both ends) -> read back again
  -> stop (restart only) and its files removed (hugepage files, DPDK
     runtime directory of its --file-prefix, one prefix per process)

A program that ends, a pin that does not hold, a value that cannot be
read: the attempt fails with that reason, the program is stopped, and
the placement is tried once more with a fresh start; a second failure is
stored as a failed measurement, never as a value.

Before anything is stored (at construction) the program is started once
on the placement "tasks in order": a pattern that matches no thread, an
lcore the program never starts, a program that ends before its window, a
port its telemetry does not have are refused as a workload-file error
(exit status 2) naming the file, the key and the value.
"""
from __future__ import annotations

import signal
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from ...topology import Topology, format_contexts
from ...workload_file import WorkloadFileError
from ...workloads import Workload
from ..base import BackendError, MeasureRequest, RealRuns, Result
from ..dpdk.options import PAPER_PACKETS, REPO, DpdkOptions, default_build_dir, default_cache_dir
from ..dpdk.runners import cleanup_prefix, workdir
from ..dpdk.traffic import TrafficError, source_dir
from ..dpdk.tgen import default_tgen_contexts
from . import forms
from .launch import Launch, StartError, environment
from .tgen import ProgramTgen
from .threads import affinity, lcore_thread, matching, pin, threads
from .value import ReadError, Telemetry, command_number, output_value, telemetry_up

THREADS_SETTLE_S = 2.0   # no new thread for this long: a task still without its threads has none
CONTROL_SETTLE_S = 15.0  # a control interface applies a placement by itself: how long it may take
POLL_S = 0.01
MOVING_S = 5.0  # a fresh start's counter not moving after this: measured anyway (the window judges)


class Failed(RuntimeError):
    """One attempt failed: the reason is stored with the measurement."""


@dataclass
class _State:
    """What must be cleaned up, held apart from the backend so that its finalizer can run."""

    workdir: Path
    launch: Launch | None = None
    tgen: ProgramTgen | None = None   # value.from = "tgen": the generator of this start
    prefixes: list[str] = field(default_factory=list)
    cleanup: list[list[str]] = field(default_factory=list)   # the file's program.cleanup, filled in

    def stop(self) -> None:
        # pp-tgen stops sending before the program leaves, and leaves after it (memif: tgen.py)
        if self.tgen is not None:
            self.tgen.stop_sending()
        if self.launch is not None:
            self.launch.stop()
            self.launch = None
            for cmd in self.cleanup:
                _quietly(cmd, self.workdir)
        if self.tgen is not None:
            self.tgen.finish()
            self.tgen = None
        for p in self.prefixes:
            cleanup_prefix(p)
        self.prefixes.clear()

    def close(self) -> None:
        self.stop()
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)


class ProgramBackend(RealRuns):
    """Made by DpdkBackend(...) for a workload whose file says `launch` (backends/dpdk/backend.py), with
    its entry points: measure, measure_one, measure_placement, repeat, placement, describe, close."""

    name = "dpdk"
    kind = "measured"
    batch_size = 1

    def __init__(self, topo: Topology, workload: Workload, options: DpdkOptions | None = None,
                 allow_colocate: bool | None = None, tier: str | None = None, preflight: bool = True):
        if topo.name != "local":
            raise BackendError(f"backend dpdk runs the program on this machine; machine {topo.name} is not it "
                               f"(use --machine local)")
        self.topo = topo
        self.workload = workload
        self.spec = workload.spec
        self.prog = self.spec.program
        self.allow_colocate = allow_colocate
        self.opts = options or DpdkOptions()
        if self.opts.duration is None and self.opts.packets not in (None, PAPER_PACKETS):
            raise BackendError(f"--packets {self.opts.packets}: workload {workload.name} is a program we did not "
                               f"write; its window is a time (--duration S; default: its file's window.duration, "
                               f"{self.prog.duration_s:g} s)")
        if self.opts.traffic != "pcap":
            raise BackendError(f"--traffic {self.opts.traffic}: workload {workload.name} is a program whose "
                               f"traffic its file names")
        if self.opts.rules is not None:
            raise BackendError(f"--rules: workload {workload.name} reads no rule set")
        self.duration = self.opts.duration if self.opts.duration is not None else self.prog.duration_s
        self.warmup = self.opts.warmup if self.opts.duration is not None else self.prog.warmup_s
        self.contexts = [int(topo.os_index[i]) for i in range(topo.n_contexts)]
        self.runner = SimpleNamespace(mode="repin" if self.prog.repin else "restart")
        self.window_hook: Callable[[int, dict[int, int]], None] | None = None  # tests: called inside a window
        self.starts = 0
        self.start_s: list[float] = []   # measured: each start until ready
        self.stop_s: list[float] = []
        self._placed_now: dict[str, int] | None = None
        self.memory: list[str] = []
        self.base = "asg" + uuid.uuid4().hex[:8]
        self.state = _State(workdir(self.base))
        self._finalizer = weakref.finalize(self, self.state.close)
        try:
            self.values = self._prepare()
            if preflight:
                self._preflight()
        except BaseException:
            self._finalizer()
            raise

    # --- set-up -----------------------------------------------------------------------------------
    def _where(self) -> str:
        return f"workload file {self.spec.file}" if self.spec.file else f"workload {self.spec.name}'s file"

    def _fail_file(self, key: str, why: str, value=None) -> WorkloadFileError:
        got = f" (got {value!r})" if value is not None else ""
        return WorkloadFileError(f"{self._where()}: key {key!r}: {why}{got}")

    def _prepare(self) -> dict[str, str]:
        """The placeholders every start shares: paths, the capture and the built program (made once, cached)."""
        build = (self.opts.build_dir or default_build_dir()).resolve()
        try:
            source = source_dir(build) if (build / "build.ninja").exists() else REPO
        except TrafficError:
            source = REPO
        cache = (self.opts.cache_dir or default_cache_dir()) / "programs"
        values = {"python": forms.python(), "source": str(source), "build": str(build),
                  "workdir": str(self.state.workdir), "contexts": format_contexts(self.contexts),
                  "dpdk_drivers": " ".join(forms.driver_args())}
        if self.prog.capture_generator is not None:
            path, cmd = forms.capture_path(self.prog, self.spec.name, values, cache)
            why = forms.make(path, cmd, "capture generator")
            if why is not None:
                raise BackendError(f"backend dpdk: workload {self.spec.name}: {why}")
            values["capture"] = str(path)
        if self.prog.build is not None:
            path, cmd = forms.built_path(self.prog, self.spec.name, values, cache)
            why = forms.make(path, cmd, "building the program:", directory=True)
            if why is not None:
                raise BackendError(f"backend dpdk: workload {self.spec.name}: {why}")
            values["built"] = str(path)
        return values

    def _preflight(self) -> None:
        """Start once on "tasks in order" and keep it (repin) or stop it: bad input is refused here (exit 2)."""
        place = dict(zip(self.prog.task_names, self.in_order()))
        try:
            self._start(place)
            self._ready(preflight=True)
            self._apply(place, fresh=True)
            self._readback(place)
            time.sleep(min(self.warmup, 0.05))
            gone = self.state.launch.ended()
            if gone is not None:
                raise self._fail_file("program.command" if len(self.prog.steps) == 1 else "program.steps",
                                      f"the program ended before its window: {gone}")
        except Failed as e:
            self.state.stop()
            raise BackendError(f"backend dpdk: workload {self.spec.name}: the first start failed: {e}") from None
        except BaseException:
            self.state.stop()
            raise
        if not self.prog.repin:
            self._stop()

    def in_order(self) -> list[int]:
        """Task i on the i-th context (wrapping when there are fewer): the guides' `-l 1-N`."""
        return [self.contexts[i % len(self.contexts)] for i in range(len(self.prog.tasks))]

    # --- one start of the program -------------------------------------------------------------------
    def _start(self, place: dict[str, int]) -> None:
        self.starts += 1
        prefix = f"{self.base}p{self.starts}"  # one --file-prefix per process
        self.state.prefixes.append(prefix)
        values = dict(self.values, file_prefix=prefix)
        if self.prog.tgen is not None:  # the generator first: the program's {tgen} vdev connects to it
            g = ProgramTgen(Path(self.values["build"]), self.prog.tgen,
                            self.opts.tgen_contexts or default_tgen_contexts(), f"{prefix}g", self.state.workdir)
            self.state.tgen = g
            why = g.start()
            if why is not None:
                raise Failed(f"starting pp-tgen: {why}")
            values["tgen"] = g.client_vdev
        steps = []
        for s in self.prog.steps:
            cmd = []
            for a in s.command:
                if a == "{eal}":
                    vdevs = forms.fill(self.prog.vdevs, values)
                    self.memory = forms.memory_args(self.prog)
                    cmd += forms.eal_options(self.prog, place, self.contexts, prefix, vdevs, self.memory)
                    cmd += forms.driver_args()
                else:
                    cmd.append(a.format(**values))
            steps.append((s.kind, cmd, s.ready.format(**values) if s.ready else None, s.placed))
        env = self._env(values)
        self.state.cleanup = [forms.fill(c, values) for c in self.prog.cleanup]
        v = self.prog.value
        self.state.launch = Launch(steps, env, self.state.workdir, stdin_open=self.prog.stdin == "open",
                                   stop_signal=signal.SIGINT if self.prog.stop == "sigint" else signal.SIGTERM,
                                   value_pattern=v.pattern if v.source == "output" else None,
                                   ready_pattern=self.prog.ready_pattern, timeout_s=self._start_timeout())
        if self.state.tgen is not None:
            self.state.launch.companions.append(self.state.tgen)
        self.prefix = prefix
        self._placed_now = None
        t0 = time.perf_counter()
        try:
            self.state.launch.start()
        except StartError as e:
            raise Failed(f"starting the program, step {e.step}: {e.reason}") from None
        self._t_start = t0

    def _env(self, values: dict[str, str]) -> dict[str, str]:
        """The steps' and commands' environment: assign's, the file's env, its path before PATH."""
        env = environment({k: v.format(**values) for k, v in self.prog.env})
        if self.prog.path:
            env["PATH"] = ":".join([*forms.fill(self.prog.path, values),
                                    *([env["PATH"]] if env.get("PATH") else [])])
        return env

    def _value_prefix(self) -> str:
        """Whose telemetry the value reads: the program's, or pp-tgen's (value.from = "tgen")."""
        if self.prog.value.source == "tgen" and self.state.tgen is not None:
            return self.state.tgen.prefix
        return self.prefix

    def _start_timeout(self) -> float:
        return self.opts.timeout if self.opts.timeout is not None else self.prog.start_timeout_s

    def _ready(self, preflight: bool = False) -> None:
        """Wait until every task has its threads, the ports run and the ready pattern was printed."""
        launch = self.state.launch
        deadline = self._t_start + self._start_timeout()
        v = self.prog.value
        tel = None
        missing: list[tuple[str, str]] = []
        names: list[str] = []
        changed = time.perf_counter()
        try:
            while True:
                gone = launch.ended()
                if gone is not None:
                    if preflight:
                        raise self._fail_file("program.command" if len(self.prog.steps) == 1 else "program.steps",
                                              f"the program ended before its window: {gone}")
                    raise Failed(f"the program ended before its window: {gone}")
                missing = self._missing_tasks()
                ports_ok = True
                if v.source in ("telemetry", "tgen"):
                    if tel is None and telemetry_up(self._value_prefix()):
                        try:
                            tel = Telemetry(self._value_prefix())
                        except ReadError:
                            tel = None
                    ports_ok = tel is not None and all(self._port_ok(tel, p) for p in v.ports)
                printed = launch.placed.output is None or launch.placed.output.ready_rx is None or \
                    launch.placed.output.ready.is_set()
                if not missing and ports_ok and printed:
                    if tel is not None:
                        self._moving(tel)
                    break
                now = sorted(n for _, n in threads(launch.pid))
                if now != names:
                    names, changed = now, time.perf_counter()
                # a task whose threads are missing once the program printed what it waits for (if
                # anything) and started no thread for THREADS_SETTLE_S: they will not come
                quiet = time.perf_counter() - changed > THREADS_SETTLE_S
                settled = printed and quiet and (missing or (tel is not None and self._ports_absent(tel)))
                if time.perf_counter() > deadline or settled:
                    self._not_ready(preflight, missing, ports_ok, printed, tel)
                time.sleep(0.02)
        finally:
            if tel is not None:
                tel.close()
        self.start_s.append(time.perf_counter() - self._t_start)

    @staticmethod
    def _port_ok(tel: Telemetry, port: int) -> bool:
        try:
            return tel.port_started(port)
        except ReadError:
            return False

    def _not_ready(self, preflight: bool, missing, ports_ok: bool, printed: bool, tel) -> None:
        t = self._start_timeout()
        have = ", ".join(sorted({n for _, n in threads(self.state.launch.pid)})) or "none"
        if missing:
            name, pattern = missing[0]
            if self.prog.launch == "eal":
                why = (f"lcore {pattern}: the program started no thread for it (its threads: {have}); is lcore "
                       f"{pattern} one the program launches?")
            else:
                why = f"the pattern matches none of the program's threads (its threads: {have})"
            if preflight:
                raise self._fail_file(f"tasks.{name}", why, pattern)
            raise Failed(f"task {name}: {why}")
        if not ports_ok:
            v = self.prog.value
            why = (f"the program's telemetry socket never answered within {t:g} s" if tel is None else
                   f"ports {', '.join(map(str, v.ports))} are not all the program's, or not started (its ports: "
                   f"{self._ports(tel)})")
            if preflight:
                raise self._fail_file("value.ports", why, list(v.ports))
            raise Failed(why)
        why = f"the program did not print its ready pattern within {t:g} s: {self.state.launch.last_words()}"
        if preflight:
            raise self._fail_file("program.ready_pattern", why, self.prog.ready_pattern)
        raise Failed(why)

    def _moving(self, tel: Telemetry) -> None:
        """A fresh start: wait (at most MOVING_S) until the value's counter moves, so that the warm-up
        starts from a program that forwards (testpmd starts its ports before its streams)."""
        v = self.prog.value
        end = time.perf_counter() + MOVING_S
        try:
            first = tel.counter(v.ports, v.counter)
            while time.perf_counter() < end and tel.counter(v.ports, v.counter) == first:
                time.sleep(POLL_S)
        except ReadError:
            pass  # the window says what is wrong

    def _settled(self) -> None:
        """A control interface's placement may set the ports up again (OVS: a new pmd-cpu-mask changes
        every port's tx queues): as after a start, wait until the value's counter moves (under two CPU
        hogs a window opened on ports not yet polling again, and counted nothing)."""
        if self.prog.value.source not in ("telemetry", "tgen"):
            return
        try:
            tel = Telemetry(self._value_prefix())
        except ReadError:
            return  # the window says what is wrong
        try:
            self._moving(tel)
        finally:
            tel.close()

    def _ports_absent(self, tel: Telemetry) -> bool:
        """Whether a port the value reads is not one the program has (it will not come)."""
        try:
            have = tel.ask("/ethdev/list")
        except ReadError:
            return False
        return isinstance(have, list) and not set(self.prog.value.ports) <= set(have)

    @staticmethod
    def _ports(tel: Telemetry) -> str:
        try:
            return str(tel.ask("/ethdev/list"))
        except ReadError as e:
            return str(e)

    def _missing_tasks(self) -> list[tuple[str, str]]:
        """(task, what was looked for) of the tasks whose threads do not exist yet."""
        if self.prog.control:
            return []
        pid = self.state.launch.pid
        ts = threads(pid)
        out = []
        for name, what in self.prog.tasks:
            if self.prog.launch == "eal":
                if not lcore_thread(pid, ts, what, self.prog.main_lcore):
                    out.append((name, str(what)))
            elif not matching(ts, what):
                out.append((name, what))
        return out

    def _task_threads(self) -> dict[str, list[tuple[int, str]]]:
        """Each task's threads now; a thread two tasks match is refused (the file is ambiguous)."""
        pid = self.state.launch.pid
        ts = threads(pid)
        out: dict[str, list[tuple[int, str]]] = {}
        owner: dict[int, str] = {}
        for name, what in self.prog.tasks:
            got = (lcore_thread(pid, ts, what, self.prog.main_lcore) if self.prog.launch == "eal"
                   else matching(ts, what))
            for tid, comm in got:
                if tid in owner:
                    raise self._fail_file(f"tasks.{name}", f"matches thread {comm!r} (TID {tid}), which task "
                                                           f"{owner[tid]} matches too", what)
                owner[tid] = name
            out[name] = got
        return out

    def _stop(self) -> None:
        launch = self.state.launch
        self.state.stop()
        if launch is not None:
            self.stop_s.append(launch.stop_s)
        self._placed_now = None

    # --- placing and reading back --------------------------------------------------------------------
    def _apply(self, place: dict[str, int], fresh: bool) -> float:
        """Put every task on its CPU; the seconds it took."""
        t0 = time.perf_counter()
        if self.prog.control:
            if self._placed_now != place:
                values = dict(self.values, file_prefix=self.prefix,
                              **forms.control_values(self.prog, place, self.contexts))
                self._commands(self.prog.place, values, "control.place")
        elif not (fresh and self.prog.launch == "eal"):  # eal at start: --lcores placed them
            for name, ts in self._task_threads().items():
                for tid, comm in ts:
                    why = pin(tid, place[name])
                    if why is not None and affinity(tid) is not None:  # a thread that just ended is no error
                        raise Failed(f"task {name}, thread {comm!r}: {why}")
        self._placed_now = dict(place)
        return time.perf_counter() - t0

    def _commands(self, cmds: tuple[tuple[str, ...], ...], values: dict[str, str], key: str) -> None:
        import subprocess

        env = self._env(values)
        for c in cmds:
            cmd = forms.fill(c, values)
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=self._start_timeout(), env=env,
                                   cwd=self.state.workdir)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise Failed(f"{key}: {' '.join(cmd)}: {e}") from None
            if p.returncode != 0:
                raise Failed(f"{key}: {' '.join(cmd)}: exit status {p.returncode}: "
                             f"{(p.stderr or p.stdout).strip()[-400:]}")

    def _readback(self, place: dict[str, int], pattern: str | None = None) -> dict[int, int]:
        """Every matched thread's affinity against the placement: {TID: CPU}, or Failed naming the first
        that differs.  A control interface places by itself: polled until it holds."""
        if self.prog.control or pattern is not None:
            deadline = time.perf_counter() + CONTROL_SETTLE_S
            while True:
                got, why = self._control_check(place, pattern)
                if why is None:
                    return got
                if time.perf_counter() > deadline:
                    raise Failed(f"the control interface's placement did not hold within {CONTROL_SETTLE_S:g} s: "
                                 f"{why}")
                gone = self.state.launch.ended()
                if gone is not None:
                    raise Failed(gone)
                time.sleep(POLL_S)
        out: dict[int, int] = {}
        for name, ts in self._task_threads().items():
            if not ts:
                raise Failed(f"task {name}: its thread is gone")
            for tid, comm in ts:
                a = affinity(tid)
                if a is None:
                    continue  # ended since the listing
                if a != {place[name]}:
                    raise Failed(f"task {name}, thread {comm!r} (TID {tid}): affinity {sorted(a)}, the placement "
                                 f"says CPU {place[name]}")
                out[tid] = place[name]
        return out

    def _control_check(self, place: dict[str, int] | None, pattern: str | None) -> tuple[dict[int, int], str | None]:
        """The threads a control interface pins: with a placement, each task's CPU has its thread there and
        no such thread runs elsewhere; without (a baseline), each on one CPU the run may use."""
        pat = pattern or self.prog.task_threads
        ts = threads(self.state.launch.pid)
        any_cpu = _any_cpu(pat)
        all_threads = matching(ts, any_cpu)
        got: dict[int, int] = {}
        cpus = set(place.values()) if place is not None else set(self.contexts)
        for tid, comm in all_threads:
            a = affinity(tid)
            if a is None:
                continue
            if len(a) != 1 or not a <= cpus:
                return got, f"thread {comm!r} (TID {tid}) has affinity {sorted(a)}, not one of CPUs {sorted(cpus)}"
            got[tid] = next(iter(a))
        if place is not None:
            for name, cpu in place.items():
                mine = matching(ts, pat.format(cpu=cpu))
                if not [tid for tid, _ in mine if got.get(tid) == cpu]:
                    return got, f"task {name}: no thread {pat.format(cpu=cpu)!r} on CPU {cpu}"
        elif not all_threads:
            return got, f"no thread matches {any_cpu!r}"
        return got, None

    # --- measuring ------------------------------------------------------------------------------------
    def describe(self) -> dict:
        d = {"app": self.spec.name, "variant": None, "kind": "measured", "value": self.spec.value_label,
             "launch": self.prog.launch, "runner": "repin" if self.prog.repin else "restart",
             "window": {"duration_s": self.duration}, "warmup_s": self.warmup,
             "traffic": {"source": "the program's own ports (its workload file)"}}
        if self.opts.contexts is not None:
            d["contexts"] = format_contexts(self.opts.contexts)
        if not self.spec.builtin:
            d["workload"] = self.spec.identity()
        return d

    def measure(self, requests: Sequence[MeasureRequest]) -> list[Result]:
        return [self.measure_one(r.contexts) for r in requests]

    def measure_placement(self, doc: dict) -> Result:
        tasks = doc["tasks"]
        return self.measure_tasks({n: int(tasks[n]) for n in self.prog.task_names})

    def measure_one(self, contexts: Sequence[int]) -> Result:
        return self.measure_tasks(dict(zip(self.prog.task_names, (int(c) for c in contexts))))

    def measure_tasks(self, place: dict[str, int], pattern: str | None = None,
                      commands: tuple[tuple[str, ...], ...] | None = None) -> Result:
        """One measurement, retried once after a failure (fresh start); pattern and commands: a control
        baseline's (the program's own choice instead of a placement)."""
        reasons: list[str] = []
        for attempt in (1, 2):
            try:
                value, extra = self._attempt(place, pattern, commands)
            except Failed as e:
                reasons.append(f"attempt {attempt}: {e}")
                self._stop()
                continue
            extra["attempts"] = attempt
            if reasons:
                extra["retried_after"] = reasons[0]
            return Result(value, extra=extra)
        return Result.failed("; ".join(reasons), {"kind": "measured", "attempts": 2,
                                                  "runner": "repin" if self.prog.repin else "restart"})

    def _attempt(self, place: dict[str, int], pattern: str | None, commands) -> tuple[float, dict]:
        t0 = time.perf_counter()
        fresh = self.state.launch is None
        start_s = None
        if fresh:
            self._start(place)
            self._ready()
            start_s = self.start_s[-1]
        if commands is not None:
            values = dict(self.values, file_prefix=self.prefix,
                          **forms.control_values(self.prog, place, self.contexts))
            t1 = time.perf_counter()
            self._commands(commands, values, "baselines.place")
            self._placed_now = None  # the next placement sets everything again
            pin_s = time.perf_counter() - t1
            where = self._readback(None, pattern) if pattern else {}
        else:
            placed_before = self._placed_now
            pin_s = self._apply(place, fresh)
            where = self._readback(place)
            if self.prog.control and placed_before != place:
                self._settled()
        if commands is not None:
            self._settled()
        time.sleep(self.warmup)
        value, window_s = self._window(place if commands is None else None, pattern, where)
        extra = {"kind": "measured", "runner": "repin" if self.prog.repin else "restart",
                 "window_s": round(window_s, 6), "warmup_s": self.warmup, "pin_s": round(pin_s, 6),
                 "threads": {str(t): c for t, c in where.items()}, "file_prefix": self.prefix,
                 "starts": self.starts}
        if self.state.tgen is not None:  # value.from = "tgen": where the generator ran
            extra["tgen_contexts"] = list(self.state.tgen.contexts)
        if self.prog.launch == "eal":  # false: 4 KiB pages (too few hugepages free), slower for a memory-bound one
            extra["hugepages"] = "--no-huge" not in self.memory
        if start_s is not None:
            extra["start_s"] = round(start_s, 6)  # measured: start until every task's thread and port was up
        if not self.prog.repin:
            self._stop()
            extra["stop_s"] = round(self.stop_s[-1], 6)
        extra["wall_s"] = round(time.perf_counter() - t0, 6)  # measured: all of this placement
        # start, placing, reading back, telemetry, stop: everything that is not warm-up or window
        extra["overhead_s"] = round(max(0.0, extra["wall_s"] - window_s - self.warmup), 6)
        return value, extra

    def _window(self, place: dict[str, int] | None, pattern: str | None, where: dict[int, int]) -> tuple[float, float]:
        v = self.prog.value
        launch = self.state.launch
        tel = None
        env = None
        try:
            if v.source in ("telemetry", "tgen"):
                try:
                    tel = Telemetry(self._value_prefix())
                except ReadError as e:
                    raise Failed(str(e)) from None
            values = dict(self.values, file_prefix=self.prefix, pid=str(launch.pid))
            if v.source == "command":
                env = self._env(values)
            cmd = forms.fill(v.command, values) if v.command else None
            c0 = self._count(tel, cmd, env) if v.source in ("telemetry", "tgen", "command") \
                and v.aggregate == "rate" else 0.0
            t0 = time.monotonic()
            if self.window_hook is not None:
                self.window_hook(launch.pid, dict(where))
            while True:  # a program that dies in the window fails the attempt at once
                left = self.duration - (time.monotonic() - t0)
                if left <= 0:
                    break
                time.sleep(min(left, 0.05))
                gone = launch.ended()
                if gone is not None:
                    raise Failed(f"the program ended during the window: {gone}")
            c1 = self._count(tel, cmd, env) if v.source in ("telemetry", "tgen", "command") else 0.0
            t1 = time.monotonic()
        except ReadError as e:
            gone = launch.ended()
            raise Failed(gone or str(e)) from None
        finally:
            if tel is not None:
                tel.close()
        gone = launch.ended()
        if gone is not None:
            raise Failed(f"the program ended during the window: {gone}")
        if place is not None:
            self._readback(place)  # the program may move its threads by itself: it must not have
        elif pattern is not None:
            self._readback(None, pattern)
        if v.source == "output":
            try:
                value = output_value(launch.placed.output, t0, t1, v.aggregate)
            except ReadError as e:
                raise Failed(str(e)) from None
        elif v.aggregate == "last":
            value = c1
        else:
            value = (c1 - c0) / (t1 - t0)
        if not value > 0:
            raise Failed(f"the value over the window is {value:g} (nothing moved: {self.spec.value_label})")
        return value, t1 - t0

    def _count(self, tel: Telemetry | None, cmd: list[str] | None, env) -> float:
        v = self.prog.value
        if tel is not None:
            return float(tel.counter(v.ports, v.counter))
        return command_number(cmd, env)

    # --- DpdkBackend's other entry points (placement and repeat: RealRuns) -----------------------------
    def restart(self) -> None:
        self._stop()

    def __enter__(self) -> "ProgramBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._finalizer()

    def provenance(self) -> dict:
        """The program by content: every executable its placed command names (a rebuilt or upgraded
        program is another measurement)."""
        import hashlib
        import os
        import shutil

        placed = next(s for s in self.prog.steps if s.placed)
        values = dict(self.values, file_prefix="", eal="")
        search = self._env(values).get("PATH")  # program.path first, as the steps find it
        h = hashlib.sha256()
        files = []
        for a in placed.command:
            try:
                a = a.format(**values)
            except (KeyError, IndexError, ValueError):
                continue
            path = a if os.sep in a else shutil.which(a, path=search)
            if path and os.path.isfile(path) and os.access(path, os.X_OK):
                files.append(path)
                with open(path, "rb") as f:
                    h.update(f.read())
        return {"app": " ".join(files), "app_sha256": h.hexdigest()}


def _quietly(cmd: list[str], cwd: Path) -> None:
    """A clean-up command: its failure (nothing left to remove) is no error."""
    import subprocess

    try:
        subprocess.run(cmd, capture_output=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _any_cpu(pattern: str) -> str:
    """A control thread pattern with its {cpu...} field as a glob star: the threads on any CPU."""
    import re

    return re.sub(r"\{cpu[^}]*\}", "*", pattern)
