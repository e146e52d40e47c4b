"""`assign best`: the best assignment of a run as a placement JSON the apps run with."""
from __future__ import annotations

import argparse
import json

from ._args import output_file
from ._options import add_db
from ._save import save


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("best", help="write the best assignment of a run as a placement JSON",
                       description="The best stored assignment as a placement file the apps run with (contract 1, "
                                   "runtime/PLACEMENT.md): contexts are PU os_index; instance i receives on port 0 "
                                   "queue i and transmits on port 1 queue i.")
    add_db(p)
    p.add_argument("--out", required=True, type=output_file, metavar="FILE", help="placement JSON to write")
    return p


def run(args: argparse.Namespace) -> int:
    from ..placement import placement
    from ..store import Store
    from ..workloads import stored_workload

    with Store(args.db, readonly=True) as store:
        run = store.run(args.run)
        best = store.best(run.id)
    if best is None:
        raise ValueError(f"{args.db} run {run.id} holds no successful measurements")
    workload = stored_workload(run.workload, run.instances, run.params)
    doc = placement(workload, best.assignment, run.allow_colocate)
    if not save(args.out, lambda f: f.write(json.dumps(doc, indent=2) + "\n"), "placement"):
        return 1
    print(f"wrote {args.out}: best of {run.label()}: draw {best.idx}, {best.value:,.1f} packets/s ({run.kind})")
    return 0
