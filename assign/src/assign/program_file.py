"""The workload files of programs we did not write (assign/WORKLOADS.md,
"Programs we did not write"): `launch = "eal"` (a DPDK program that takes
its placement at start through EAL's --lcores) and `launch = "threads"`
(any running program, its tasks thread-name patterns pinned with
sched_setaffinity; or, with a [control] table, placed through the
program's own control interface, as Open vSwitch's pmd-cpu-mask and
pmd-rxq-affinity).

Read by workload_file.read_spec when a file says `launch`; every error
names the file, the dotted key and the value, as the runtime apps' files
do.  The running side is backends/program/.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAUNCHES = ("eal", "threads")
TASK_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
VALUE_SOURCES = ("telemetry", "output", "command", "tgen")
MAX_LCORE = 128  # RTE_MAX_LCORE of Debian's DPDK 22.11

# placeholders each template may use ({here} everywhere: the file's directory)
COMMON_VARS = {"python", "source", "build", "workdir", "file_prefix", "capture", "built", "contexts",
               "dpdk_drivers"}
EAL_ONLY = {"eal"}                       # the EAL options assign makes, one argument that expands to many
VDEV_VARS = {"capture", "workdir", "source", "build", "built", "tgen"}  # tgen: with a [tgen] table
PLACE_VARS = {"workdir", "file_prefix", "cpu_mask", "cpus", "all_cpu_mask", "all_cpus"}  # + the task names
VALUE_VARS = {"workdir", "file_prefix", "pid", "python", "source", "build", "built"}
BUILD_STEP_VARS = {"python", "source", "build", "output"}
GEN_VARS = {"python", "source", "build", "output"}


@dataclass(frozen=True)
class Step:
    """One step of starting the program: a command run to completion ("run"),
    or a process started and kept running ("start") until the sample ends."""

    kind: str                          # "run" | "start"
    command: tuple[str, ...]
    ready: str | None = None           # start: a file that exists once it serves (e.g. a socket)
    placed: bool = False               # start: the process whose threads the placement moves


@dataclass(frozen=True)
class ProgramValue:
    """What one measurement of a program stores."""

    source: str                        # telemetry | output | command | tgen
    ports: tuple[int, ...] = ()        # telemetry: the ethdev ports whose counter is summed
    counter: str = "opackets"          # telemetry: a field of /ethdev/stats
    pattern: str | None = None         # output: a regex whose group 1 is a number
    aggregate: str = "rate"            # rate: a counter's increase per second; mean: numbers printed; last
    command: tuple[str, ...] | None = None  # command: prints a number (its last one counts)


@dataclass(frozen=True)
class ProgramBaseline:
    """A bar of `assign baselines` that is the program's own choice."""

    name: str
    about: str
    in_order: bool = False                      # task i on the i-th context (the guides' -l 1-N)
    place: tuple[tuple[str, ...], ...] = ()     # control: commands instead of a placement
    threads: str | None = None                  # control: the threads those commands pin ({cpu} free: any)


@dataclass(frozen=True)
class Program:
    launch: str                                 # eal | threads
    steps: tuple[Step, ...]
    tasks: tuple[tuple[str, Any], ...]          # eal: (name, lcore id); threads: (name, glob or description)
    vdevs: tuple[str, ...] = ()                 # eal: --vdev strings
    main_lcore: int = 0                         # eal
    memory_mb: int = 512                        # eal: -m
    hugepages: str = "auto"                     # eal: auto | never
    repin: bool = False                         # moved while it runs: one process per sample
    repin_why: str = ""                         # why it restarts (repin false) or why it need not
    stdin: str = "closed"                       # open: a pipe kept open (testpmd ends at end of input)
    stop: str = "sigint"                        # sigint | sigterm
    start_timeout_s: float = 60.0
    ready_pattern: str | None = None            # a regex the program prints once it forwards
    env: tuple[tuple[str, str], ...] = ()
    path: tuple[str, ...] = ()                  # searched before PATH for the steps' programs
    cleanup: tuple[tuple[str, ...], ...] = ()   # after every stop, also a failed start (failures ignored)
    build: tuple[str, ...] | None = None        # writes the program into {output} (a directory), cached
    tgen: tuple[str, ...] | None = None         # eal: pp-tgen's options (what it sends) over {tgen}, a memif
    capture_generator: tuple[str, ...] | None = None
    capture_packets: int | None = None
    duration_s: float = 0.2
    warmup_s: float = 0.05
    value: ProgramValue = ProgramValue("telemetry", (0,))
    place: tuple[tuple[str, ...], ...] = ()     # control: commands that make a placement
    task_threads: str | None = None             # control: the thread a task placed on {cpu} runs as
    deploy: tuple[tuple[str, ...], ...] = ()    # the program's own form of a placement (best --out)
    baselines: tuple[ProgramBaseline, ...] = ()

    @property
    def control(self) -> bool:
        return bool(self.place)

    @property
    def task_names(self) -> list[str]:
        return [n for n, _ in self.tasks]

    def identity(self) -> dict:
        """What a measurement depends on, as JSON (stored with a user's runs)."""
        from dataclasses import asdict

        d = asdict(self)
        d.pop("baselines")
        d.pop("deploy")
        d.pop("repin_why")
        return d


