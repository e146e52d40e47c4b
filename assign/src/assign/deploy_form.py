"""A chosen placement in the program's own form, for a program we did not
write (assign/WORKLOADS.md): what `assign best --out FILE` writes beside
the placement JSON (FILE with .deploy.sh for its suffix) and prints.

* eal: the command line that starts the program with it (EAL's --lcores);
* a control interface (OVS): its commands (the file's [deploy] commands,
  else its control.place) with the placement's values;
* threads: a taskset line per task, moving every thread whose name
  matches the task's pattern in the running process $PID.

The values come from backends/program/forms.py, as the measurement's do.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from .workloads import Workload

PREFIX = "ASSIGN-FILE-PREFIX"
HEADER = "#!/bin/sh\n# The placement `assign best` chose for {name}, in the program's own form ({what}).\n"


def deploy_path(out: str | Path) -> Path:
    p = Path(out)
    return p.with_name(p.stem + ".deploy.sh") if p.suffix else p.with_name(p.name + ".deploy.sh")


def render(workload: Workload, contexts: list[int], all_contexts: list[int], build: str | None = None) -> str | None:
    """The shell text of the program's own form of a placement, or None for a runtime app (its form is the
    placement JSON)."""
    spec = workload.spec
    prog = spec.program
    if prog is None:
        return None
    from .backends.dpdk.options import REPO, default_build_dir, default_cache_dir
    from .backends.dpdk.traffic import TrafficError, source_dir
    from .backends.program import forms
    from .topology import format_contexts

    place = dict(zip(prog.task_names, (int(c) for c in contexts)))
    bdir = Path(build).resolve() if build else default_build_dir()
    try:
        source = source_dir(bdir) if (bdir / "build.ninja").exists() else REPO
    except TrafficError:
        source = REPO
    values = {"python": forms.python(), "source": str(source), "build": str(bdir), "workdir": "$WORKDIR",
              "contexts": format_contexts(all_contexts), "file_prefix": spec.name,
              "dpdk_drivers": " ".join(forms.driver_args()),
              # measured against pp-tgen over memif: deployed, the program's own port goes there
              "tgen": "net_memif0,role=client,socket=/run/pipeplace/tgen.sock,socket-abstract=no"}
    cache = default_cache_dir() / "programs"
    if prog.capture_generator is not None:
        values["capture"] = str(forms.capture_path(prog, spec.name, values, cache)[0])
    if prog.build is not None:
        values["built"] = str(forms.built_path(prog, spec.name, values, cache)[0])
    values.update(forms.control_values(prog, place, all_contexts))
    lines: list[str]
    if prog.control:
        cmds = prog.deploy or prog.place
        what = "its control interface's commands"
        lines = [shlex.join(forms.fill(c, values)) for c in cmds]
    elif prog.launch == "eal":
        what = f"EAL --lcores {forms.lcores(prog, place, all_contexts)}"
        placed = next(s for s in prog.steps if s.placed)
        vdevs = forms.fill(prog.vdevs, values)
        cmd: list[str] = []
        for a in placed.command:
            if a == "{eal}":
                cmd += forms.eal_options(prog, place, all_contexts, PREFIX, vdevs, forms.memory_args(prog))
            else:
                cmd.append(a.format(**values))
        # its DPDK --file-prefix: $FILE_PREFIX, or the workload's name
        lines = [f"# lcore map: --lcores '{forms.lcores(prog, place, all_contexts)}'",
                 "exec " + shlex.join(cmd).replace(PREFIX, f'"${{FILE_PREFIX:-{spec.name}}}"')]
    else:
        what = "taskset, a line per task, on the running process $PID"
        lines = [': "${PID:?set PID to the process id of the running program}"']
        for name, pattern in prog.tasks:
            cpu = place[name]
            lines.append(f"# task {name}: every thread named {pattern!r} on CPU {cpu}")
            lines.append(f'for t in /proc/"$PID"/task/*; do case "$(cat "$t/comm")" in {_case(pattern)}) '
                         f'taskset -p -c {cpu} "${{t##*/}}" >/dev/null;; esac; done')
    return HEADER.format(name=spec.name, what=what) + "\n".join(lines) + "\n"


def _case(pattern: str) -> str:
    """A thread-name glob as a shell case pattern (its literal characters quoted)."""
    out = []
    for ch in pattern:
        out.append(ch if ch in "*?[]" else shlex.quote(ch) if not ch.isalnum() and ch not in "-_." else ch)
    return "".join(out)


def write_for_best(out: str, workload: Workload, contexts: list[int], topology_json: str,
                   build: str | None = None) -> list[str]:
    """Write the program's own form beside `out` and return the lines `assign best` prints ([] for an app on
    the runtime)."""
    from .commands._save import save
    from .topology import Topology

    topo = Topology.from_json(topology_json)
    text = render(workload, contexts, [int(topo.os_index[i]) for i in range(topo.n_contexts)], build)
    if text is None:
        return []
    path = deploy_path(out)
    if not save(str(path), lambda f: f.write(text), "deploy form"):
        return ["in the program's own form (not written, see above):"] + ["  " + ln for ln in
                                                                                text.splitlines()[2:]]
    path.chmod(0o755)
    return [f"in the program's own form ({path}):"] + ["  " + ln for ln in text.splitlines()[2:]]
