"""A run's value unit without importing the workloads: `assign estimate` at a
thousand draws spends less on its estimate than `import assign.workloads`
costs (25 ms: it reads and checks every packaged workload file)."""
from __future__ import annotations

from pathlib import Path

PACKAGED_DIR = Path(__file__).resolve().parent / "data" / "workloads"


def value_unit(name: str, params: dict | None = None) -> str:
    """The unit of a run's values: its workload file's value.unit (packets/s, MB/s, points/s), as the run
    stored it (params["workload"]), as the packaged file of that name says it, or as the workload is
    known here (a user's, read from its file in this process); packets/s otherwise."""
    stored = ((params or {}).get("workload") or {}).get("value") or {}
    if isinstance(stored, dict) and isinstance(stored.get("unit"), str) and stored["unit"]:
        return stored["unit"]
    path = PACKAGED_DIR / f"{name}.toml"
    if "/" not in name and path.is_file():
        import tomllib

        try:
            unit = tomllib.loads(path.read_text()).get("value", {}).get("unit")
        except (OSError, tomllib.TOMLDecodeError, AttributeError):
            unit = None
        if isinstance(unit, str) and unit:
            return unit
    from .workloads import WorkloadError, spec_of

    try:
        return spec_of(name).unit
    except WorkloadError:
        return "packets/s"
