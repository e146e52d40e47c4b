"""`pipeplace bench [-i TIER] [NAME [ARGS...]]`: the benchmarks under
bench/ (README.md "Benchmarks"): without a name, each with what it
measures; with one, that script run from the repository root with this
Python (the venv's: numpy and assign), its own arguments after the name.
-i TIER goes to a benchmark that measures a workload on a tier
(`--tier`); the others say which input they use when they run."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from .catalog import REPO, TIERS, UsageError

BENCH = REPO / "bench"


def benchmarks() -> dict[str, Path]:
    """name -> script: the .py files with a main and the .sh files."""
    out = {}
    for p in sorted(BENCH.iterdir()):
        if p.suffix == ".sh" or (p.suffix == ".py" and "__main__" in p.read_text()):
            out[p.stem] = p
    return out


def about(p: Path) -> str:
    """A benchmark's first sentence: its docstring's, or its header comment's."""
    text = p.read_text()
    if p.suffix == ".py":
        doc = ast.get_docstring(ast.parse(text)) or ""
    else:
        doc = " ".join(ln.lstrip("# ") for ln in text.splitlines()[1:6] if ln.startswith("#"))
    doc = " ".join(doc.split())
    if doc.startswith(f"bench/{p.name}:"):
        doc = doc[len(f"bench/{p.name}:"):].strip()
    first = re.split(r"\. |:\s+1[.)]?\s", doc)[0]  # the first sentence, before a numbered list
    return first if len(first) <= 150 else first[:147].rsplit(" ", 1)[0] + " ..."


def takes_tier(p: Path) -> bool:
    return '"--tier"' in p.read_text()


def bench(args) -> int:
    found = benchmarks()
    if not args.name:
        if args.json:
            print(json.dumps([{"name": n, "script": str(p.relative_to(REPO)), "tier": takes_tier(p),
                               "about": about(p)} for n, p in found.items()], indent=2))
            return 0
        width = max(map(len, found))
        for n, p in found.items():
            print(f"{n:<{width}}  {'[-i TIER] ' if takes_tier(p) else ''}{about(p)}")
        return 0
    name = args.name.removesuffix(".py").removesuffix(".sh").removeprefix("bench/")
    if name not in found:
        raise UsageError(f"bench {args.name}: no such benchmark (pipeplace bench lists them)")
    script = found[name]
    extra = list(args.args)
    if args.tier:
        if args.tier not in TIERS:
            raise UsageError(f"-i {args.tier}: expected one of {', '.join(TIERS)}")
        if not takes_tier(script):
            raise UsageError(f"bench {name} takes no tier: it makes its own input (it says which when it runs)")
        extra = ["--tier", args.tier, *extra]
    cmd = (["bash", str(script)] if script.suffix == ".sh" else [sys.executable, str(script)]) + extra
    print("pipeplace bench: " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=REPO).returncode
