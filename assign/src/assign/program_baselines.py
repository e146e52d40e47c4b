"""The program's own answers as baselines (assign/WORKLOADS.md, [[baselines]]):
for a program we did not write, `assign baselines` adds the bars its file
names beside the optimum, measured with the run's protocol and stored in
the run's baselines (names "program:NAME", or "compare:program:NAME" for
`--measured`), so that nothing is measured twice:

* in_order: task i on the i-th context, what the program's guide shows
  (l3fwd's and testpmd's `-l 1-N`);
* place: the program's own automatic choice through its control interface
  (OVS: a PMD on every allowed core, rx queues by pmd-rxq-assign=cycles),
  its threads read back as one CPU each among the run's contexts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import Run, Store


def program_bars(store: Store, run: Run, reps: int = 1, build: str | None = None, runner: str | None = None,
                 timeout: float | None = None) -> list[dict]:
    """The bars of a program's [[baselines]] (none for an app on the runtime), as baselines.Baseline's
    fields; each measured `reps` times on first use, its mean stored."""
    from .backends.base import summarize
    from .workloads import stored_workload

    spec = stored_workload(run.workload, run.instances, run.params).spec
    if spec.program is None or not spec.program.baselines or run.backend != "dpdk":
        return []
    prefix = "program:" if reps == 1 else "compare:program:"
    be = None
    out = []
    try:
        for b in spec.program.baselines:
            key = prefix + b.name
            got = store.baseline(run.id, key)
            note = " (stored earlier)"
            if got is None:
                note = ""
                if be is None:
                    from .run_backend import backend_for_run

                    be = backend_for_run(run, build=build, runner=runner, timeout=timeout)
                ctx = be.in_order()
                values, reasons, threads = [], [], None
                for _ in range(reps):
                    if b.in_order:
                        r = be.measure_one(ctx)
                    else:
                        r = be.measure_tasks(dict(zip(be.prog.task_names, ctx)), pattern=b.threads,
                                             commands=b.place)
                    if r.status == "ok":
                        values.append(float(r.value))
                        threads = r.extra.get("threads")
                    else:
                        reasons.append(r.reason or "")
                s = summarize(values)
                extra = {"kind": "measured", "reps": reps, "values": values, "failures": reasons, "summary": s,
                         "about": b.about, "threads": threads}
                assignment = ctx if b.in_order else []
                if values:
                    store.add_baseline(run.id, key, assignment, s["mean"], "ok", None, extra)
                else:
                    store.add_baseline(run.id, key, assignment, None, "failed",
                                       f"all {reps} measurements failed: {reasons[0]}", extra)
                got = store.baseline(run.id, key)
            if got.status != "ok":
                out.append({"name": b.name, "value": None, "note": f"{b.about}: measurement failed: {got.reason}",
                            "label": "measured"})
                continue
            s = got.extra.get("summary", {})
            n = s.get("n", 1)
            out.append({"name": b.name, "value": got.value, "note": f"{b.about} (mean of {n} measurement(s){note})",
                        "label": "measured", "sd": s.get("std") if n > 1 else None,
                        "contexts": got.assignment or None})
    finally:
        if be is not None:
            be.close()
    return out
