"""`pipeplace list`: the apps, the workloads and their input tiers."""
from __future__ import annotations

import json

from assign.workloads import known_workloads

from .catalog import TIERS, apps, build_dir_of, parts, tier_summary


def listing(args) -> int:
    build = build_dir_of(args.build)
    specs = known_workloads()
    app_rows = [{"app": a, "built": (build / "apps" / a / a).is_file(),
                 "workloads": [n for n, s in specs.items() if s.app == a]} for a in apps()]
    wl_rows = [{"workload": n, "app": s.app, "variant": s.variant, "traffic": s.source, "value": s.value_label,
                "unit": s.unit, "description": s.description, "file": str(s.file) if s.file else None,
                "tiers": {t: {"capture_packets": s.tiers[t].capture_packets or (
                              s.capture.default_packets if s.capture and s.capture.generator else None),
                              "packets": s.tiers[t].packets, "duration": s.tiers[t].duration,
                              **s.tiers[t].params} for t in TIERS if t in s.tiers}}
               for n, s in specs.items()]
    if args.json:
        print(json.dumps({"parts": parts(), "apps": app_rows, "workloads": wl_rows, "tiers": list(TIERS)},
                         indent=2))
        return 0
    print(f"apps (binaries in {build}; pipeplace build -p APP):")
    for r in app_rows:
        print(f"  {r['app']:<12} {'built' if r['built'] else 'not built':<10} "
              f"workloads: {', '.join(r['workloads']) or '-'}")
    print(f"parts (pipeplace build -p PART): {', '.join(parts())}")
    print("workloads (pipeplace run -a WORKLOAD -i TIER; yours: -a FILE.toml, assign/WORKLOADS.md):")
    for r in wl_rows:
        what = r["app"] + (f" {r['variant']}" if r["variant"] else "")
        print(f"  {r['workload']:<12} {what:<16} {r['description']}")
    print(f"tiers ({', '.join(TIERS)}): captures and windows in packets per instance "
          f"(tools/pipeplace/README.md: sizes and run times)")
    for n, s in specs.items():
        for t in TIERS:
            if t in s.tiers:
                print(f"  {n:<12} {t:<10} {tier_summary(s, t)}")
    return 0
