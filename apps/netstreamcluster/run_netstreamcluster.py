#!/usr/bin/env python3
"""Runs netstreamcluster end to end and prints one JSON result: makes the
input (a tier, or a file), the two network namespaces of
runtime/stack/netns_harness.py (server and clients, a veth pair with
net_af_packet on the server's end, or net_tap), starts netstreamcluster
with a placement, runs the clients, compares every stream's result with
the Python reference (sc_reference.py: the same centres, weights and cost,
bit for bit), and removes everything it made, also when something fails.

    python3 apps/netstreamcluster/run_netstreamcluster.py --tier test
    python3 apps/netstreamcluster/run_netstreamcluster.py --tier simsmall --json
    python3 apps/netstreamcluster/run_netstreamcluster.py --check OUT --client-json c.json --input in.bin

--check only does the comparison, for a harness that ran server and client
itself (pipeplace's workload file).  Addresses: the server 198.18.42.1/24,
the clients 198.18.42.2, TCP port 9042; names start with pp42s.  The
figures are measured: mb_per_s and points_per_s are the input's bytes
(10^6) and points over the clients' wall time, first byte sent to last
receipt read.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "runtime" / "stack"))
import netns_harness as h  # noqa: E402
import netstreamcluster_input  # noqa: E402
import runner_cli  # noqa: E402
import sc_reference  # noqa: E402

LAYOUT = h.Layout("pp42s", "198.18.42.1", "198.18.42.2", 24, 9042)
RunError = h.RunError


def compare(out_dir: Path | None, receipts: list[dict[str, Any]], input_path: Path) -> list[dict[str, Any]]:
    """Each receipted stream's result against the reference for the points
    the receipt says arrived."""
    data = input_path.read_bytes()
    res = []
    for r in receipts:
        if "stream" not in r or out_dir is None:
            res.append({"receipt": r, "matches_reference": False})
            continue
        path = out_dir / f"stream-{r['stream']}.json"
        try:
            got = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            res.append({"stream": r["stream"], "error": f"{path}: {e}", "matches_reference": False})
            continue
        want = sc_reference.stream_result(data, r["points"])
        same = all(got.get(k) == v for k, v in want.items())
        res.append({"stream": r["stream"], "status": got.get("status"), "points": got.get("points"),
                    "k": got.get("k"), "cost": got.get("cost"), "matches_reference": same,
                    **({} if same else {"app": got, "reference": want})})
    return res


def figures(result: dict[str, Any], points: int) -> None:
    s = result.get("seconds") or 0
    result["points"] = points
    result["points_per_s"] = points / s if s > 0 else None


def run(input_path: Path, *, stack: str = "lwip", port: str = "af_packet", clients: int = 1,
        instances: int = 1, placement: Path | None = None, loss: float = 0.0,
        build: Path = REPO / "build", keep: Path | None = None, timeout: float = 300,
        extra: list[str] | None = None, client_specs: list[tuple[Path, list[str]]] | None = None,
        streams: int | None = None) -> dict[str, Any]:
    """One run; returns the result.  client_specs: instead of `clients`
    clients sending the input at once, one client per (file,
    netstreamcluster_client.py options), one after another (the bad
    clients of the tests), their receipts' streams compared against the
    reference of their own file."""
    def argv(path: Path, args: list[str]) -> list[str]:
        return [sys.executable, str(HERE / "netstreamcluster_client.py"), "--server",
                f"{LAYOUT.server_ip}:{LAYOUT.port}", "--file", str(path), "--timeout", str(timeout),
                *args]

    specs = client_specs or [(input_path, [])] * clients

    def after(result: dict[str, Any], out_dir: Path | None) -> None:
        streams_ = []
        for (path, _), out in zip(specs, result["client"]):
            streams_ += compare(out_dir, out.get("receipts", []), path)
        result["streams"] = streams_
        ok = [s["matches_reference"] for s in streams_]
        result["matches_reference"] = bool(ok) and all(ok) and \
            (client_specs is not None or len(ok) == clients)

    res: dict[str, Any] = {"input": str(input_path), "matches_reference": False}
    res.update(h.serve(LAYOUT, build / "apps" / "netstreamcluster" / "netstreamcluster",
                       app="netstreamcluster", clients=[argv(f, a) for f, a in specs],
                       sequential=client_specs is not None, stack=stack, port=port,
                       instances=instances, placement=placement, loss=loss, keep=keep,
                       timeout=timeout, extra=extra, streams=streams, after=after))
    figures(res, (res.get("app_stats") or {}).get("points", 0))
    return res


def check(out_dir: Path, client_json: Path, input_path: Path) -> dict[str, Any]:
    """--check: the comparison and figures of a run someone else made."""
    fig = h.client_figures([json.loads(ln) for ln in runner_cli.client_lines(client_json)])
    streams = compare(out_dir, fig["receipts"], input_path)
    res = {"kind": "measured", **{k: fig[k] for k in ("input_bytes", "seconds", "mb_per_s")},
           "matches_reference": bool(streams) and all(s["matches_reference"] for s in streams),
           "streams": streams}
    figures(res, sum(r.get("points", 0) for r in fig["receipts"]))
    return res


CLI = runner_cli.RunnerCli(
    app="netstreamcluster", doc=__doc__, tiers=netstreamcluster_input.TIERS,
    input_file=netstreamcluster_input.input_file,
    run=lambda path, _tier, **options: run(path, **options), check=check, ok="matches_reference",
    summary=lambda tier, r: (
        f"netstreamcluster {tier}: {r['points']} points ({r['input_bytes']} bytes), "
        f"matches reference: {r['matches_reference']}, {r['mb_per_s'] or 0:.2f} MB/s, "
        f"{r['points_per_s'] or 0:.0f} points/s (measured), stack {r['stack']} port {r['port']}"),
    check_help="only compare what netstreamcluster wrote to DIR (needs --input and --client-json)",
    input_help="a stream file to send instead of a tier",
    keep_help="keep the run's files (results, stats) under here")


if __name__ == "__main__":
    sys.exit(runner_cli.main(CLI))
