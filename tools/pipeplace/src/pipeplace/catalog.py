"""What pipeplace knows: the repository, its Meson parts, the apps, the
workloads (assign's workload files) and their input tiers."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from assign.backends.dpdk.options import REPO, default_build_dir, default_cache_dir
from assign.workloads import TIERS, WorkloadError, WorkloadSpec, known_workloads, load_workload_file

__all__ = ["REPO", "TIERS", "UsageError", "parts", "part_dir", "apps", "resolve_workload", "tier_summary",
           "default_build_dir", "default_cache_dir", "build_dir_of"]


class UsageError(ValueError):
    """A command line pipeplace cannot act on (exit status 2)."""


def parts() -> list[str]:
    """The C parts of the Meson build (meson_options.txt, option 'parts')."""
    text = (REPO / "meson_options.txt").read_text()
    m = re.search(r"option\('parts'.*?choices:\s*\[([^\]]*)\]", text, re.S)
    return re.findall(r"'([^']+)'", m.group(1)) if m else []


def part_dir(part: str) -> Path:
    """Where a part's sources are: runtime/, traffic-gen/, apps/<app>/."""
    return REPO / part if part in ("runtime", "traffic-gen") else REPO / "apps" / part


def apps() -> list[str]:
    return [p for p in parts() if p not in ("runtime", "traffic-gen")]


def build_dir_of(arg: str | None) -> Path:
    return Path(arg).resolve() if arg else default_build_dir()


@dataclass(frozen=True)
class Resolved:
    name: str
    spec: WorkloadSpec


def resolve_workload(text: str) -> Resolved:
    """-a APP: a workload name, an app with one workload, or a workload file."""
    if text.endswith(".toml") or os.sep in text:
        try:
            spec = load_workload_file(text)
        except WorkloadError as e:
            raise UsageError(str(e)) from None
        return Resolved(spec.name, spec)
    known = known_workloads()
    if text in known:
        return Resolved(text, known[text])
    of_app = [n for n, s in known.items() if s.app == text]
    if len(of_app) == 1:
        return Resolved(of_app[0], known[of_app[0]])
    if of_app:
        raise UsageError(f"-a {text}: app {text} has several workloads ({', '.join(of_app)}): name one")
    raise UsageError(f"-a {text}: no such app or workload (workloads: {', '.join(known)}; or a workload file, "
                     f"assign/WORKLOADS.md)")


def tier_summary(spec: WorkloadSpec, tier: str) -> str:
    """A tier in words: its capture and window, or its client parameters."""
    t = spec.tiers.get(tier)
    if t is None:
        return "-"
    bits = []
    if spec.source == "capture":
        n = t.capture_packets or (spec.capture.default_packets if spec.capture else None)
        fixed = spec.capture is not None and spec.capture.file is not None
        bits.append("its capture" if fixed else f"capture {n:,}" if n else "default capture")
    bits += [f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in t.params.items()]
    if t.packets is not None:
        bits.append(f"window {t.packets:,}")
    elif t.duration is not None:
        bits.append(f"window {t.duration:g} s")
    return ", ".join(bits)
