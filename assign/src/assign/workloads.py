"""Workloads: N instances of a three-stage (R -> P -> T) packet-processing app.

Task t of a workload is role ROLES[t % 3] of instance t // 3, so tasks
0, 1, 2 are R, P, T of instance 0, and so on.

Every workload is a workload file (TOML, assign/WORKLOADS.md): the app, its
fixed options, its roles, how its traffic is made (a capture, pp-tgen, or a
client command in a network namespace), what a measurement's value is, and
its input tiers.  The five of the paper ship in data/workloads/; a user's
own (`--workload-file FILE`) is read with `load_workload_file`, which
registers it under its name for the rest of the process.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .topology import Topology
from .workload_file import (TIERS, Capture, Client, Tier, WorkloadError, WorkloadFileError, WorkloadSpec,
                            read_spec, spec_from_identity)

ROLES = ("R", "P", "T")
DEFAULT_INSTANCES = 8
BUILTIN_DIR = Path(__file__).resolve().parent / "data" / "workloads"
BUILTIN_ORDER = ("ipfwd-l1", "ipfwd-mem", "ahocorasick", "stateful", "analyzer")  # the paper's, first

__all__ = ["ROLES", "DEFAULT_INSTANCES", "TIERS", "WORKLOADS", "Workload", "WorkloadError", "WorkloadFileError",
           "WorkloadSpec", "Capture", "Client", "Tier", "load_workload_file", "spec_of", "known_workloads",
           "stored_workload", "find_by_app", "PROGRAMS", "DefaultInstances"]


def _packaged() -> dict[str, WorkloadSpec]:
    """Every file in data/workloads/ (a new packaged workload is a file there; the model
    backend also wants its parameters in data/model_params.json)."""
    specs = {}
    names = sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))
    for name in [n for n in BUILTIN_ORDER if n in names] + [n for n in names if n not in BUILTIN_ORDER]:
        spec = read_spec(BUILTIN_DIR / f"{name}.toml", builtin=True)
        if spec.name != name:  # pragma: no cover - a packaging mistake
            raise WorkloadFileError(f"workload file {BUILTIN_DIR / name}.toml: key 'name': expected {name!r}, "
                                    f"got {spec.name!r}")
        specs[name] = spec
    return specs


_PACKAGED = _packaged()
# the runtime's apps (R -> P -> T instances), and the programs we did not write (launch eal or threads,
# program_file.py): both packaged, stored by name
BUILTIN: dict[str, WorkloadSpec] = {n: s for n, s in _PACKAGED.items() if s.program is None}
PROGRAMS: dict[str, WorkloadSpec] = {n: s for n, s in _PACKAGED.items() if s.program is not None}
_REGISTERED: dict[str, WorkloadSpec] = {}

# workload name -> (app binary name, variant or None) of the packaged workloads; placement JSON uses both.
WORKLOADS: dict[str, tuple[str, str | None]] = {n: (s.app, s.variant) for n, s in BUILTIN.items()}


def known_workloads() -> dict[str, WorkloadSpec]:
    """The packaged workloads, then those read from files in this process."""
    return {**BUILTIN, **PROGRAMS, **_REGISTERED}


def spec_of(name: str) -> WorkloadSpec:
    spec = BUILTIN.get(name) or PROGRAMS.get(name) or _REGISTERED.get(name)
    if spec is None:
        known = ", ".join(known_workloads())
        raise WorkloadError(f"unknown workload {name!r} (known: {known}; a workload of your own: "
                            f"--workload-file FILE, assign/WORKLOADS.md)")
    return spec


def register(spec: WorkloadSpec) -> WorkloadSpec:
    """Make `spec` known by its name; refuses a second, different workload of that name."""
    where = f"workload file {spec.file}" if spec.file else f"workload {spec.name!r}"
    if spec.name in _PACKAGED:
        raise WorkloadFileError(f"{where}: key 'name': {spec.name!r} is a packaged workload "
                                f"({', '.join(_PACKAGED)}); give yours another name")
    have = _REGISTERED.get(spec.name)
    if have is not None and have.identity() != spec.identity():
        raise WorkloadFileError(f"{where}: key 'name': {spec.name!r} is already the workload of "
                                f"{have.file or 'a stored run'}, which differs; give one of them another name")
    _REGISTERED[spec.name] = have or spec
    return _REGISTERED[spec.name]


def load_workload_file(path: str | Path) -> WorkloadSpec:
    """Read, check and register a user's workload file (errors name the file, the key and the value)."""
    return register(read_spec(Path(path)))