def program_from_identity(d: dict) -> Program:
    """The Program a stored run describes (Program.identity)."""
    v = dict(d["value"])
    v["ports"] = tuple(v["ports"])
    v["command"] = tuple(v["command"]) if v.get("command") else None
    return Program(
        launch=d["launch"], steps=tuple(Step(s["kind"], tuple(s["command"]), s.get("ready"), bool(s.get("placed")))
                                        for s in d["steps"]),
        tasks=tuple((n, x) for n, x in d["tasks"]), vdevs=tuple(d["vdevs"]), main_lcore=int(d["main_lcore"]),
        memory_mb=int(d["memory_mb"]), hugepages=d["hugepages"], repin=bool(d["repin"]), stdin=d["stdin"],
        stop=d["stop"], start_timeout_s=float(d["start_timeout_s"]), ready_pattern=d.get("ready_pattern"),
        env=tuple((k, x) for k, x in d["env"]), path=tuple(d.get("path", ())),
        cleanup=tuple(tuple(c) for c in d.get("cleanup", ())), build=tuple(d["build"]) if d.get("build") else None,
        capture_generator=tuple(d["capture_generator"]) if d.get("capture_generator") else None,
        tgen=tuple(d["tgen"]) if d.get("tgen") is not None else None,
        capture_packets=d.get("capture_packets"), duration_s=float(d["duration_s"]), warmup_s=float(d["warmup_s"]),
        value=ProgramValue(**v), place=tuple(tuple(c) for c in d["place"]), task_threads=d.get("task_threads"))


TOP_KEYS = {"name", "description", "launch", "program", "tasks", "value", "window", "capture", "control", "deploy",
            "baselines", "tgen"}
PROGRAM_KEYS = {"command", "steps", "vdevs", "main_lcore", "memory_mb", "hugepages", "repin", "repin_why", "stdin",
                "stop", "start_timeout_s", "ready_pattern", "env", "path", "build", "cleanup"}
STEP_KEYS = {"run", "start", "ready", "placed"}
VALUE_KEYS = {"from", "ports", "counter", "pattern", "aggregate", "command", "unit", "about"}
WINDOW_KEYS = {"duration", "warmup"}
CAPTURE_KEYS = {"generator", "packets"}
CONTROL_KEYS = {"place", "threads"}
DEPLOY_KEYS = {"commands"}
BASELINE_KEYS = {"name", "about", "in_order", "place", "threads"}
TGEN_KEYS = {"args"}
# pp-tgen options assign gives (its port, its run until told to stop, its figures): not the file's
TGEN_OWN = ("--tx-port", "--rx-port", "--stats", "--duration", "--packets", "--link-wait", "--start-after",
            "--drain", "--peer-wait", "--mode", "--profile", "--attach", "--live")
TGEN_COUNTERS = ("ipackets", "ibytes")
TELEMETRY_COUNTERS = ("ipackets", "opackets", "ibytes", "obytes")


@dataclass(frozen=True)
class ProgramRead:
    """What a program's file says, for workload_file.read_spec to make its WorkloadSpec of."""

    program: Program
    value_path: str
    unit: str
    about: str


