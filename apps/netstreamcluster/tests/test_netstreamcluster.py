"""netstreamcluster: the clustering core against the Python reference, bit
for bit (no root), and one end-to-end server run (root: namespaces, DPDK)
on the test tier through lwIP on net_af_packet, with a normal client, one
that closes mid-stream (and mid-record), one that resets mid-stream, one
announcing zero points and one with a bad header; each case counted and
every stream that got a receipt equal to the reference for the points it
delivered.  Fast: about 5 s in all, no timing asserted."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import netstreamcluster_input as nsi  # noqa: E402
import run_netstreamcluster as rs  # noqa: E402
import sc_reference  # noqa: E402


@pytest.fixture(scope="module")
def test_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nsi.input_file("test", 0, tmp_path_factory.mktemp("input"))


def test_core_matches_the_reference_bit_for_bit(build_dir: Path, test_input: Path, tmp_path: Path) -> None:
    """The C core (test_sc_core FILE: the app's chunking and clustering
    offline) and sc_reference.py on the test tier and on a stream of
    non-integer coordinates: the same centres, weights, z and cost."""
    exe = build_dir / "apps" / "netstreamcluster" / "tests" / "test_sc_core"
    frac = tmp_path / "frac.bin"
    pts = (struct.unpack("<%df" % (600 * 3), test_input.read_bytes()[32:32 + 600 * 3 * 4]))
    frac.write_bytes(struct.pack("<4sIQIHHQ", b"PPSC", 3, 600, 250, 3, 7, 11) +
                     struct.pack("<%df" % len(pts), *(v / 7.3 for v in pts)))
    for f in (test_input, frac):
        p = subprocess.run([str(exe), str(f)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout) == sc_reference.stream_result(f.read_bytes()), f


def test_input_tiers_are_deterministic(tmp_path: Path) -> None:
    import io
    a, b, c = io.BytesIO(), io.BytesIO(), io.BytesIO()
    nsi.write_input("test", 3, a)
    nsi.write_input("test", 3, b)
    nsi.write_input("test", 4, c)
    assert a.getvalue() == b.getvalue() != c.getvalue()
    assert len(a.getvalue()) == nsi.size("test") == 32 + 2048 * 8 * 4


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, DPDK)")
def test_end_to_end_with_bad_clients(build_dir: Path, test_input: Path, tmp_path: Path) -> None:
    data = test_input.read_bytes()
    h = sc_reference.read_header(data)
    rec = 4 * h.dim
    zero = tmp_path / "zero.bin"
    zero.write_bytes(nsi.HEADER.pack(b"PPSC", h.dim, 0, h.chunk, h.kmin, h.kmax, 5))
    bad = tmp_path / "bad.bin"
    bad.write_bytes(nsi.HEADER.pack(b"PPSC", 999, 10, h.chunk, h.kmin, h.kmax, 5) + bytes(4000))
    cut = 32 + 700 * rec + 5  # 700 points and 5 bytes of the next
    specs = [(test_input, []),
             (test_input, ["--mode", "short", "--cut", str(cut)]),
             (test_input, ["--mode", "reset", "--cut", str(32 + 1100 * rec), "--settle", "0.3"]),
             (bad, ["--timeout", "5"]),
             (zero, [])]
    r = rs.run(test_input, build=build_dir, timeout=60, keep=tmp_path, client_specs=specs,
               streams=4, extra=["--linger", "1"])
    assert "error" not in r, r
    assert r["app_exit"] == 0, r.get("app_stderr")
    assert r["accounting_ok"] is True
    normal, short, reset, badc, empty = r["client"]
    assert normal["receipts"][0] == {**normal["receipts"][0], "status": "complete",
                                      "points": 2048, "announced": 2048}
    assert short["receipts"][0] == {**short["receipts"][0], "status": "short", "points": 700}
    assert empty["receipts"][0] == {**empty["receipts"][0], "status": "complete", "points": 0}
    assert reset["receipts"] == [] and badc["receipts"] == [] and "error" in badc  # reset by the server
    # normal, short and empty compared with the reference (the short one for its 700 points)
    assert [s["matches_reference"] for s in r["streams"]] == [True] * 3, r["streams"]
    assert r["matches_reference"] is True
    a = r["app_stats"]
    st = a["streams"]
    assert st == {**st, "started": 4, "complete": 2, "short": 1, "reset": 1, "empty": 1,
                  "bad_header_reset": 1, "stored": 4, "store_failed": 0, "cut_by_run_end": 0}
    # input_bytes: the records' bytes (headers not counted); the short
    # stream's 5 bytes of a record that never ended are counted, not clustered
    assert a["partial_record_bytes"] == 5 and a["input_bytes"] == a["points"] * rec + 5
    assert a["receipts"]["not_sent_peer_gone"] == 1  # the reset client's
    # the reset stream: every whole point its TCP saw acknowledged was clustered
    out = Path(r["kept"]) / "out"
    results = [json.loads(p.read_text()) for p in out.glob("stream-*.json")]
    resets = [x for x in results if x["status"] == "reset"]
    assert len(resets) == 1
    acked = reset["bytes_acked"] - 1 - 32
    assert resets[0]["points"] >= acked // rec > 0
    assert resets[0] == {**resets[0], **sc_reference.stream_result(data, resets[0]["points"])}
