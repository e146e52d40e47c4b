"""Machine topology as a tree of sharing levels, read from hwloc.

One source of truth with the C runtime: both ask hwloc.  We run
``lstopo-no-graphics --of xml`` (on this host, or on an hwloc synthetic
description for machines we do not have) and keep the CPU side of the tree:
Machine, Package, Die, Group, caches, Core and PU.  Memory, I/O and Misc
objects do not hold hardware contexts and are dropped.
"""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

LSTOPO = "lstopo-no-graphics"

# Named machines: name -> hwloc synthetic description (None = this host).
MACHINES: dict[str, str | None] = {
    "local": None,
    # UltraSPARC T2: 8 cores x 2 hardware pipelines x 4 strands (paper, sec. 4.1).
    "ultrasparc-t2": "pack:1 core:8 group:2 pu:4",
}

# hwloc object types that hold hardware contexts (everything else is skipped).
CPU_TYPES = {
    "Machine", "Package", "Die", "Group", "Core", "PU",
    "L1Cache", "L2Cache", "L3Cache", "L4Cache", "L5Cache",
    "L1iCache", "L2iCache", "L3iCache",
}

# Sharing levels the performance model knows about, lowest first.  Index 0 is
# the context itself (only shared when co-location is allowed).
LEVELS = ("pu", "pipeline", "core", "chip", "machine")


class TopologyError(ValueError):
    """The topology could not be obtained or parsed."""


@dataclass
class Node:
    """One hwloc object of the CPU side of the tree."""

    type: str
    os_index: int | None = None
    children: list["Node"] = field(default_factory=list)

    @property
    def is_pu(self) -> bool:
        return self.type == "PU"

    def shape(self) -> tuple:
        """Canonical form of the subtree: identical shapes are interchangeable
        siblings (the symmetry that counting quotients out)."""
        return (self.type, tuple(sorted(c.shape() for c in self.children)))

    def to_json(self) -> dict:
        d: dict = {"type": self.type}
        if self.os_index is not None:
            d["os_index"] = self.os_index
        if self.children:
            d["children"] = [c.to_json() for c in self.children]
        return d

    @staticmethod
    def from_json(d: dict) -> "Node":
        return Node(d["type"], d.get("os_index"), [Node.from_json(c) for c in d.get("children", [])])