def read_program(r: Any, doc: dict, here: Path) -> ProgramRead:
    """The program of a `launch = "eal"` or `"threads"` file (r: workload_file's reader, which names the file,
    the key and the value in every error; name and description are read there)."""
    r.known(doc, "", TOP_KEYS)
    launch = r.str(doc, "launch", "", required=True, choices=LAUNCHES)
    prog = r.table(doc, "program", "", PROGRAM_KEYS, required=True)
    ctl = r.table(doc, "control", "", CONTROL_KEYS)
    if ctl is not None and launch != "threads":
        raise r.fail("control", "placement through a control interface goes with launch = \"threads\" (the "
                                "program's threads are what its control interface pins)", show=False)

    tasks = _tasks(r, doc, launch, ctl is not None)
    names = {n for n, _ in tasks}
    task_vars = names

    build = r.template(r.strings(prog, "build", "program.", nonempty=True), "program.build", BUILD_STEP_VARS, here)
    if build is not None and not any("{output}" in a for a in build):
        raise r.fail("program.build", "the command must write the program into the directory {output}",
                     list(build))
    cap = r.table(doc, "capture", "", CAPTURE_KEYS)
    gen = packets = None
    if cap is not None:
        gen = r.template(r.strings(cap, "generator", "capture.", required=True, nonempty=True), "capture.generator",
                         GEN_VARS, here)
        if not any("{output}" in a for a in gen):
            raise r.fail("capture.generator", "the command must write {output}", list(gen))
        packets = r.int(cap, "packets", "capture.")

    step_vars = COMMON_VARS | (EAL_ONLY if launch == "eal" else set())
    steps = _steps(r, prog, here, step_vars, launch)
    used = {f for s in steps for a in s.command for f in _fields(a)}
    if launch == "eal":
        placed = next(s for s in steps if s.placed)
        if sum(a == "{eal}" for a in placed.command) != 1 or any("{eal}" in a and a != "{eal}"
                                                                 for a in placed.command):
            raise r.fail("program.command", "an eal program's command has \"{eal}\" once, as an argument of "
                                            "its own (where the EAL options go, before \"--\")",
                         list(placed.command))
    if "capture" in used and gen is None:
        raise r.fail("program.command", "uses {capture} but the file has no [capture] generator", show=False)
    if "built" in used and build is None:
        raise r.fail("program.command", "uses {built} but the file has no program.build", show=False)

    vdevs = r.template(r.strings(prog, "vdevs", "program.") or (), "program.vdevs", VDEV_VARS, here)
    if vdevs and launch != "eal":
        raise r.fail("program.vdevs", "vdevs are EAL options: they go with launch = \"eal\" (a threads program "
                                      "names its own ports in its command)", list(vdevs))
    if any("capture" in _fields(v) for v in vdevs) and gen is None:
        raise r.fail("program.vdevs", "uses {capture} but the file has no [capture] generator", list(vdevs))
    tg = r.table(doc, "tgen", "", TGEN_KEYS)
    tgen = None
    if tg is not None:
        if launch != "eal":
            raise r.fail("tgen", "pp-tgen feeds a DPDK program through a --vdev: it goes with launch = \"eal\"",
                         show=False)
        tgen = r.strings(tg, "args", "tgen.", required=True)
        own = [a for a in tgen if a.split("=", 1)[0] in TGEN_OWN]
        if own:
            raise r.fail("tgen.args", f"{own[0]} is assign's to give (pp-tgen sends and receives on its memif "
                                      f"port 0 until the program stops)", list(tgen))
        if sum("tgen" in _fields(v) for v in vdevs) != 1:
            raise r.fail("program.vdevs", "with a [tgen] table one vdev is \"{tgen}\" (the program's end of "
                                          "pp-tgen's memif link)", list(vdevs))
    elif any("tgen" in _fields(v) for v in vdevs):
        raise r.fail("program.vdevs", "uses {tgen} but the file has no [tgen] table (what pp-tgen sends)",
                     list(vdevs))
    main_lcore = prog.get("main_lcore", 0)
    if launch == "eal":
        if isinstance(main_lcore, bool) or not isinstance(main_lcore, int) or not 0 <= main_lcore < MAX_LCORE:
            raise r.fail("program.main_lcore", f"expected an lcore id in 0..{MAX_LCORE - 1}", main_lcore)
    elif "main_lcore" in prog:
        raise r.fail("program.main_lcore", "an EAL option: it goes with launch = \"eal\"", main_lcore)
    memory = r.int(prog, "memory_mb", "program.", low=64) or 512
    hugepages = r.str(prog, "hugepages", "program.", default="auto", choices=("auto", "never"))
    repin = prog.get("repin", False)
    if not isinstance(repin, bool):
        raise r.fail("program.repin", "expected true or false", repin)
    repin_why = r.str(prog, "repin_why", "program.", default="")
    stdin = r.str(prog, "stdin", "program.", default="closed", choices=("closed", "open"))
    stop = r.str(prog, "stop", "program.", default="sigint", choices=("sigint", "sigterm"))
    start_timeout = r.number(prog, "start_timeout_s", "program.") or 60.0
    ready_pattern = r.str(prog, "ready_pattern", "program.")
    if ready_pattern is not None:
        _regex(r, "program.ready_pattern", ready_pattern, groups=0)
    env = prog.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise r.fail("program.env", "expected a table of NAME = \"value\"", env)
    env_t = tuple((k, r.template((v,), f"program.env.{k}", COMMON_VARS, here)[0]) for k, v in env.items())
    cleanup = tuple(r.template(c, "program.cleanup", COMMON_VARS, here) for c in r.commands(prog, "cleanup", "program."))
    path = r.template(r.strings(prog, "path", "program.") or (), "program.path", {"source", "build", "built"}, here)
    for d in path:
        if not d.startswith(("/", "{")):
            raise r.fail("program.path", "expected absolute directories (searched before PATH for the steps' "
                                         "programs)", list(path))

    win = r.table(doc, "window", "", WINDOW_KEYS) or {}
    duration = r.number(win, "duration", "window.") or 0.2
    warmup = win.get("warmup", 0.05)
    if isinstance(warmup, bool) or not isinstance(warmup, (int, float)) or warmup < 0:
        raise r.fail("window.warmup", "expected seconds >= 0", warmup)

    value, unit, about = _value(r, doc, here, launch)
    if (value.source == "tgen") != (tgen is not None):
        raise r.fail("value.from" if tgen is None else "tgen",
                     "from = \"tgen\" needs a [tgen] table (what pp-tgen sends into the program)" if tgen is None
                     else "pp-tgen runs only to count what comes back: the value says from = \"tgen\"",
                     value.source if tgen is None else None, show=tgen is None)
    place: tuple[tuple[str, ...], ...] = ()
    task_threads = None
    if ctl is not None:
        place = tuple(r.template(c, "control.place", PLACE_VARS | task_vars, here)
                      for c in r.commands(ctl, "place", "control."))
        if not place:
            raise r.fail("control.place", "missing: the commands that make a placement", show=False)
        task_threads = r.str(ctl, "threads", "control.", required=True)
        if "{cpu" not in task_threads:
            raise r.fail("control.threads", "the thread a task placed on a CPU runs as, with {cpu} (e.g. "
                                            "\"pmd-c{cpu:02d}/id:*\")", task_threads)
        if repin is False and "repin" in prog:
            raise r.fail("program.repin", "a program placed through its control interface is placed while it "
                                          "runs", repin)
        repin = True
    dep = r.table(doc, "deploy", "", DEPLOY_KEYS) or {}
    deploy = tuple(r.template(c, "deploy.commands", PLACE_VARS | task_vars | {"eal", "lcores"}, here)
                   for c in r.commands(dep, "commands", "deploy."))
    baselines = _baselines(r, doc, here, task_vars, ctl is not None)

    program = Program(launch=launch, steps=steps, tasks=tasks, vdevs=vdevs, main_lcore=main_lcore,
                      memory_mb=memory, hugepages=hugepages, repin=repin, repin_why=repin_why, stdin=stdin,
                      stop=stop, start_timeout_s=start_timeout, ready_pattern=ready_pattern, env=env_t, path=path,
                      cleanup=cleanup,
                      build=build, tgen=tgen,
                      capture_generator=gen, capture_packets=packets, duration_s=duration, warmup_s=float(warmup),
                      value=value, place=place, task_threads=task_threads, deploy=deploy, baselines=baselines)
    return ProgramRead(program, _value_path(value), unit, about)


