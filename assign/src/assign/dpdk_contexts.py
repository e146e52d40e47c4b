"""Which hardware contexts the dpdk backend may place tasks on (--contexts).

Contexts that run something other than the measured tasks (the traffic
source's own process, a pinned DPDK main lcore) must not be drawn, or the
sample would measure interference from the harness.  `--contexts LIST`
names the usable PU os_index values ("0-1", "2,4-7"); the sampling space
becomes the hwloc tree with every other PU removed, so the sampler, the
counting and the baselines all see the same restricted machine.

What the embedded default traffic costs on this runtime: the source is
net_pcap replaying a capture from memory inside R's own poll loop (no
thread of its own), and DPDK's main lcore floats over the process's CPU
set sleeping 1 ms between checks, so neither holds a context and the
default is every PU of the machine.
"""
from __future__ import annotations

import copy

from .topology import Node, Topology, TopologyError


class ContextsError(ValueError):
    """A --contexts value that does not parse or names absent contexts."""


def parse_contexts(text: str, where: str = "--contexts") -> list[int]:
    """'0-1,4' -> [0, 1, 4] (sorted, no duplicates)."""
    out: set[int] = set()
    if not text.strip():
        raise ContextsError(f"{where} {text!r}: empty list (expected e.g. 0-1 or 2,4-7)")
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo_s, hi_s = part.split("-", 1)
                lo, hi = int(lo_s), int(hi_s)
                if lo > hi:
                    raise ContextsError(f"{where} {text!r}: range {part!r} runs backwards")
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError as e:
            if isinstance(e, ContextsError):
                raise
            raise ContextsError(f"{where} {text!r}: {part!r} is not a number or a range a-b") from None
    if min(out) < 0:
        raise ContextsError(f"{where} {text!r}: context numbers are >= 0")
    return sorted(out)


def format_contexts(ctx: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5' (the canonical form stored with a run)."""
    parts: list[str] = []
    s = sorted(set(ctx))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(parts)


def restrict_topology(topo: Topology, contexts: list[int], where: str = "--contexts") -> Topology:
    """The machine with only the PUs whose os_index is in `contexts`."""
    have = {int(o) for o in topo.os_index}
    missing = [c for c in contexts if c not in have]
    if missing:
        raise ContextsError(f"{where}: context(s) {format_contexts(missing)} are not hardware contexts of "
                            f"{topo.name} (it has {format_contexts(sorted(have))})")
    keep = set(contexts)
    if keep == have:
        return topo

    def prune(n: Node) -> Node | None:
        if n.is_pu:
            return n if n.os_index in keep else None
        kids = [k for k in (prune(c) for c in n.children) if k is not None]
        if not kids:
            return None
        n.children = kids
        return n

    root = prune(copy.deepcopy(topo.root))
    if root is None:  # pragma: no cover - contexts is non-empty and present
        raise TopologyError(f"{where}: no context left")
    return Topology(topo.name, f"{topo.description}; contexts {format_contexts(contexts)}", root)
