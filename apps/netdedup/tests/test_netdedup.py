"""netdedup end to end: the test tier through the user-level stack (lwIP on
net_af_packet and on net_tap) and through the kernel-socket anchor, with
1% loss on the wire, and the bad clients (disconnect mid-stream, stream
shorter than announced, a full dedup table, a client that never reads),
each in its own network namespaces (apps/netdedup/run_netdedup.py), each
restored by the decoder and compared byte for byte.  Needs root."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import netdedup_decode  # noqa: E402
import netdedup_input  # noqa: E402
import run_netdedup as rn  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, DPDK)")


@pytest.fixture(scope="module")
def test_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return netdedup_input.input_file("test", 0, tmp_path_factory.mktemp("input"))


def check_round_trip(r: dict, size: int) -> None:
    assert "error" not in r, r
    assert r["app_exit"] == 0, r.get("app_stderr")
    assert r["accounting_ok"] is True
    assert r["restored_identical"] is True, r["streams"]
    assert r["receipts"] == [{"stream": r["receipts"][0]["stream"], "status": "complete",
                              "stored": size, "announced": size}]
    a = r["app_stats"]
    assert a["input_bytes"] == size and a["streams"]["complete"] == 1
    # the tier repeats blocks: something deduplicated, and less stored than came in
    assert a["chunks"]["duplicate"] > 0 and a["chunks"]["raw_bytes"] == size
    assert a["output"]["bytes"] < size and a["output"]["sequence_gaps"] == 0


@pytest.mark.parametrize("port", ["af_packet", "tap"])
def test_test_tier_through_lwip(build_dir: Path, test_input: Path, port: str) -> None:
    r = rn.run(test_input, "test", port=port, build=build_dir, timeout=120)
    check_round_trip(r, test_input.stat().st_size)
    st = r["app_stats"]["stack"]
    assert st["stack"].startswith("lwip") and st["rx_frames"] > test_input.stat().st_size // 1500
    assert st["connections_accepted"] == 1 and st["rx_frames_dropped"] == 0


def test_test_tier_through_kernel_sockets(build_dir: Path, test_input: Path) -> None:
    r = rn.run(test_input, "test", stack="kernel", build=build_dir, timeout=120)
    check_round_trip(r, test_input.stat().st_size)
    assert r["app_stats"]["stack"]["stack"] == "kernel sockets"


def test_client_runs_on_the_contexts_the_placement_leaves(build_dir: Path, test_input: Path,
                                                          tmp_path: Path) -> None:
    """R, P and T on one context: the client and its interface's receive
    work (RPS) go to the others, the run says where, and how busy every
    context was during the transfer."""
    ctx = sorted(os.sched_getaffinity(0))
    if len(ctx) < 2:
        pytest.skip("one context: nothing to steer the client to")
    place = tmp_path / "fused.json"
    place.write_text(json.dumps({
        "app": "netdedup", "allow_colocate": True,
        "instances": [{"rx": {"port": 0, "queue": 0}, "tx": {"port": 0, "queue": 0},
                       "tasks": {"R": ctx[-1], "P": ctx[-1], "T": ctx[-1]}}]}))
    r = rn.run(test_input, "test", placement=place, build=build_dir, timeout=120)
    check_round_trip(r, test_input.stat().st_size)
    steer = r["client_rx_steering"]
    assert steer["contexts"] == ctx[:-1], steer
    assert "rps_cpus" in steer["how"]
    cpu = r["cpu"]
    assert cpu is not None and cpu["kind"] == "measured"
    assert set(cpu["per_context"]) == {str(c) for c in ctx}
    assert all(v >= 0 for v in cpu["per_context"].values()), cpu  # ticks: no tighter bound on a short run


def test_one_percent_loss_still_exact(build_dir: Path, test_input: Path) -> None:
    """1% loss each way (tc netem on the veth; where the kernel has no
    netem, every 100th frame each way on a bridge between the ends), three
    clients at once: with netem's random loss, the chance that none of
    their 2,200 data frames is dropped is 3e-10."""
    r = rn.run(test_input, "test", loss=1.0, clients=3, build=build_dir, timeout=120)
    size = test_input.stat().st_size
    assert "error" not in r and r["app_exit"] == 0, r.get("error") or r.get("app_stderr")
    assert r["accounting_ok"] is True and r["restored_identical"] is True, r["streams"]
    assert sorted(x["status"] for x in r["receipts"]) == ["complete"] * 3
    assert {x["stored"] for x in r["receipts"]} == {size}
    assert r["app_stats"]["input_bytes"] == 3 * size
    assert r["app_stats"]["stack"]["connections_accepted"] == 3
    dropped = r["loss"]["dropped_frames"]
    assert dropped["client_to_server"] > 0, r["loss"]


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_bad_clients(build_dir: Path, test_input: Path, tmp_path: Path) -> None:
    """One server, a 64-slot dedup table (full after the first few dozen
    chunks), and in turn: a normal client, one that closes after 300,000 of
    the announced bytes, one that resets after 400,000, and one that sends
    3,000 small streams on one connection and never reads a receipt.
    Everything received is stored and restores exactly; each case is
    counted and says what happened."""
    data = test_input.read_bytes()
    small = tmp_path / "small.bin"
    small.write_bytes(data[:24])
    n_noread = 3000
    specs = [(test_input, []),
             (test_input, ["--mode", "short", "--cut", "300000"]),
             (test_input, ["--mode", "reset", "--cut", "400000", "--settle", "0.3"]),
             (small, ["--mode", "noread", "--streams", str(n_noread), "--hold", "60"])]
    r = rn.run(test_input, "test", build=build_dir, timeout=120, keep=tmp_path,
               client_specs=specs, streams=3 + n_noread,
               extra=["--table-entries", "64", "--linger", "1"])
    assert "error" not in r, r
    assert r["app_exit"] == 0, r.get("app_stderr")
    assert r["accounting_ok"] is True
    normal, short, reset, noread = r["client"]
    a = r["app_stats"]
    st = a["streams"]
    assert st == {**st, "started": 3 + n_noread, "complete": 1 + n_noread, "short": 1,
                  "reset": 1, "cut_by_run_end": 0, "stored": 3 + n_noread, "store_failed": 0}
    assert a["chunks"]["table_full"] > 0
    # the client that never reads: its receipts beyond what its window and
    # the stack's send buffer hold are counted as unsent, its streams stored
    rc = a["receipts"]
    assert rc["not_sent_no_room"] > 0 and rc["not_sent_peer_gone"] == 1  # the reset client's
    assert rc["sent"] + rc["not_sent_no_room"] + rc["not_sent_peer_gone"] == 3 + n_noread
    out = Path(r["kept"]) / "out"
    index = netdedup_decode.scan(out)

    def restore(stream: int) -> tuple[dict, bytes]:
        class Buf:
            b = bytearray()

            def write(self, x: bytes) -> None:
                self.b += x
        buf = Buf()
        d = netdedup_decode.decode(out, stream, buf, index)  # type: ignore[arg-type]
        return d, bytes(buf.b)

    d, b = restore(normal["receipts"][0]["stream"])
    assert d["status"] == "complete" and sha(b) == sha(data)
    rc = short["receipts"][0]
    assert rc["status"] == "short" and rc["stored"] == 300000 and rc["announced"] == len(data)
    d, b = restore(rc["stream"])
    assert d["status"] == "short" and b == data[:300000]
    # the reset stream: the one whose end record says reset; nothing its
    # TCP saw acknowledged is missing (tcpi_bytes_acked counts the SYN, and
    # the 8-byte header is not stored)
    resets = [s for s in index[0].values() if s.status == "reset"]
    assert len(resets) == 1
    d, b = restore(resets[0].stream_id)
    acked = reset["bytes_acked"] - 1 - 8
    assert b == data[:len(b)] and len(b) >= acked > 0, (len(b), acked)
    sent = [x for x in noread["receipts"]] + [x for c in (normal, short) for x in c["receipts"]]
    assert len(sent) == 2  # the noread client read none
    assert noread["ended_by"] in ("server hung up", "SIGTERM")  # the run ended without it
    small_streams = [s for s in index[0].values() if s.announced == 24]
    assert len(small_streams) == n_noread and all(s.status == "complete" for s in small_streams)
    for s in small_streams[:: n_noread // 5]:
        assert restore(s.stream_id)[1] == data[:24]


def test_decoder_refuses_damage(tmp_path: Path) -> None:
    """A cut file, a reference to nothing, and a chunk whose bytes do not
    match its SHA-1 each get an error naming the file and offset."""
    import struct
    import zlib

    def rec(t: str, code: int, raw: int, stored: int, key: bytes) -> bytes:
        return struct.pack("<BBHII", ord(t), code, 0, raw, stored) + key.ljust(20, b"\0")

    chunk = b"hello netdedup " * 100
    key = hashlib.sha1(chunk).digest()
    comp = zlib.compressobj(1, zlib.DEFLATED, -15)
    body = comp.compress(chunk) + comp.flush()
    head = rec("H", 1, 0, 0, struct.pack("<QQ", 0, len(chunk)) + b"PPDD")
    good = head + rec("D", 1, len(chunk), len(body), key) + body + \
        rec("E", 0, 0, 0, struct.pack("<QQI", len(chunk), len(chunk), 1))
    (tmp_path / "stream-0.pdd").write_bytes(good)
    out = tmp_path / "restored"
    assert subprocess.run([sys.executable, str(HERE / "netdedup_decode.py"), str(tmp_path),
                           "--stream", "0", "--out", str(out)]).returncode == 0
    assert out.read_bytes() == chunk
    cases = {
        "cut": (good[:-10], "record header cut"),
        "ref": (head + rec("R", 0, len(chunk), 0, b"\x01" * 20) +
                rec("E", 0, 0, 0, struct.pack("<QQI", len(chunk), len(chunk), 1)),
                "stored in no stream"),
        "sha": (head + rec("D", 0, len(chunk), len(chunk), b"\x02" * 20) + chunk +
                rec("E", 0, 0, 0, struct.pack("<QQI", len(chunk), len(chunk), 1)),
                "does not match its SHA-1"),
    }
    for name, (blob, message) in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "stream-0.pdd").write_bytes(blob)
        p = subprocess.run([sys.executable, str(HERE / "netdedup_decode.py"), str(d), "--stream",
                            "0", "--out", str(d / "x")], capture_output=True, text=True)
        assert p.returncode == 1 and message in p.stderr and "stream-0.pdd" in p.stderr, p.stderr


def test_input_tiers_are_deterministic(tmp_path: Path) -> None:
    a = b"".join(netdedup_input.blocks("test", 3))
    b = b"".join(netdedup_input.blocks("test", 3))
    c = b"".join(netdedup_input.blocks("test", 4))
    assert a == b and len(a) == netdedup_input.TIERS["test"] and a != c
    assert netdedup_input.TIERS == {"test": 1 << 20, "simsmall": 10 << 20,
                                    "simmedium": 31 << 20, "simlarge": 184 << 20,
                                    "native": 672 << 20}


def test_bad_options(build_dir: Path) -> None:
    exe = build_dir / "apps" / "netdedup" / "netdedup"
    for args, message in ((["--stack", "dpdk"], "--stack dpdk: expected lwip or kernel"),
                          (["--ip", "198.18.41.300"], "--ip 198.18.41.300: not an IPv4 address"),
                          (["--table-entries", "1000"], "expected a power of two"),
                          (["--out", "/nonexistent/x"], "--out /nonexistent/x: not a directory")):
        p = subprocess.run([str(exe), "--", *args], capture_output=True, text=True, timeout=30)
        assert p.returncode != 0 and message in p.stderr, (args, p.stderr)
    # run_netdedup's own usage errors exit 2
    p = subprocess.run([sys.executable, str(HERE / "run_netdedup.py"), "--tier", "test",
                        "--clients", "0"], capture_output=True, text=True)
    assert p.returncode == 2 and "--clients" in p.stderr
    assert json.loads(json.dumps({"ok": True}))  # the module imports cleanly above
