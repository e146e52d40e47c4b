#!/usr/bin/env python3
"""Runs netdedup end to end and prints one JSON result: makes the input
(a tier, or a file), two network namespaces (the server's and the
client's) joined by a veth pair or a net_tap interface, starts netdedup
with a placement in the server's namespace, runs the clients in the
other, restores every stream with the decoder, compares it with the input
byte for byte, and removes everything it made, also when something fails.

    python3 apps/netdedup/run_netdedup.py --tier test --json
    python3 apps/netdedup/run_netdedup.py --tier simsmall --port tap --clients 2
    python3 apps/netdedup/run_netdedup.py --tier test --loss 1      # 1% loss each way
    python3 apps/netdedup/run_netdedup.py --tier test --stack kernel
    python3 apps/netdedup/run_netdedup.py --check OUT --client-json c.json --input in.bin

--check only does the last part, for a harness that ran server and client
itself (pipeplace's workload file): restores every stream the client's
JSON line has a receipt for from the directory netdedup wrote (--out),
compares each with --input, and prints restored_identical, input_bytes and
mb_per_s; exit 1 when a stream is not identical.

Layout (names start with pp41s-<pid> / pp41s<pid>; addresses from
198.18.0.0/15, nothing routed):

    [ns ...-s]  netdedup (R on lwIP: net_af_packet on the veth, or net_tap)
       veth ...s  <---->  veth ...c   (or the tap, moved into ns ...-c)
    [ns ...-c]  198.18.41.2: the clients, on the kernel's stack

--stack kernel runs the same pipeline on kernel sockets (the veth's server
end then has 198.18.41.1), the anchor bench/netdedup.py compares with.
The result says whether each figure is measured; mb_per_s is the input's
bytes (10^6) over the clients' wall time, from the first byte sent to the
last receipt read.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "runtime" / "stack"))
import netdedup_decode  # noqa: E402
import netns_harness as h  # noqa: E402
import netdedup_input  # noqa: E402
import runner_cli  # noqa: E402
import tier_input  # noqa: E402

PREFIX = "pp41s"  # this branch's namespaces and interfaces
SERVER_IP, CLIENT_IP, PREFIX_LEN, PORT = "198.18.41.1", "198.18.41.2", 24, 9041


LAYOUT = h.Layout(PREFIX, SERVER_IP, CLIENT_IP, PREFIX_LEN, PORT)
RunError, stop, default_placement = h.RunError, h.stop, h.default_placement


def network(port: str, middle: bool = False) -> contextlib.AbstractContextManager[h.Net]:
    """netdedup's namespaces and veths (runtime/stack/netns_harness.py)."""
    return h.network(LAYOUT, port, middle)


def run(input_path: Path, tier: str | None, *, stack: str = "lwip", port: str = "af_packet",
        clients: int = 1, instances: int = 1, placement: Path | None = None,
        loss: float = 0.0, build: Path = REPO / "build", keep: Path | None = None,
        write: bool = True, timeout: float = 300, extra: list[str] | None = None,
        client_specs: list[tuple[Path, list[str]]] | None = None, streams: int | None = None,
        check: bool = True, app_env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run; returns the result object (see the module text).
    client_specs: instead of `clients` clients sending the input at once,
    one client per (file, netdedup_client.py options), one after another
    (the bad clients of the tests); streams: what the server waits for
    (--streams), by default one per client."""
    if client_specs and keep is None:
        raise RunError("client_specs: pass keep=DIR to read the streams afterwards")

    def argv(path: Path, args: list[str]) -> list[str]:
        return [sys.executable, str(HERE / "netdedup_client.py"), "--server", f"{SERVER_IP}:{PORT}",
                "--file", str(path), "--timeout", str(timeout), *args]

    specs = client_specs or [(input_path, [])] * clients

    def after(result: dict[str, Any], out_dir: Path | None) -> None:
        receipts = result["receipts"]
        if write and check and not client_specs:
            result["streams"] = verify(out_dir, receipts, input_path)
            result["restored_identical"] = bool(receipts) and all(
                s["identical"] for s in result["streams"]) and len(receipts) == clients

    res = {"input": str(input_path), "restored_identical": False}
    res.update(h.serve(LAYOUT, build / "apps" / "netdedup" / "netdedup", app="netdedup",
                       clients=[argv(f, a) for f, a in specs], sequential=bool(client_specs),
                       stack=stack, port=port, instances=instances, placement=placement,
                       loss=loss, keep=keep, write=write, timeout=timeout, extra=extra,
                       streams=streams, app_env=app_env, after=after))
    res["clients"] = clients
    return res


def verify(out_dir: Path | None, receipts: list[dict[str, Any]], input_path: Path) -> list[dict[str, Any]]:
    """Every receipted stream restored and compared with the input."""
    assert out_dir is not None
    want = tier_input.sha256_file(input_path)
    index = netdedup_decode.scan(out_dir)
    res = []
    for r in receipts:
        if "stream" not in r:
            res.append({"receipt": r, "identical": False})
            continue
        h = hashlib.sha256()

        class Sink:
            def write(self, b: bytes) -> None:
                h.update(b)
        try:
            d = netdedup_decode.decode(out_dir, r["stream"], Sink(), index)  # type: ignore[arg-type]
            d["identical"] = h.hexdigest() == want and d["status"] == "complete"
        except netdedup_decode.DecodeError as e:
            d = {"stream": r["stream"], "error": str(e), "identical": False}
        res.append(d)
    return res


def check(out_dir: Path, client_json: Path, input_path: Path) -> dict[str, Any]:
    """--check: the figures of a run someone else made."""
    fig = h.client_figures([json.loads(ln) for ln in runner_cli.client_lines(client_json)])
    streams = verify(out_dir, fig["receipts"], input_path)
    return {"kind": "measured", "input_bytes": fig["input_bytes"], "seconds": fig["seconds"],
            "mb_per_s": fig["mb_per_s"],
            "restored_identical": bool(fig["receipts"]) and all(x["identical"] for x in streams),
            "streams": streams}


CLI = runner_cli.RunnerCli(
    app="netdedup", doc=__doc__, tiers=netdedup_input.TIERS, input_file=netdedup_input.input_file,
    run=run, check=check, ok="restored_identical",
    summary=lambda tier, r: (
        f"netdedup {tier}: {r['input_bytes']} bytes, restored identical: "
        f"{r['restored_identical']}, {r['mb_per_s'] or 0:.1f} MB/s (measured), "
        f"stack {r['stack']} port {r['port']}"),
    check_help="only restore and compare what netdedup wrote to DIR (needs --input and "
               "--client-json)",
    input_help="a file to send instead of a tier",
    keep_help="keep the run's files (output, stats) under here")


if __name__ == "__main__":
    sys.exit(runner_cli.main(CLI))