def _value_path(v: ProgramValue) -> str:
    if v.source == "telemetry":
        return f"/ethdev/stats {v.counter} of port{'s' if len(v.ports) > 1 else ''} " + ",".join(map(str, v.ports))
    if v.source == "output":
        return f"{v.aggregate} of /{v.pattern}/"
    if v.source == "command":
        return f"{v.aggregate} of {' '.join(v.command or ())}"
    if v.source == "tgen":
        return f"pp-tgen's /ethdev/stats {v.counter} of its memif port"
    return v.source


def _fields(a: str) -> list[str]:
    import string

    try:
        return [f.split(":")[0].split("!")[0] for _, f, _, _ in string.Formatter().parse(a) if f]
    except ValueError:
        return []


def _regex(r: Any, key: str, text: str, groups: int) -> None:
    try:
        rx = re.compile(text)
    except re.error as e:
        raise r.fail(key, f"not a regular expression ({e})", text) from None
    if rx.groups < groups:
        raise r.fail(key, f"needs a group ( ) around the number", text)


def _tasks(r: Any, doc: dict, launch: str, control: bool) -> tuple[tuple[str, Any], ...]:
    t = doc.get("tasks")
    if not isinstance(t, dict) or not t:
        raise r.fail("tasks", "missing: a table of task name = " + (
            "lcore id (an integer)" if launch == "eal" else
            "what the placement places (a description)" if control else
            "thread-name pattern (a glob over /proc/PID/task/TID/comm)"), t, show=t is not None)
    out = []
    for name, v in t.items():
        key = f"tasks.{name}"
        if not TASK_RE.match(name) or name in PLACE_VARS | COMMON_VARS | {"eal", "lcores", "here", "pid"}:
            raise r.fail(key, "a task name is lower case, digits and _, starting with a letter, and no "
                              "placeholder's name", name)
        if launch == "eal":
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_LCORE:
                raise r.fail(key, f"expected the task's lcore id, an integer in 0..{MAX_LCORE - 1}", v)
        elif not isinstance(v, str) or not v:
            raise r.fail(key, "expected a thread-name pattern (a glob over /proc/PID/task/TID/comm, e.g. "
                              "\"worker-*\")" if not control else "expected a description of the task", v)
        elif not control and len(v.replace("*", "").replace("?", "")) > 15 and "*" not in v:
            raise r.fail(key, "a thread's name is at most 15 characters (/proc/PID/task/TID/comm): this "
                              "pattern matches no thread", v)
        out.append((name, v))
    if launch == "eal":
        ids = [v for _, v in out]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise r.fail("tasks", f"lcore id {dup[0]} is given to two tasks", dict(out))
    return tuple(out)


