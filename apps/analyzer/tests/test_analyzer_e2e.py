"""End-to-end tests of the analyzer app on the runtime, meant for the
ASan+UBSan build: every shared capture through the app in one run (no
crash, no sanitizer report, every packet accounted for, logs complete and
equal to the decoder's records), BPF filters against libpcap's own count,
lost records counted when the writer stalls, and bad options refused."""
from __future__ import annotations

import array
import csv
import fcntl
import io
import json
import os
import subprocess
import termios
import threading
import time
from pathlib import Path

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether

from tunnel_frames import tunnel_frames
from harness import read_pcap, sanitizer_reports, write_pcap
from harness.frames import l3_bytes, wrong_ipv4_version_frames
from analyzer_run import app_binary, capture_frames, decode_tool, run_app

MBUF_DATA = 2048  # --mbuf-size given to the app: bytes in the first segment
# Columns the app and an-pcap-decode must agree on (the others: time, the
# instance, and lengths, which net_pcap reports as the captured length).
LAYER_COLUMNS = ["status", "mac_src", "mac_dst", "vlan", "ethertype", "l3", "ttl",
                 "l4_proto", "src", "dst", "sport", "dport", "icmp_type",
                 "icmp_code", "fragment"]
DECODED = [*LAYER_COLUMNS, "tunnel", "tunnel_id", *("inner_" + c for c in LAYER_COLUMNS)]