@dataclass
class Topology:
    """A machine: its name, how it was described, and its tree of objects.

    Contexts are numbered 0..V-1 in tree order (hwloc's logical order);
    ``os_index[v]`` is the OS CPU number the runtime pins to.
    """

    name: str
    description: str
    root: Node

    @cached_property
    def pus(self) -> list[Node]:
        out: list[Node] = []

        def walk(n: Node) -> None:
            if n.is_pu:
                out.append(n)
            for c in n.children:
                walk(c)

        walk(self.root)
        return out

    @property
    def n_contexts(self) -> int:
        return len(self.pus)

    @cached_property
    def os_index(self) -> np.ndarray:
        return np.array([p.os_index for p in self.pus], dtype=np.int64)

    @cached_property
    def level_ids(self) -> np.ndarray:
        """Array (len(LEVELS), V): for each model level, an id per context
        such that two contexts share that level iff their ids are equal.

        pipeline = the nearest Group below a Core (the T2's pipelines), else
        the Core (SMT siblings share issue slots); core = the Core, else the
        PU; chip = the Package, else the whole machine.
        """
        ids = np.zeros((len(LEVELS), self.n_contexts), dtype=np.int64)
        obj_id: dict[int, int] = {}

        def oid(n: Node) -> int:
            return obj_id.setdefault(id(n), len(obj_id))

        v = 0

        def walk(n: Node, path: list[Node]) -> None:
            nonlocal v
            if n.is_pu:
                top = path[0] if path else n
                core = next((a for a in reversed(path) if a.type == "Core"), None)
                pipe = None
                if core is not None:
                    below = path[path.index(core) + 1:]
                    pipe = next((a for a in reversed(below) if a.type == "Group"), None)
                pipe = pipe or core or n
                core = core or n
                chip = next((a for a in reversed(path) if a.type == "Package"), top)
                ids[:, v] = [oid(n), oid(pipe), oid(core), oid(chip), oid(top)]
                v += 1
                return
            for c in n.children:
                walk(c, path + [n])

        walk(self.root, [])
        return ids

    def distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Lowest shared level (index into LEVELS) of contexts a and b (arrays)."""
        ids = self.level_ids
        d = np.full(np.broadcast(a, b).shape, len(LEVELS) - 1, dtype=np.int64)
        for lvl in range(len(LEVELS) - 2, -1, -1):
            d = np.where(ids[lvl][a] == ids[lvl][b], lvl, d)
        return d

    def summary(self) -> str:
        counts: dict[str, int] = {}

        def walk(n: Node) -> None:
            counts[n.type] = counts.get(n.type, 0) + 1
            for c in n.children:
                walk(c)

        walk(self.root)
        parts = ", ".join(f"{v} {k}" for k, v in counts.items() if k in ("Package", "Core", "Group", "PU"))
        return f"{self.name} ({self.description}): {parts}"

    def to_json(self) -> dict:
        return {"name": self.name, "description": self.description, "tree": self.root.to_json()}

    @staticmethod
    def from_json(d: dict) -> "Topology":
        return Topology(d["name"], d["description"], Node.from_json(d["tree"]))


def _parse_xml(text: str, source: str) -> Node:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise TopologyError(f"cannot parse hwloc XML from {source}: {e}") from None
    machine = root.find("object")
    if machine is None:
        raise TopologyError(f"hwloc XML from {source} has no object")

    def build(el: ET.Element) -> Node | None:
        t = el.get("type", "")
        if t not in CPU_TYPES:
            return None
        os_idx = el.get("os_index")
        node = Node(t, int(os_idx) if (t == "PU" and os_idx is not None) else None)
        for child in el.findall("object"):
            c = build(child)
            if c is not None:
                node.children.append(c)
        return node

    tree = build(machine)
    if tree is None:
        raise TopologyError(f"hwloc XML from {source}: top object is not a Machine")
    return _prune(tree)


def _prune(n: Node) -> Node:
    """Drop subtrees without PUs (hwloc may list empty caches or groups)."""
    n.children = [_prune(c) for c in n.children if _has_pu(c)]
    return n


def _has_pu(n: Node) -> bool:
    return n.is_pu or any(_has_pu(c) for c in n.children)


def from_hwloc(synthetic: str | None = None, name: str | None = None) -> Topology:
    """Topology of this host (synthetic=None) or of an hwloc synthetic description."""
    if shutil.which(LSTOPO) is None:
        raise TopologyError(f"{LSTOPO} not found: install hwloc (Debian package 'hwloc')")
    cmd = [LSTOPO, "--no-io", "--of", "xml", "-"]
    if synthetic is not None:
        cmd[1:1] = ["-i", synthetic]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    what = f"synthetic topology {synthetic!r}" if synthetic is not None else "this host"
    if proc.returncode != 0 or not proc.stdout.strip():
        err = proc.stderr.strip().splitlines()
        raise TopologyError(f"hwloc rejected {what}: {err[-1] if err else 'no output'}")
    root = _parse_xml(proc.stdout, what)
    topo = Topology(name or (synthetic if synthetic is not None else "local"),
                    synthetic if synthetic is not None else "this host (hwloc)", root)
    if topo.n_contexts == 0:
        raise TopologyError(f"{what} has no hardware contexts (PU)")
    return topo


def get_machine(machine: str | None = None, topology: str | None = None) -> Topology:
    """Resolve --machine / --topology to a Topology; --topology wins."""
    if topology is not None:
        return from_hwloc(topology, name=f"synthetic:{topology}")
    machine = machine or "local"
    if machine not in MACHINES:
        known = ", ".join(sorted(MACHINES))
        raise TopologyError(f"unknown machine {machine!r} (known: {known}; or give --topology \"<hwloc synthetic>\")")
    return from_hwloc(MACHINES[machine], name=machine)


def dumps(topo: Topology) -> str:
    return json.dumps(topo.to_json(), separators=(",", ":"))


# --- contexts a run may use (--contexts) ----------------------------------------
# Contexts that run something other than the measured tasks (the traffic
# source's own process, a pinned DPDK main lcore) must not be drawn, or the
# sample would measure interference from the harness.  `--contexts LIST`
# names the usable PU os_index values ("0-1", "2,4-7"); the sampling space
# becomes the hwloc tree with every other PU removed, so the sampler, the
# counting and the baselines all see the same restricted machine.
#
# What the embedded default traffic costs on this runtime: the source is
# net_pcap replaying a capture from memory inside R's own poll loop (no
# thread of its own), and DPDK's main lcore floats over the process's CPU
# set sleeping 1 ms between checks, so neither holds a context and the
# default is every PU of the machine.

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
