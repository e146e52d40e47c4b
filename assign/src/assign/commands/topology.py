"""`assign topology`: the machine as assign sees it (hwloc)."""
from __future__ import annotations

import argparse

from ._options import add_machine, topology_of


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("topology", help="show the machine as assign sees it (hwloc)")
    add_machine(p)
    return p


def run(args: argparse.Namespace) -> int:
    from ..topology import LEVELS

    topo = topology_of(args)
    print(topo.summary())
    print(f"{topo.n_contexts} hardware contexts (PU os_index): {' '.join(str(int(o)) for o in topo.os_index)}")
    ids = topo.level_ids
    for lvl in range(1, len(LEVELS) - 1):
        groups: dict[int, list[int]] = {}
        for v in range(topo.n_contexts):
            groups.setdefault(int(ids[lvl][v]), []).append(int(topo.os_index[v]))
        print(f"  {LEVELS[lvl]:8s} {len(groups):3d} x: " + " | ".join(",".join(map(str, g)) for g in groups.values()))
    return 0
