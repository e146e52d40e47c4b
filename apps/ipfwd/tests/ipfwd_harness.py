"""ipfwd's side of the test harness (tests/harness/): its binary, its
placements, and run_ipfwd on top of harness.run_app."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

import harness
from harness import SANITIZER_MARKS, Result, instance, sanitizer_env  # noqa: F401 (re-exported)


def ipfwd_binary(build_dir: Path) -> Path:
    return harness.app_binary(build_dir, "ipfwd")


def build_sanitizers(build_dir: Path) -> str:
    opts = json.loads((build_dir / "meson-info" / "intro-buildoptions.json").read_text())
    return next((str(o["value"]) for o in opts if o["name"] == "b_sanitize"), "none")


def placement(instances: list[dict[str, Any]], variant: str | None = "l1",
              colocate: bool = True) -> dict[str, Any]:
    return harness.placement("ipfwd", instances, variant=variant, colocate=colocate)


def run_ipfwd(build_dir: Path, file_prefix: str, tmp: Path, vdevs: list[str],
              place: dict[str, Any] | None, args: list[str], timeout: float = 120,
              eal: list[str] | None = None) -> Result:
    return harness.run_app(ipfwd_binary(build_dir), file_prefix, tmp, vdevs, place, args,
                           timeout=timeout, eal=eal or [], stats=tmp / "stats.json")


def assert_like_reference(stats: dict[str, Any], sent: list[bytes], pkts: list[bytes],
                          reference: Callable[[bytes], bytes | str],
                          reasons: Iterable[str]) -> Counter[str]:
    """Every frame ipfwd sent (sent, in order) equals what the reference
    makes of the input frames pkts, and every drop reason counts what the
    reference drops for it (instance 0).  The reference's drop counts."""
    want, drops = [], Counter()
    for p in pkts:
        r = reference(p)
        if isinstance(r, str):
            drops[r] += 1
        else:
            want.append(r)
    assert len(sent) == len(want)
    for i, (g, w) in enumerate(zip(sent, want)):
        assert g == w, f"packet {i}: ipfwd sent {g.hex()}, reference {w.hex()}"
    st = stats["instances"][0]
    assert st["rx_packets"] == len(pkts) and st["tx_packets"] == len(want)
    for reason in reasons:
        assert st["dropped_by_reason"][reason] == drops[reason], reason
    assert st["accounting_ok"] is True
    return drops