def _steps(r: Any, prog: dict, here: Path, allowed: set[str], launch: str) -> tuple[Step, ...]:
    has_cmd, has_steps = "command" in prog, "steps" in prog
    if has_cmd == has_steps:
        raise r.fail("program", "give exactly one of 'command' (the program) and 'steps' (commands and "
                                "processes started in order, one of them placed)", show=False)
    if has_cmd:
        cmd = r.template(r.strings(prog, "command", "program.", required=True, nonempty=True), "program.command",
                         allowed, here)
        return (Step("start", cmd, None, True),)
    raw = prog["steps"]
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        raise r.fail("program.steps", "expected an array of tables ([[program.steps]])", raw)
    out = []
    for i, s in enumerate(raw):
        key = f"program.steps[{i}]"
        r.known(s, key + ".", STEP_KEYS)
        if ("run" in s) == ("start" in s):
            raise r.fail(key, "give exactly one of 'run' (a command run to completion) and 'start' (a process "
                              "kept running)", s)
        kind = "run" if "run" in s else "start"
        cmd = r.template(r.strings(s, kind, key + ".", nonempty=True), f"{key}.{kind}", allowed, here)
        ready = r.str(s, "ready", key + ".")
        if ready is not None:
            if kind != "start":
                raise r.fail(f"{key}.ready", "a file a started process makes: it goes with 'start'", ready)
            ready = r.template((ready,), f"{key}.ready", allowed, here)[0]
        placed = s.get("placed", False)
        if not isinstance(placed, bool) or (placed and kind != "start"):
            raise r.fail(f"{key}.placed", "true on the one started process the placement moves", placed)
        out.append(Step(kind, cmd, ready, placed))
    if sum(s.placed for s in out) != 1:
        raise r.fail("program.steps", "exactly one started step has placed = true (the process whose threads "
                                      "the placement moves)", [s.placed for s in out])
    if launch == "eal" and "{eal}" not in next(s for s in out if s.placed).command:
        raise r.fail("program.steps", "the placed step of an eal program has \"{eal}\" in its command", show=False)
    return tuple(out)


