"""netferret end to end (root: namespaces, DPDK): the server on lwIP over
net_af_packet answers the test tier and the first queries of simsmall as
the Python reference does; on kernel sockets (the anchor) the test tier
too; and bad clients (a length over the limit, a negative length, bytes
that are not a JPEG, a truncated JPEG, a close and a reset mid-query, a
client that never reads its answer) are each answered or counted, while
the server keeps serving the normal client after them.  No timing
asserted."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import run_netferret as rn  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, DPDK)")


def ok_run(r: dict) -> None:
    assert "error" not in r, r
    assert r["app_exit"] == 0, r.get("app_stderr")
    assert r["accounting_ok"] is True


@pytest.mark.parametrize("stack", ["lwip", "kernel"])
def test_test_tier_matches_the_reference(build_dir: Path, nf_tier, stack: str) -> None:
    r = rn.run(nf_tier("test"), build=build_dir, stack=stack, timeout=120)
    ok_run(r)
    assert r["matches_reference"] is True and r["queries"] == 1, r.get("differences")
    q = r["app_stats"]["queries"]
    assert q == {**q, "received": 1, "answered": 1, "ok": 1, "end_tags": 1}
    st = r["app_stats"]["stages"]
    assert set(st["share"]) == {"decode", "segment", "extract", "index", "rank"}
    assert abs(sum(st["share"].values()) - 1) < 1e-9 and all(v > 0 for v in st["cycles"].values())


def test_simsmall_subset_matches_the_reference(build_dir: Path, nf_tier) -> None:
    """The first 5 queries of simsmall, two connections at once, two instances sharing
    the database."""
    r = rn.run(nf_tier("simsmall"), build=build_dir, clients=2, instances=2, subset=5, timeout=300)
    ok_run(r)
    assert r["matches_reference"] is True and r["reference_checked"] == 5, r.get("differences")
    assert r["queries"] == 5 and r["app_stats"]["answers"]["sent"] == 5
    assert r["precision_at_k"] >= 0.8


def test_bad_clients_are_answered_or_counted(build_dir: Path, nf_tier, tmp_path: Path) -> None:
    d = nf_tier("test")
    answers = tmp_path / "answers.txt"
    specs = [["--mode", "too_long"], ["--mode", "bad_length"], ["--mode", "not_jpeg"],
             ["--mode", "truncated"], ["--mode", "close_mid"], ["--mode", "reset_mid"],
             ["--mode", "never_reads", "--timeout", "60"],
             ["--threads", "1", "--out", str(answers)]]
    r = rn.run(d, build=build_dir, client_specs=specs, timeout=120, extra=["--idle-timeout", "2"],
               keep=tmp_path)
    ok_run(r)
    too_long, bad_length, not_jpeg, truncated, close_mid, reset_mid, never, normal = r["client"]
    assert too_long["answer"] == "!too_long" and bad_length["answer"] == "!bad_length"
    assert not_jpeg["answer"] == "!not_jpeg" and truncated["answer"] == "!truncated_jpeg"
    assert close_mid["answer"] == "!truncated_query"
    assert "answer" not in reset_mid
    assert never["closed_by_server"] is True and never["unread_bytes"] > 4  # answered, never read
    # the server kept serving: the normal client's answer is the reference's
    assert normal["answered"] == 1 and r["matches_reference"] is True
    a = r["app_stats"]
    q = a["queries"]
    assert q == {**q, "too_long": 1, "bad_length": 1, "not_jpeg": 1, "truncated_jpeg": 1, "ok": 2,
                 "truncated_query": 1, "reset_mid_query": 1, "end_tags": 1}
    assert q["idle_closed"] == 1  # the client that never read, once its answer was acknowledged
    assert a["answers"]["errors_sent"] == 3 and a["answers"]["sent"] == 4  # P's: not_jpeg, truncated, 2 ok
    assert a["answers"]["not_sent_no_room"] == 0
