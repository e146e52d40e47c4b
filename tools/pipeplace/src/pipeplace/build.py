"""`pipeplace build [-p PART]`: the Meson build, whole or one part.

A part is one of meson_options.txt's parts (runtime, an app, traffic-gen)
or a workload (its app).  A part the build was not configured with is
added to its -Dparts first (the runtime with an app, which needs it).
Without -p: the build as configured (`ninja -C build`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assign.workloads import known_workloads

from .catalog import REPO, UsageError, build_dir_of, part_dir, parts


def _run(cmd: list[str]) -> int:
    print("pipeplace build: " + " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def configured_parts(build: Path) -> list[str] | None:
    p = subprocess.run(["meson", "introspect", "--buildoptions", str(build)], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    opt = next((o for o in json.loads(p.stdout) if o.get("name") == "parts"), None)
    return list(opt["value"]) if opt else None


def part_of(text: str) -> str:
    if text in parts():
        return text
    spec = known_workloads().get(text)
    if spec is not None and spec.app in parts():
        return spec.app
    raise UsageError(f"-p {text}: no such part (parts: {', '.join(parts())}; or a workload: "
                     f"{', '.join(known_workloads())})")


def targets(build: Path, part: str) -> list[str]:
    """The build's targets defined in the part's directory, as ninja names them."""
    p = subprocess.run(["meson", "introspect", "--targets", str(build)], capture_output=True, text=True, check=True)
    where = part_dir(part).resolve()
    out = []
    for t in json.loads(p.stdout):
        if Path(t["defined_in"]).resolve().parent == where and t.get("type") != "run":
            out += [str(Path(f).relative_to(build)) for f in t["filename"] if Path(f).is_relative_to(build)]
    return out


def build(args) -> int:
    build_dir = build_dir_of(args.build)
    part = part_of(args.part) if args.part else None
    if not (build_dir / "build.ninja").exists():
        rc = _run(["meson", "setup", str(build_dir), str(REPO)])
        if rc != 0:
            return 1
    if part is not None:
        have = configured_parts(build_dir)
        if have is None:
            print(f"pipeplace build: {build_dir}: meson cannot read its options", file=sys.stderr)
            return 1
        want = [p for p in parts() if p in have or p == part or (p == "runtime" and part not in
                                                                  ("runtime", "traffic-gen"))]
        if want != [p for p in parts() if p in have]:
            if _run(["meson", "configure", str(build_dir), f"-Dparts={','.join(want)}"]) != 0:
                return 1
        names = targets(build_dir, part)
        if not names:
            print(f"pipeplace build: part {part} has no targets in {build_dir}", file=sys.stderr)
            return 1
        return 0 if _run(["ninja", "-C", str(build_dir), *names]) == 0 else 1
    return 0 if _run(["ninja", "-C", str(build_dir)]) == 0 else 1