@pytest.fixture(scope="module")
def all_frames(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    """Every frame of every shared capture, and the tunnelled frames built
    for the tshark test (so that every tunnel kind goes through the app
    whatever is shared), in one Ethernet pcap."""
    caps = sorted((shared_dir / "data/pcaps/tcpdump-tests").glob("*.pcap*"))
    assert len(caps) > 400
    frames = capture_frames(caps)
    assert len(frames) > 3000
    frames += tunnel_frames().values()
    # And one frame with each property the assertions below need, so that
    # they hold whichever captures are shared: TCP port 80, IPv6 UDP, a
    # VLAN tag, ICMP, a frame cut inside its IPv4 header.
    frames += [bytes(Ether() / IP() / TCP(dport=80)),
               bytes(Ether() / IPv6() / UDP(dport=53)),
               bytes(Ether() / Dot1Q(vlan=5) / IP() / ICMP()),
               bytes(Ether() / IP() / TCP())[:14 + 12]]
    # EtherType IPv4 over another version nibble (tests/harness/frames.py), last
    frames += wrong_ipv4_version_frames().values()
    path = tmp_path_factory.mktemp("an_all") / "all.pcap"
    write_pcap(path, frames)
    return path, frames


def check_clean(run, what: str, rc: int = 0) -> dict:
    """The run's statistics, after checking it ended with status rc (1: measured, with an
    output file incomplete), with its accounting closed and no sanitizer report."""
    reports = sanitizer_reports(run.stderr)
    assert not reports, f"{what}: sanitizer reports:\n" + "\n".join(reports[:20])
    assert run.returncode == rc, f"{what}: rc {run.returncode}\n{run.stderr[-3000:]}"
    assert run.stats is not None, f"{what}: no statistics written"
    assert run.stats["accounting_ok"] is True
    return run.stats


def test_every_capture_through_the_app(build_dir: Path, tmp_path: Path, file_prefix: str,
                                       all_frames: tuple[Path, list[bytes]]) -> None:
    pcap, frames = all_frames
    log, out = tmp_path / "log.csv", tmp_path / "out.pcap"
    run = run_app(build_dir, tmp_path, file_prefix, pcap,
                  ["--log", str(log), "--pcap-out", str(out), "--log-ring", "8192",
                   "--mbuf-size", str(MBUF_DATA)], packets=len(frames))
    s = check_clean(run, "all captures")
    n = len(frames)
    assert s["total"]["rx_packets"] == n
    assert s["total"]["tx_packets"] == n
    a = s["app_stats"]
    assert a["packets"] == n
    assert sum(a["by_l3"].values()) == n
    assert sum(a["by_l4"].values()) == n
    assert sum(a["decode_status"].values()) == n
    assert a["decode_errors"] == n - a["decode_status"]["ok"]
    assert a["decode_errors"] > 0  # the captures hold truncated frames
    assert sum(a["by_tunnel"].values()) == n
    assert all(a["by_tunnel"][k] > 0 for k in a["by_tunnel"])  # every kind, and none
    assert a["filter"]["passed"] == n and a["filter"]["failed"] == 0
    # The ring holds every frame, so nothing may be lost.
    assert a["log"]["records_lost"] == 0 and a["pcap"]["records_lost"] == 0
    assert a["log"]["records_written"] == n and a["log"]["write_errors"] == 0
    assert a["pcap"]["records_written"] == n

    rows = list(csv.DictReader(io.StringIO(log.read_text())))
    assert len(rows) == n
    # The same frames through the decoder library directly: the app's
    # records must be the decoder's (frames longer than one mbuf are
    # decoded from their first segment only).
    r = subprocess.run([str(decode_tool(build_dir)), str(pcap)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ref = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(ref) == n
    mismatched = [i for i, (a_row, ref_row) in enumerate(zip(rows, ref))
                  if len(frames[i]) <= MBUF_DATA
                  and [a_row[c] for c in DECODED] != [ref_row[c] for c in DECODED]]
    assert not mismatched, f"app and decoder differ at frames {mismatched[:10]}"
    assert all(int(row["cap_len"]) == min(len(f), MBUF_DATA) for row, f in zip(rows, frames))
    # EtherType IPv4, version not 4: an IPv4 header with a bad version (a
    # truncated one when it is cut inside IPv4's 20 bytes), no tunnel, nothing
    # decoded behind it; counted under that status.
    wrong = list(wrong_ipv4_version_frames().values())
    for row, f in zip(rows[n - len(wrong):], wrong):
        want = "ipv4_bad_version" if l3_bytes(f) >= 20 else "ipv4_truncated"
        assert (row["status"], row["l3"], row["tunnel"], row["ttl"]) == (want, "ipv4", "", ""), row
    assert a["decode_status"]["ipv4_bad_version"] >= sum(l3_bytes(f) >= 20 for f in wrong)

    copies = read_pcap(out)
    assert len(copies) == n
    assert all(c == f[:2048] for c, f in zip(copies, frames))


@pytest.mark.parametrize("expr", ["tcp port 80", "ip6 and udp", "vlan or icmp"])
def test_filter_logs_what_libpcap_matches(build_dir: Path, tmp_path: Path, file_prefix: str,
                                          all_frames: tuple[Path, list[bytes]], expr: str) -> None:
    pcap, frames = all_frames
    c = subprocess.run([str(decode_tool(build_dir)), "--filter", expr, "--count", str(pcap)],
                       capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stderr
    matched = int(c.stdout)
    assert 0 < matched < len(frames), f"{expr}: {matched} of {len(frames)}: not a useful filter"

    log = tmp_path / "log.jsonl"
    run = run_app(build_dir, tmp_path, file_prefix, pcap,
                  ["--filter", expr, "--drop-unmatched", "--log", str(log),
                   "--log-format", "jsonl", "--log-ring", "8192"], packets=len(frames))
    s = check_clean(run, expr)
    a = s["app_stats"]
    assert a["filter"] == {"expression": expr, "passed": matched,
                           "failed": len(frames) - matched, "unmatched": "dropped"}
    assert a["log"]["records_written"] == matched and a["log"]["records_lost"] == 0
    assert s["total"]["tx_packets"] == matched
    assert s["total"]["dropped_by_reason"]["filter_unmatched"] == len(frames) - matched
    lines = log.read_text().splitlines()
    assert len(lines) == matched
    recs = [json.loads(line) for line in lines]
    if expr == "tcp port 80":
        # libpcap's filter, like tcpdump's, does not read the IPv4 version: an IPv4-shaped
        # header with another version and TCP to port 80 passes it, and its record says
        # the header is bad
        assert all(r["l4_proto"] == 6 for r in recs if r["status"] != "ipv4_bad_version")
        assert all(80 in (r["sport"], r["dport"]) for r in recs
                   if r["sport"] is not None and r["fragment"] == "no" and not r["vlan"])


def small_fifo(path: Path) -> int:
    """A FIFO whose pipe holds one page (4 KiB, about 36 CSV records), open
    for reading (non-blocking, which lets the app's open() succeed).  The
    app's first write (stdio flushes 4 KiB at a time on a pipe) fills it,
    so the tests below know from the pipe alone when the writer is blocked,
    however slowly a loaded machine runs the app."""
    os.mkfifo(path)
    rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    assert fcntl.fcntl(rfd, fcntl.F_SETPIPE_SZ, PIPE_PAGE) == PIPE_PAGE
    return rfd


def wait_pipe_full(rfd: int, timeout_s: float = 60) -> bool:
    """Wait until the pipe is full (the writer is then blocked, or will be
    at its next write); False if that did not happen within timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        queued = array.array("i", [0])
        fcntl.ioctl(rfd, termios.FIONREAD, queued)
        if queued[0] >= PIPE_PAGE:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


PIPE_PAGE = 4096
# Packets per FIFO test: the P task logs every one, far more than the ring
# (64 records), the writer's stdio buffer and the pipe (4 KiB each, ~36
# records) hold.  Stopping after a packet count, not a duration, makes that
# hold however slowly the app runs.
FIFO_PACKETS = 20000


def test_stalled_writer_loses_records_not_packets(build_dir: Path, tmp_path: Path,
                                                  file_prefix: str) -> None:
    """The log goes to a FIFO nobody reads at first: the writer blocks, the
    ring fills, the P task keeps going and counts what it could not hand
    over.  Reading starts 0.5 s after the pipe filled up, and the writer
    then drains everything it had taken."""
    pcap = synthetic_pcap(tmp_path)
    fifo = tmp_path / "log.fifo"
    rfd = small_fifo(fifo)
    got: list[bytes] = []
    seen_full: list[bool] = []

    def read_later() -> None:
        # The pipe full means the writer is blocked in write(); the P task
        # runs on (its 20000 packets take far less than 0.5 s, and at most
        # ~200 records fit in the pipe, the stdio buffer, the batch the
        # writer holds and the ring), then drain.  Draining must start
        # within the 5 s the app waits for the writer before the
        # statistics: 4.5 s of margin for this thread to wake up.
        seen_full.append(wait_pipe_full(rfd))
        time.sleep(0.5)
        os.set_blocking(rfd, True)
        while chunk := os.read(rfd, 1 << 16):
            got.append(chunk)

    reader = threading.Thread(target=read_later)
    reader.start()
    try:
        run = run_app(build_dir, tmp_path, file_prefix, pcap,
                      ["--log", str(fifo), "--log-ring", "64"], infinite=True,
                      packets=FIFO_PACKETS)
    finally:
        reader.join(timeout=60)
        os.close(rfd)
    assert seen_full == [True]
    s = check_clean(run, "stalled writer")
    a = s["app_stats"]
    assert a["writer"]["synced"] is True
    assert a["writer"]["flushed"] is True
    assert a["log"]["records_lost"] > 0
    assert a["log"]["records_enqueued"] + a["log"]["records_lost"] == a["filter"]["passed"]
    assert a["log"]["records_written"] == a["log"]["records_enqueued"]
    assert a["log"]["write_errors"] == 0
    # The packet path went on while the writer was stuck.
    assert a["packets"] >= FIFO_PACKETS
    text = b"".join(got).decode()
    assert text.count("\n") == 1 + a["log"]["records_written"]  # header + records


@pytest.mark.parametrize("args, message", [
    (["--filter", "tcp port"], "--filter 'tcp port': can't parse filter expression: syntax error"),
    (["--filter", "ether proto nonsense"], "--filter 'ether proto nonsense':"),
    (["--log-format", "xml"], "--log-format 'xml': expected csv or jsonl"),
    (["--snaplen", "0"], "--snaplen '0': expected an integer in 1..16384"),
    (["--log-ring", "1000"], "--log-ring '1000': expected a power of two"),
    (["--log"], "--log needs a value"),
])
def test_bad_options_refused(build_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    r = subprocess.run([str(app_binary(build_dir)), "--", "--placement",
                        str(tmp_path / "unused.json"), *args],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert message in r.stderr


@pytest.mark.parametrize("option", ["--log", "--pcap-out"])
def test_unwritable_outputs_refused(build_dir: Path, tmp_path: Path, file_prefix: str,
                                    option: str) -> None:
    pcap = synthetic_pcap(tmp_path)
    bad = tmp_path / "no-such-dir" / "out"
    run = run_app(build_dir, tmp_path, file_prefix, pcap, [option, str(bad)])
    assert run.returncode == 2  # a usage error: refused before EAL starts
    assert f"{option} {bad}: No such file or directory" in run.stderr
    # A FIFO nobody reads would block start-up for ever: refused instead.
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    run = run_app(build_dir, tmp_path, file_prefix, pcap, [option, str(fifo)], timeout_s=60)
    assert run.returncode != 0
    assert f"{option} {fifo}: a FIFO with no reader" in run.stderr


def synthetic_pcap(tmp: Path) -> Path:
    pcap = tmp / "in.pcap"
    write_pcap(pcap, [bytes(Ether() / IP(dst=f"10.0.1.{i}") / TCP(dport=80)) for i in range(16)])
    return pcap


def test_log_reader_gone_is_a_write_error_not_a_crash(build_dir: Path, tmp_path: Path,
                                                      file_prefix: str) -> None:
    """The FIFO's reader closes mid-run, while the writer is blocked on the
    full pipe: writes fail (EPIPE), SIGPIPE does not kill the app, the
    statistics say the log is incomplete."""
    fifo = tmp_path / "log.fifo"
    rfd = small_fifo(fifo)
    seen_full: list[bool] = []

    def close_when_full() -> None:
        # Closing must happen within the 5 s the app waits for its blocked
        # writer before the statistics (a margin for this thread to wake).
        seen_full.append(wait_pipe_full(rfd))
        os.close(rfd)

    closer = threading.Thread(target=close_when_full)
    closer.start()
    try:
        run = run_app(build_dir, tmp_path, file_prefix, synthetic_pcap(tmp_path),
                      ["--log", str(fifo), "--log-ring", "64"], infinite=True,
                      packets=FIFO_PACKETS)
    finally:
        closer.join()
    assert seen_full == [True]
    s = check_clean(run, "reader gone", rc=1)  # the log is incomplete, and the status says so
    assert "analyzer: the output is incomplete" in run.stderr
    a = s["app_stats"]
    assert a["writer"]["synced"] is True    # failed writes do not block
    assert a["writer"]["flushed"] is False  # and the log says it is incomplete
    # Records fail in fwrite (counted as write errors) or in the flush
    # after stdio took them (counted as written: flushed tells them apart).
    assert a["log"]["records_written"] + a["log"]["write_errors"] == a["log"]["records_enqueued"]


@pytest.mark.parametrize("option", ["--log", "--pcap-out"])
def test_an_output_file_that_cannot_take_the_records_fails_the_run(build_dir: Path, tmp_path: Path,
                                                                   file_prefix: str, option: str) -> None:
    """/dev/full opens and fails every write (a disk that filled during the run): the
    statistics still count every packet, and the exit status is 1, so that a script does
    not take the file as whole."""
    run = run_app(build_dir, tmp_path, file_prefix, synthetic_pcap(tmp_path), [option, "/dev/full"])
    s = check_clean(run, f"{option} /dev/full", rc=1)
    assert s["total"]["rx_packets"] == 16
    assert "analyzer: the output is incomplete" in run.stderr, run.stderr[-3000:]


def test_log_reader_stuck_does_not_hang_the_app(build_dir: Path, tmp_path: Path,
                                                file_prefix: str) -> None:
    """The FIFO's reader never reads and never closes: the app still ends
    (about 5 s waiting for the writer in the statistics, 10 s at teardown),
    reports the log as not synced, and every packet is accounted for."""
    fifo = tmp_path / "log.fifo"
    rfd = small_fifo(fifo)
    try:
        t0 = time.monotonic()
        run = run_app(build_dir, tmp_path, file_prefix, synthetic_pcap(tmp_path),
                      ["--log", str(fifo), "--log-ring", "64"], infinite=True,
                      packets=FIFO_PACKETS, timeout_s=180)
        elapsed = time.monotonic() - t0
        # The writer blocked on the full pipe (the records never fit in it).
        assert wait_pipe_full(rfd, timeout_s=0)
    finally:
        os.close(rfd)
    s = check_clean(run, "reader stuck", rc=1)
    a = s["app_stats"]
    assert a["writer"] == {"cpus": a["writer"]["cpus"], "synced": False, "flushed": False}
    assert a["log"]["records_lost"] > 0
    assert "the log writer is still blocked writing after 10 s" in run.stderr
    # It waited the 5 s + 10 s it documents, and then ended by itself (the
    # upper bound is far from the ~17 s this takes on an idle machine: a
    # loaded one starts DPDK slowly).
    assert 15 <= elapsed < 150