def _value(r: Any, doc: dict, here: Path, launch: str) -> tuple[ProgramValue, str, str]:
    v = r.table(doc, "value", "", VALUE_KEYS, required=True)
    src = r.str(v, "from", "value.", required=True, choices=VALUE_SOURCES)
    unit = r.str(v, "unit", "value.", required=True)
    about = r.str(v, "about", "value.", required=True)
    if src == "tgen" and launch != "eal":
        raise r.fail("value.from", "pp-tgen feeds a DPDK program through a --vdev: it goes with launch = \"eal\"",
                     src)
    allowed = {"telemetry": {"ports", "counter"}, "output": {"pattern", "aggregate"},
               "command": {"command", "aggregate"}, "tgen": {"counter"}}[src] | {"from", "unit", "about"}
    for k in v:
        if k not in allowed:
            raise r.fail(f"value.{k}", f"does not go with from = \"{src}\" (here: {', '.join(sorted(allowed))})",
                         v[k])
    if src == "telemetry":
        ports = v.get("ports")
        if (not isinstance(ports, list) or not ports
                or not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 1024 for p in ports)):
            raise r.fail("value.ports", "expected a list of ethdev port ids, e.g. [1]", ports)
        counter = r.str(v, "counter", "value.", default="opackets", choices=TELEMETRY_COUNTERS)
        return ProgramValue("telemetry", tuple(ports), counter), unit, about
    if src == "tgen":  # pp-tgen's receive counter on its memif port (port 0), over its own telemetry
        counter = r.str(v, "counter", "value.", default="ipackets", choices=TGEN_COUNTERS)
        return ProgramValue("tgen", (0,), counter), unit, about
    if src == "output":
        pattern = r.str(v, "pattern", "value.", required=True)
        _regex(r, "value.pattern", pattern, groups=1)
        agg = r.str(v, "aggregate", "value.", default="rate", choices=("rate", "mean"))
        return ProgramValue("output", pattern=pattern, aggregate=agg), unit, about
    cmd = r.template(r.strings(v, "command", "value.", required=True, nonempty=True), "value.command", VALUE_VARS,
                     here)
    agg = r.str(v, "aggregate", "value.", default="rate", choices=("rate", "last"))
    return ProgramValue("command", aggregate=agg, command=cmd), unit, about


def _baselines(r: Any, doc: dict, here: Path, task_vars: set[str], control: bool) -> tuple[ProgramBaseline, ...]:
    raw = doc.get("baselines", [])
    if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
        raise r.fail("baselines", "expected an array of tables ([[baselines]])", raw)
    out = []
    for i, b in enumerate(raw):
        key = f"baselines[{i}]"
        r.known(b, key + ".", BASELINE_KEYS)
        name = r.str(b, "name", key + ".", required=True)
        about = r.str(b, "about", key + ".", required=True)
        in_order = b.get("in_order", False)
        if not isinstance(in_order, bool):
            raise r.fail(f"{key}.in_order", "expected true or false", in_order)
        place = tuple(r.template(c, f"{key}.place", PLACE_VARS, here) for c in r.commands(b, "place", key + "."))
        if in_order == bool(place):
            raise r.fail(key, "give exactly one of in_order = true (task i on the i-th context) and 'place' (the "
                              "program's own commands)", b)
        if place and not control:
            raise r.fail(f"{key}.place", "commands go with a [control] interface", show=False)
        threads = r.str(b, "threads", key + ".")
        out.append(ProgramBaseline(name, about, in_order, place, threads))
    return tuple(out)
