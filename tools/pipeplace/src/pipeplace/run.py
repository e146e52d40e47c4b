"""`pipeplace run -a APP -i TIER`: one measured run of a workload on one of
its input tiers, with everything it needs set up and torn down around it.

The run is one measurement of assign's dpdk backend (assign/DPDK_BACKEND.md)
with the tier's capture size and window and one app process: the ports
(net_pcap replaying the tier's captures into net_null; a client workload's
veth pair, namespace and client, assign/WORKLOADS.md), the hugepages (a
hugetlbfs mounted when none is and this is root; the app falls back to
--no-huge by itself and the result says which it had; its hugepage files
removed after it), the app's work files.  Nothing is stored: `assign
sample` is the command that keeps measurements."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from assign.backends.base import BackendError
from assign.backends.dpdk.backend import DpdkBackend
from assign.backends.dpdk.options import DpdkOptions
from assign.baselines import linux_like
from assign.placement import contexts_of, load_placement, placement
from assign.topology import Topology, get_machine, restrict_topology
from assign.workloads import Workload, WorkloadError

from .catalog import UsageError, build_dir_of, default_cache_dir, resolve_workload


def default_contexts(topo: Topology, n_tasks: int) -> list[int]:
    """PU os_index per task: spread over the machine as a balanced scheduler
    would (assign's Linux-like baseline), leaving the first context to DPDK's
    main lcore and the system when the others are enough, sharing contexts
    when there are fewer than tasks."""
    os_index = [int(o) for o in topo.os_index]
    if len(os_index) - 1 >= n_tasks:
        topo = restrict_topology(topo, os_index[1:], "pipeplace's default placement")
        os_index = [int(o) for o in topo.os_index]
    return [os_index[c] for c in linux_like(topo, n_tasks)]


def ensure_hugetlbfs() -> str | None:
    """Mount hugetlbfs at /dev/hugepages when none is mounted and this is root
    (as tools/setup.sh does); what was done, or None.  The number of pages is
    the machine's (setup.sh, PIPEPLACE_HUGEPAGES): shared, so not changed here."""
    try:
        if any(ln.split()[2] == "hugetlbfs" for ln in Path("/proc/mounts").read_text().splitlines()):
            return None
    except (OSError, IndexError):
        return None
    if os.geteuid() != 0:
        return None
    Path("/dev/hugepages").mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "hugetlbfs", "nodev", "/dev/hugepages"], capture_output=True, text=True)
    return "mounted hugetlbfs at /dev/hugepages" if p.returncode == 0 else None


def plan(args) -> tuple[Workload, dict, str]:
    """The workload, the placement JSON and where the placement came from; usage errors raised."""
    r = resolve_workload(args.app)
    spec = r.spec
    if args.tier not in spec.tiers:
        raise UsageError(f"-i {args.tier}: workload {r.name} has no such tier (it has: {', '.join(spec.tiers)})")
    topo = get_machine("local")
    if args.placement:
        try:
            doc = load_placement(args.placement)
            workload, ctx, colocate = contexts_of(doc, args.placement, r.name)
        except (ValueError, WorkloadError) as e:
            raise UsageError(str(e)) from None
        if args.instances is not None and args.instances != workload.instances:
            raise UsageError(f"-n {args.instances}: --placement {args.placement} places "
                             f"{workload.instances} instance(s)")
        have = {int(o) for o in topo.os_index}
        absent = sorted(set(ctx) - have)
        if absent:
            raise UsageError(f"--placement {args.placement}: context(s) {absent} are not hardware contexts of this "
                             f"machine ({sorted(have)})")
        return workload, doc, args.placement
    workload = Workload(r.name, args.instances or 1)
    ctx = default_contexts(topo, workload.n_tasks)
    doc = placement(workload, ctx, len(set(ctx)) < len(ctx))
    return workload, doc, "default: spread as assign's Linux-like baseline"


def run(args) -> int:
    workload, doc, where = plan(args)
    spec = workload.spec
    tier = spec.tier(args.tier)
    mounted = ensure_hugetlbfs()
    opts = DpdkOptions(build_dir=build_dir_of(args.build), packets=tier.packets, duration=tier.duration,
                       capture_packets=tier.capture_packets, runner="process",
                       cache_dir=default_cache_dir())
    if not args.json:
        print(f"pipeplace run: {workload.name}, tier {tier.name}, {workload.instances} instance(s); placement: "
              + " ".join(f"{n}@{c}" for n, c in zip(workload.task_names(), _contexts(doc))) + f" ({where})",
              flush=True)
    try:
        with DpdkBackend(get_machine("local"), workload, opts, allow_colocate=doc.get("allow_colocate"),
                         tier=tier.name) as be:
            res = be.measure_placement(doc)
            traffic = be.describe()["traffic"]
    except BackendError as e:  # the build, the app or its traffic cannot be had: not the command line
        return _fail(args, workload, f"{e}", 1)
    if res.status != "ok":
        return _fail(args, workload, res.reason or "failed", 1)
    e = res.extra
    result = {"value": res.value, "unit": spec.unit, "value_is": spec.value_label, "kind": "measured",
              "window_s": e.get("window_s"), "wall_s": e.get("wall_s"), "overhead_s": e.get("overhead_s"),
              "forwarded_packets": sum(i.get("tx_packets") or 0 for i in e.get("instances", [])),
              "hugepages": e.get("hugepages"), "attempts": e.get("attempts"),
              "accounting_ok": True}  # a run whose rx != tx + dropped + queued is refused by the backend
    result.update(e.get("result", {}))
    if mounted:
        result["set_up"] = mounted
    if args.json:
        print(json.dumps({"app": workload.name, "tier": tier.name, "instances": workload.instances,
                          "placement": doc, "traffic": traffic, "result": result}, indent=2))
        return 0
    v = res.value
    shown = f"{v / 1e6:,.3f} Mpps" if spec.unit == "packets/s" else f"{v:,.3f} {spec.unit}"
    print(f"result: {shown} (measured: {spec.value_label})")
    print(f"  window {result['window_s']:.3f} s, run {result['wall_s']:.2f} s, "
          f"{result['forwarded_packets']:,} packets forwarded, hugepages {'yes' if e.get('hugepages') else 'no'}"
          + (f", {e['attempts']} attempts ({e.get('retried_after')})" if e.get("attempts", 1) > 1 else ""))
    for k, val in e.get("result", {}).items():
        print(f"  {k}: {val} (measured)")
    return 0


def _contexts(doc: dict) -> list[int]:
    return [int(i["tasks"][r]) for i in doc["instances"] for r in ("R", "P", "T")]


def _fail(args, workload: Workload, why: str, status: int) -> int:
    if args.json:
        print(json.dumps({"app": workload.name, "tier": args.tier, "result": None, "error": why}, indent=2))
    print(f"pipeplace run: {workload.name} tier {args.tier}: failed: {why}", file=sys.stderr)
    return status
