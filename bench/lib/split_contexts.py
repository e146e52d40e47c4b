"""Where bench/ipfwd.py puts R and T when P runs alone on the forwarding
context: on a context of another core, and, where the machine has them, on
the other hardware thread of P's own core.  The two are different machines
for a pipeline: threads of one core share its L1 and L2, so the lines of
every frame that P rewrites and R refills stay in that core; across cores
each of them crosses twice per packet (apps/ipfwd/notes/2026-11-26-16-core-vm.md).  Which one a figure measured is printed beside it.

The hardware threads of a core are the kernel's (sysfs
topology/thread_siblings_list), as hwloc reads them.
"""
from __future__ import annotations

from pathlib import Path

from assign.topology import ContextsError, parse_contexts

SYSFS_CPU = Path("/sys/devices/system/cpu")


def core_siblings(cpu: int, root: Path = SYSFS_CPU) -> set[int]:
    """The hardware threads of `cpu`'s core, itself included; {cpu} where the
    kernel does not say (no sysfs topology)."""
    path = root / f"cpu{cpu}" / "topology" / "thread_siblings_list"
    try:
        text = path.read_text()
    except OSError:
        return {cpu}
    try:  # the kernel's CPU list is --contexts' syntax ("0-3,8")
        return set(parse_contexts(text, str(path))) | {cpu}
    except ContextsError as e:
        raise ValueError(f"{path}: {text.strip()!r} is not a CPU list ({e})") from None


def split_layouts(allowed: list[int], root: Path = SYSFS_CPU) -> tuple[int, int, list[tuple[str, int]]]:
    """(P's context, testpmd's idle main lcore, [(what R+T's context shares with P's, R+T's context)]).

    P forwards on the second allowed context, as the fused layout and l3fwd do.
    R+T go on the first allowed context of another core ("another core") and on
    the first other thread of P's core ("P's core"), each where there is one.
    """
    if len(allowed) < 2:
        raise ValueError(f"{len(allowed)} allowed context(s): need at least 2 (P alone on one, R and T on another)")
    ctxs = sorted(allowed)
    p = ctxs[1]
    same = core_siblings(p, root)
    others = [c for c in ctxs if c != p]
    layouts: list[tuple[str, int]] = []
    apart = [c for c in others if c not in same]
    if apart:
        layouts.append(("another core", apart[0]))
    near = [c for c in others if c in same]
    if near:
        layouts.append(("P's core", near[0]))
    return p, others[0], layouts
