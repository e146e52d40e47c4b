#!/usr/bin/env python3
"""Runs netferret end to end and prints one JSON result: makes the tier
(netferret_input.py, cached and checked by digest), the two network
namespaces of runtime/stack/netns_harness.py (server and client, a veth
pair with net_af_packet on the server's end, or net_tap), starts
netferret with a placement and the tier's database, runs the client
(--clients: its connections at once), compares every answer with the
Python reference pipeline (nf_reference.py: the same images, distances to
1e-5), and removes everything it made, also when something fails.

    python3 apps/netferret/run_netferret.py --tier test
    python3 apps/netferret/run_netferret.py --tier simsmall --clients 2 --json
    python3 apps/netferret/run_netferret.py --check DIR --client-json c.json --input TIER_DIR

--check only does the comparison, for a harness that ran server and client
itself (pipeplace's workload file).  The reference takes about 0.4 s a
query: tiers of more than 64 queries are checked on their first 64
(`reference_checked` says how many).  Addresses: the server
198.18.43.1/24, the client 198.18.43.2, TCP port 42285 (PARSEC's); names
start with pp43f.  The figures are measured: queries_per_s is the queries
answered over the client's wall time, first connect to last answer;
p50_ms and p99_ms the client's per-query latency, connect to the
answer's last byte.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "runtime" / "stack"))
import netferret_input as ni  # noqa: E402
import netns_harness as h  # noqa: E402
import nf_reference as ref  # noqa: E402
import runner_cli  # noqa: E402

LAYOUT = h.Layout("pp43f", "198.18.43.1", "198.18.43.2", 24, 42285)
RunError = h.RunError
REFERENCE_MAX = 64


def compare(answers: list[str], tier: Path, limit: int | None = REFERENCE_MAX,
            pack: Path | None = None) -> dict[str, Any]:
    """The client's answer lines (ferret's format) against the reference, for the first
    `limit` queries (None: all) of the tier (or of the queries pack the client sent).
    Every query sent must have its line."""
    db = ref.read_db(tier / "db.bin")
    queries = ni.read_pack(pack or tier / "queries.pack")
    got = {}
    for line in answers:
        name, tab, rest = line.partition("\t")
        got[name] = tab + rest if tab else rest
    missing = [n for n, _ in queries if n not in got]
    checked, diffs = queries[:limit], []
    for name, jpeg in checked:
        if name not in got:
            continue
        want = ref.query(db, jpeg, db.top_k).top
        ans = ref.parse_answer(got[name])
        if not ref.same_answer(ans, want):
            diffs.append({"query": name, "server": got[name][:2000],
                          "reference": "".join(f"\t{n}:{d:.9g}" for n, d in want)})
    precision = [sum(ref.category(n) == ref.category(q) for n, _ in a) / db.top_k
                 for q, a in ((q, ref.parse_answer(got[q])) for q, _ in queries if q in got) if not isinstance(a, str)]
    return {"matches_reference": not missing and not diffs, "reference_checked": len(checked),
            "queries_in_tier": len(queries), "missing_answers": missing[:20], "differences": diffs[:5],
            "precision_at_k": sum(precision) / len(precision) if precision else None}


def figures(result: dict[str, Any], client: dict[str, Any]) -> None:
    lat = client.get("latency_ms") or {}
    result.update({"queries": client.get("answered", 0), "queries_per_s": client.get("queries_per_s"),
                   "p50_ms": lat.get("p50"), "p99_ms": lat.get("p99")})


def run(tier: Path, *, stack: str = "lwip", port: str = "af_packet", clients: int = 1, instances: int = 1,
        placement: Path | None = None, loss: float = 0.0, build: Path = REPO / "build",
        keep: Path | None = None, timeout: float = 300, extra: list[str] | None = None,
        client_specs: list[list[str]] | None = None, queries: int | None = None,
        check: bool = True, repeat: int = 1, subset: int | None = None) -> dict[str, Any]:
    """One run; returns the result.  client_specs: instead of the one normal client,
    one client per list of netferret_client.py options, one after another (the bad
    clients of the tests; the last should be a normal one, whose answers are compared).
    queries: the server's --streams (answers to make before it ends); by default
    only the normal client's end tag ends it, as PARSEC's.  subset: the client sends
    the tier's first N queries only."""
    man = json.loads((tier / "manifest.json").read_text())
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pp43f-answers-", dir=keep))
    answers = work / "answers.txt"
    pack = None
    if subset is not None:
        pack = work / "queries.pack"
        ni.write_pack(pack, iter(ni.read_pack(tier / "queries.pack")[:subset]), subset)

    def argv(args: list[str]) -> list[str]:
        return [sys.executable, str(HERE / "netferret_client.py"), "--server",
                f"{LAYOUT.server_ip}:{LAYOUT.port}", "--input", str(pack or tier), "--timeout", str(timeout),
                *args]

    specs = client_specs or [["--threads", str(clients), "--repeat", str(repeat), "--out", str(answers)]]
    normal = [i for i, s in enumerate(specs) if "--mode" not in s]

    def after(result: dict[str, Any], _out: Path | None) -> None:
        if not normal:
            return
        client = result["client"][normal[-1]]
        figures(result, client)
        out = Path(client.get("out") or answers)
        if check and out.is_file():
            result.update(compare(out.read_text().splitlines(), tier, None if subset else REFERENCE_MAX,
                                  pack))

    res: dict[str, Any] = {"tier": man["tier"], "input": str(tier), "matches_reference": False}
    try:
        res.update(h.serve(LAYOUT, build / "apps" / "netferret" / "netferret", app="netferret",
                           clients=[argv(s) for s in specs], sequential=client_specs is not None,
                           stack=stack, port=port, instances=instances, placement=placement, loss=loss,
                           keep=keep, write=False, timeout=timeout,
                           extra=["--db", str(tier / "db.bin"), *(extra or [])],
                           streams=queries or 1 << 40, after=after))
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return res


def check(out_dir: Path, client_json: Path, tier: Path) -> dict[str, Any]:
    """--check: the comparison and figures of a run someone else made (its client wrote
    its answers where its JSON says)."""
    client = json.loads(runner_cli.client_lines(client_json)[-1])
    path = Path(client.get("out") or out_dir / "answers.txt")
    res: dict[str, Any] = {"kind": "measured", "tier": json.loads((tier / "manifest.json").read_text())["tier"]}
    figures(res, client)
    res.update(compare(path.read_text().splitlines(), tier))
    return res


CLI = runner_cli.RunnerCli(
    app="netferret", doc=__doc__, tiers=ni.TIERS,
    input_file=lambda tier, seed, cache: ni.input_file(tier, seed, cache),
    run=lambda path, _tier, **options: run(path, **options), check=check, ok="matches_reference",
    summary=lambda tier, r: (
        f"netferret {tier}: {r.get('queries')} queries, matches reference: {r['matches_reference']} "
        f"({r.get('reference_checked')} checked), {r.get('queries_per_s') or 0:.1f} queries/s, "
        f"p50 {r.get('p50_ms') or 0:.1f} ms, p99 {r.get('p99_ms') or 0:.1f} ms (measured), "
        f"precision at K {r.get('precision_at_k') or 0:.3f}, stack {r['stack']} port {r['port']}"),
    check_help="only compare the answers of a run someone else made (needs --input and --client-json)",
    input_help="a tier's directory (netferret_input.py) instead of --tier",
    keep_help="keep the run's files (answers, stats) under here")


if __name__ == "__main__":
    sys.exit(runner_cli.main(CLI))