def stored_workload(name: str, instances: int, params: dict | None) -> "Workload":
    """The workload of a stored run: a packaged one by name, a user's from the
    description the run stored (backend params "workload"), so that a run is
    read back without its file."""
    if name not in _PACKAGED and name not in _REGISTERED and params and isinstance(params.get("workload"), dict):
        register(spec_from_identity(params["workload"]))
    return Workload(name, instances)


def input_label(name: str, capture_packets: int | None = None, packets: int | None = None,
                duration: float | None = None) -> str:
    """Which input tier a run's capture and window are (benchmarks print it),
    or that they are no tier and what they are."""
    spec = spec_of(name)
    default = spec.capture.default_packets if spec.capture and spec.capture.generator else None
    cap = capture_packets or default
    what = (f"capture {cap:,} packets" if cap else "its capture") + ", window " + (
        f"{packets:,} packets per instance" if packets is not None else
        f"{duration:g} s" if duration is not None else "the run's")
    for t in spec.tiers.values():
        if ((t.capture_packets or default) == cap and t.packets == packets and t.duration == duration):
            return f"input: {name} tier {t.name} ({what})"
    near = [t.name for t in spec.tiers.values() if (t.capture_packets or default) == cap]
    return (f"input: {name}, no tier ({what}: this benchmark's own"
            + (f"; the capture of tier {', '.join(near)}" if near else "") + ")")


def find_by_app(app: str, variant: str | None) -> str | None:
    """The workload whose placement JSON says this app and variant (packaged first)."""
    return next((n for n, s in known_workloads().items() if s.app == app and s.variant == variant), None)


class DefaultInstances(int):
    """--instances left at its default: a program's workload (its tasks named by its file) takes it as 1."""


@dataclass(frozen=True)
class Workload:
    name: str
    instances: int = DefaultInstances(DEFAULT_INSTANCES)

    def __post_init__(self) -> None:
        spec = spec_of(self.name)  # unknown: refused, naming the known ones
        if spec.program is not None:
            # a program's tasks are its file's: there are no instances to repeat
            if self.instances != 1 and not isinstance(self.instances, DefaultInstances):
                where = f"its file {spec.file}" if spec.file else "its file"
                raise WorkloadError(f"--instances {self.instances}: workload {self.name} is a program whose "
                                    f"{len(spec.program.tasks)} tasks ({', '.join(spec.program.task_names)}) "
                                    f"{where} names; it has no instances (leave --instances out)")
            object.__setattr__(self, "instances", 1)
        elif isinstance(self.instances, DefaultInstances):
            object.__setattr__(self, "instances", int(self.instances))
        if self.instances < 1:
            raise WorkloadError(f"--instances must be at least 1, got {self.instances}")

    @property
    def spec(self) -> WorkloadSpec:
        return spec_of(self.name)

    @property
    def app(self) -> str:
        return self.spec.app

    @property
    def variant(self) -> str | None:
        return self.spec.variant

    @property
    def app_args(self) -> list[str]:
        return list(self.spec.options)

    @property
    def n_tasks(self) -> int:
        prog = self.spec.program
        return len(prog.tasks) if prog is not None else 3 * self.instances

    def task_names(self) -> list[str]:
        prog = self.spec.program
        if prog is not None:
            return prog.task_names
        return [f"{ROLES[t % 3]}{t // 3}" for t in range(self.n_tasks)]

    def check_fits(self, topo: Topology, allow_colocate: bool, backend: str) -> None:
        """Refuse a workload with more tasks than contexts, saying what to change."""
        if allow_colocate or self.n_tasks <= topo.n_contexts:
            return
        if self.spec.program is not None:
            raise WorkloadError(f"workload {self.name} has {self.n_tasks} tasks ({', '.join(self.task_names())}) "
                                f"but machine {topo.name} has {topo.n_contexts} contexts: use --allow-colocate "
                                f"(tasks share contexts)")
        most = topo.n_contexts // 3
        hints = ([f"fewer --instances (at most {most} fit)"] if most >= 1 else []) + [
            "--allow-colocate (tasks share contexts)"]
        if topo.name != "ultrasparc-t2":
            hints.append("--backend model --machine ultrasparc-t2 (the modelled 64-context T2)")
        raise WorkloadError(
            f"workload {self.name} with {self.instances} instances needs {self.n_tasks} hardware contexts "
            f"(one per task: R, P, T per instance) but machine {topo.name} has {topo.n_contexts}"
            + ("" if most >= 1 else " (fewer --instances cannot help: one instance needs 3)")
            + f". Use {', or '.join(hints)}"
        )
