"""IPFIX export checked against what people already run: nfcapd (nfdump's
collector) listens on the loopback, the stateful app exports to it, and
`nfdump -r` on what nfcapd wrote must give the same flows, with the same
packet and byte counts, as an independent count made here with scapy.

The captures are the shared ones with an Ethernet link type and IPv4/IPv6
TCP or UDP traffic in them (picked by that property), concatenated into one
pcap so that DPDK starts once; the count below runs over the same frame
sequence, so flows that recur across captures merge on both sides alike.

What a flow is (the app's rules, which the count follows): the 5-tuple plus
the outer VLAN id, both directions in one flow whose initiator sent its
first packet; exported as one uniflow record per direction that carried
packets; a TCP flow ends at once on RST or on FIN from both sides, and a
later packet of the same 5-tuple starts a new flow.  Timeouts do not fire
here (a replay lasts milliseconds), so every other flow ends at shutdown.

Compared: TCP and UDP records (protocol 6 and 17) only; non-first IPv4
fragments carry no ports and are counted with ports 0, as the app does.
"""
from __future__ import annotations

import collections
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.contrib.mpls import MPLS
from scapy.layers.l2 import SNAP, Dot3, Ether, LLC
from scapy.layers.ppp import PPP, PPPoE
from scapy.packet import Raw
from scapy.utils import RawPcapReader

from harness import sanitizer_reports, write_pcap
from stateful_run import run_app

Key = tuple[str, str, int, int, int]          # src, dst, sport, dport, proto
Rec = tuple[str, str, int, int, int, int, int]  # Key + packets, bytes

# Reviewed differences between the app's export and the count here, by the
# flow record (src, dst, sport, dport, proto): why each one differs.  Empty:
# on the shared captures the two agree record for record.
ALLOWLIST: dict[Key, str] = {}


def ethernet_captures(folder: Path) -> Iterator[tuple[str, list[bytes]]]:
    """(name, frames) of every capture with an Ethernet link type whose
    frames hold IPv4/IPv6 TCP or UDP."""
    for path in sorted(folder.iterdir()):
        if path.suffix not in (".pcap", ".pcapng"):
            continue
        frames: list[bytes] = []
        try:
            with RawPcapReader(str(path)) as reader:
                if getattr(reader, "linktype", 1) != 1:
                    continue
                for data, _meta in reader:
                    frames.append(bytes(data))
        except Exception:  # broken captures: test_stateful_captures covers them
            continue
        if any(model_key(f) is not None for f in frames):
            yield path.name, frames


VLAN_TYPES = (0x8100, 0x88A8, 0x9100)


def l3_start(frame: bytes) -> tuple[int, int, int] | None:
    """(ethertype, where its header starts, outer VLAN id) after the Ethernet
    header and up to 4 VLAN tags, or None for a frame cut inside them.  The
    app reads an IP header only there: one under MPLS, PPPoE or LLC/SNAP is
    not IP to it (non_ip_packets), whatever a dissector finds deeper in."""
    if len(frame) < 14:
        return None
    etype, off, vlan = int.from_bytes(frame[12:14], "big"), 14, 0
    for tags in range(5):
        if etype not in VLAN_TYPES:
            return etype, off, vlan
        if tags == 4 or off + 4 > len(frame):
            return None
        if tags == 0:
            vlan = int.from_bytes(frame[off:off + 2], "big") & 0x0FFF
        etype, off = int.from_bytes(frame[off + 2:off + 4], "big"), off + 4
    return None


def model_key(frame: bytes) -> tuple[tuple, bool, int] | None:
    """(canonical key, direction, tcp flags) of a TCP/UDP frame, or None."""
    start = l3_start(frame)
    if start is None or start[0] not in (0x0800, 0x86DD):
        return None
    etype, off, vlan = start
    try:
        ip = IP(frame[off:]) if etype == 0x0800 else None
        ip6 = IPv6(frame[off:]) if etype == 0x86DD else None
    except Exception:
        return None
    if ip is not None:
        if ip.version != 4:
            return None
        captured = len(frame) - off
        # A header cut by the snap length, or shorter than itself, is no flow.
        if ip.ihl < 5 or ip.len < ip.ihl * 4 or captured < ip.ihl * 4 or \
                ip.proto not in (6, 17):
            return None
        src, dst, proto = socket.inet_aton(ip.src), socket.inet_aton(ip.dst), int(ip.proto)
        src = b"\0" * 10 + b"\xff\xff" + src
        dst = b"\0" * 10 + b"\xff\xff" + dst
        fragment = bool(ip.flags.MF) or ip.frag != 0
        l4 = ip.payload
    elif ip6 is not None:
        if ip6.version != 6 or len(frame) - off < 40 or ip6.nh not in (6, 17):
            return None
        src, dst, proto = socket.inet_pton(socket.AF_INET6, ip6.src), \
            socket.inet_pton(socket.AF_INET6, ip6.dst), int(ip6.nh)
        fragment = False
        l4 = ip6.payload
    else:
        return None
    sport = dport = flags = 0
    if not fragment:
        layer = TCP if proto == 6 else UDP
        if not isinstance(l4, layer) or len(bytes(l4)) < (20 if proto == 6 else 8):
            return None
        sport, dport = int(l4.sport), int(l4.dport)
        flags = int(l4.flags) & 0xFF if proto == 6 else 0
    lo, hi = (src, sport), (dst, dport)
    direction = lo > hi
    if direction:
        lo, hi = hi, lo
    return (lo, hi, proto, vlan, src[:12] == b"\0" * 10 + b"\xff\xff"), direction, flags


def addr_text(a: bytes, v4: bool) -> str:
    return socket.inet_ntop(socket.AF_INET, a[12:]) if v4 else socket.inet_ntop(socket.AF_INET6, a)


def edge_frames() -> list[bytes]:
    """Frames of the kinds where a count and the app can part, built so that
    they are compared whichever captures are shared: a lone 66-byte TCP ACK
    (timestamps option) after a flow's FIN from both sides, which starts a
    flow of its own; and the same kind of 66-byte TCP segment carried under
    PPPoE, MPLS and LLC/SNAP, where the IP header is not right after the
    Ethernet header and its tags: a dissector finds TCP in them, the app
    (README, "Flow key") counts them non-IP and exports no record."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    a, b = "192.0.2.66", "198.51.100.66"
    ts = [("NOP", None), ("NOP", None), ("Timestamp", (1, 2))]
    close = [eth / IP(src=a, dst=b) / TCP(sport=40066, dport=443, flags="PA", options=ts) / Raw(b"GET /"),
             eth / IP(src=a, dst=b) / TCP(sport=40066, dport=443, flags="FA", options=ts),
             eth / IP(src=b, dst=a) / TCP(sport=443, dport=40066, flags="FA", options=ts),
             eth / IP(src=a, dst=b) / TCP(sport=40066, dport=443, flags="A", options=ts)]
    seg = IP(src="192.0.2.67", dst="198.51.100.67") / TCP(sport=40067, dport=80, flags="S",
                                                          options=[("MSS", 1452)])
    tunnelled = [Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04") / PPPoE(sessionid=7) / PPP(proto=0x0021)
                 / seg,
                 Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04") / MPLS(label=16, s=1) / seg,
                 Dot3(src="02:00:00:00:00:03", dst="02:00:00:00:00:04") / LLC() / SNAP(code=0x0800) / seg]
    out = [bytes(f) for f in close + tunnelled]
    assert len(out[3]) == 66 and len(out[4]) == 66, [len(f) for f in out]
    return out


def model_records(frames: list[bytes]) -> collections.Counter[Rec]:
    """The uniflow records the app should export for this frame sequence."""
    out: collections.Counter[Rec] = collections.Counter()
    live: dict[tuple, dict] = {}

    def emit(key: tuple, f: dict) -> None:
        (lo, hi, proto, _vlan, v4) = key
        ends = (lo, hi) if f["init"] == 0 else (hi, lo)
        for d in (0, 1):
            if f["pk"][d] == 0:
                continue
            s, t = ends if d == 0 else (ends[1], ends[0])
            out[(addr_text(s[0], v4), addr_text(t[0], v4), s[1], t[1], proto,
                 f["pk"][d], f["by"][d])] += 1

    for frame in frames:
        mk = model_key(frame)
        if mk is None:
            continue
        key, direction, flags = mk
        f = live.get(key)
        if f is None:
            f = live[key] = {"init": int(direction), "pk": [0, 0], "by": [0, 0], "fin": 0}
        d = int(direction) ^ f["init"]
        f["pk"][d] += 1
        f["by"][d] += len(frame)
        if key[2] == 6:
            closed = bool(flags & 0x04)
            if not closed and flags & 0x01:
                f["fin"] |= 1 << d
                closed = f["fin"] == 3
            if closed:
                emit(key, f)
                del live[key]
    for key, f in live.items():
        emit(key, f)
    return out


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nfdump_records(flow_dir: Path) -> collections.Counter[Rec]:
    proc = subprocess.run(
        ["nfdump", "-R", str(flow_dir), "-q", "-N", "-6", "-o",
         "fmt:%sa|%da|%sp|%dp|%pr|%pkt|%byt"],
        capture_output=True, text=True, timeout=120, check=True)
    names = {"TCP": 6, "UDP": 17}
    out: collections.Counter[Rec] = collections.Counter()
    for line in proc.stdout.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 7:
            continue
        proto = names.get(parts[4], None)
        if proto is None:
            proto = int(parts[4]) if parts[4].isdigit() else -1
        if proto not in (6, 17):
            continue
        out[(parts[0], parts[1], int(parts[2]), int(parts[3]), proto,
             int(parts[5]), int(parts[6]))] += 1
    return out


def udp_rx_queue(port: int) -> int | None:
    """Bytes waiting in the receive queue of the UDP socket bound to
    127.0.0.1:port (from /proc/net/udp), or None when no socket is bound."""
    want = f"0100007F:{port:04X}"
    for line in Path("/proc/net/udp").read_text().splitlines()[1:]:
        f = line.split()
        if f[1] == want:
            return int(f[4].split(":")[1], 16)
    return None


def wait_for(cond, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Nfcapd:
    """nfcapd on 127.0.0.1:port writing into flow_dir, stopped with SIGTERM
    (which makes it write its last file) once it has read every datagram."""

    def __init__(self, flow_dir: Path) -> None:
        self.port = free_udp_port()
        flow_dir.mkdir()
        self.dir = flow_dir
        self.proc = subprocess.Popen(
            ["nfcapd", "-b", "127.0.0.1", "-p", str(self.port), "-w", str(flow_dir),
             "-t", "3600"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(lambda: udp_rx_queue(self.port) is not None or self.proc.poll() is not None,
                 "nfcapd to bind its socket")
        assert self.proc.poll() is None, self.proc.stdout.read() if self.proc.stdout else ""

    def stop(self) -> str:
        # Loopback datagrams are queued when sent; let nfcapd read them all.
        wait_for(lambda: udp_rx_queue(self.port) in (0, None), "nfcapd to read its queue")
        time.sleep(0.2)  # and process the last one it read
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=30)
        return out


def test_export_matches_nfdump_on_shared_captures(build_dir: Path, shared_dir: Path,
                                                  tmp_path: Path, file_prefix: str) -> None:
    for tool in ("nfcapd", "nfdump", "ipfixDump"):
        assert shutil.which(tool), f"{tool} missing: run tools/setup.sh (nfdump, libfixbuf-tools)"
    caps = list(ethernet_captures(shared_dir / "data" / "pcaps" / "tcpdump-tests"))
    assert len(caps) >= 50, f"only {len(caps)} Ethernet captures with TCP/UDP found"
    frames = [f for _name, fs in caps for f in fs] + edge_frames()
    pcap = tmp_path / "tcpudp.pcap"
    n = write_pcap(pcap, frames)
    expected = model_records(frames)
    assert sum(expected.values()) > 150
    # the lone 66-byte ACK is a flow of its own; the TCP under PPPoE, MPLS and LLC/SNAP is not IP to the app
    assert expected[("192.0.2.66", "198.51.100.66", 40066, 443, 6, 1, 66)] == 1
    assert not any(r[0] == "192.0.2.67" for r in expected)
    non_ip = sum(1 for f in frames if (s := l3_start(f)) is not None and s[0] not in (0x0800, 0x86DD))

    nf = Nfcapd(tmp_path / "nf")
    ipfix_file = tmp_path / "flows.ipfix"
    try:
        run = run_app(build_dir, tmp_path, file_prefix, pcap,
                      ["--ipfix-collector", f"127.0.0.1:{nf.port}",
                       "--ipfix-file", str(ipfix_file)], duration_s=2.0)
    finally:
        nfcapd_log = nf.stop()
    assert run.returncode == 0, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr), run.stderr[-3000:]
    assert run.stats is not None and run.stats["accounting_ok"] is True
    assert run.stats["total"]["rx_packets"] == n
    assert run.stats["app_stats"]["non_ip_packets"] == non_ip, (run.stats["app_stats"]["non_ip_packets"], non_ip)
    x = run.stats["app_stats"]["ipfix"]
    assert x["finished"] is True and x["first_error"] is None, x
    assert x["records_lost"] == 0 and x["export_dropped_queue_full"] == 0, x

    got = nfdump_records(nf.dir)
    missing = expected - got
    extra = got - expected
    unexplained = [r for r in list(missing) + list(extra) if r[:5] not in ALLOWLIST]
    assert not unexplained, (
        f"{len(missing)} records expected but not in nfdump, {len(extra)} in nfdump only; "
        f"first missing: {list(missing)[:8]}; first extra: {list(extra)[:8]}\n{nfcapd_log}")
    assert sum(got.values()) == sum(expected.values())

    # Every record went to both sinks: the IPFIX file holds as many data
    # records (TCP/UDP and others) as the collector received in all.
    all_nf = subprocess.run(["nfdump", "-R", str(nf.dir), "-q", "-N", "-o", "fmt:%pr"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert x["records_exported"] == 2 * len(all_nf)
    dump = subprocess.run(["ipfixDump", "--in", str(ipfix_file)], capture_output=True,
                          text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr[-2000:]
    data_records = sum(1 for line in dump.stdout.splitlines()
                       if line.startswith("--- data record"))
    assert data_records == len(all_nf), (data_records, len(all_nf))


def test_bad_collector_address_is_refused(build_dir: Path, tmp_path: Path,
                                          file_prefix: str) -> None:
    pcap = tmp_path / "one.pcap"
    write_pcap(pcap, [b"\x02" * 12 + b"\x08\x06" + b"\0" * 46])
    for bad, words in (("127.0.0.1", "expected HOST:PORT"),
                       ("127.0.0.1:70000", "'70000' is not 1..65535"),
                       ("no-such-host.invalid:4739", "cannot resolve 'no-such-host.invalid'")):
        run = run_app(build_dir, tmp_path, file_prefix, pcap,
                      ["--ipfix-collector", bad], duration_s=0.5)
        assert run.returncode != 0
        assert f"--ipfix-collector '{bad}'" in run.stderr and words in run.stderr, run.stderr[-2000:]
    run = run_app(build_dir, tmp_path, file_prefix, pcap,
                  ["--ipfix-file", str(tmp_path / "no" / "such" / "dir.ipfix")], duration_s=0.5)
    assert run.returncode != 0 and "--ipfix-file" in run.stderr, run.stderr[-2000:]


def test_an_ipfix_file_that_cannot_take_the_records_fails_the_run(build_dir: Path, tmp_path: Path,
                                                                 file_prefix: str) -> None:
    # /dev/full passes the set-up check and fails every write (a disk that filled during the
    # run): the records are counted lost, and the exit status is 1 with the statistics written,
    # so that a script does not take the file as whole
    pcap = tmp_path / "rst.pcap"
    write_pcap(pcap, rst_flows(200))
    run = run_app(build_dir, tmp_path, file_prefix, pcap, ["--ipfix-file", "/dev/full"], duration_s=1.0)
    assert run.returncode == 1, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr), run.stderr[-3000:]
    assert run.stats is not None and run.stats["accounting_ok"] is True
    x = run.stats["app_stats"]["ipfix"]
    assert x["records_lost"] > 0 and x["first_error"] and "/dev/full" in x["first_error"], x
    assert "IPFIX export to file /dev/full failed" in run.stderr, run.stderr[-3000:]


def test_an_ipfix_file_that_fails_only_on_its_last_buffered_bytes_fails_the_run(
        build_dir: Path, tmp_path: Path, file_prefix: str) -> None:
    # one flow, still open at the end: the templates and its one record fit in stdio's buffer,
    # so no write reaches /dev/full before the end; the flush at the end must be checked
    pcap = tmp_path / "syn.pcap"
    write_pcap(pcap, [bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                            IP(src="10.0.0.1", dst="192.0.2.1") / TCP(sport=1234, dport=80, flags="S"))])
    run = run_app(build_dir, tmp_path, file_prefix, pcap, ["--ipfix-file", "/dev/full"], duration_s=0.5)
    assert run.returncode == 1, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr), run.stderr[-3000:]
    assert run.stats is not None and run.stats["accounting_ok"] is True
    x = run.stats["app_stats"]["ipfix"]
    assert x["records_lost"] == 0, x  # nothing failed before the end: the flush is what tells
    assert "IPFIX export to file /dev/full failed: writing the last buffered messages: No space left on " \
           "device" in run.stderr, run.stderr[-3000:]
    # the same capture into a file that takes it: status 0, and the one record is in it
    ok = tmp_path / "ok.ipfix"
    run = run_app(build_dir, tmp_path, file_prefix, pcap, ["--ipfix-file", str(ok)], duration_s=0.5)
    assert run.returncode == 0 and len(file_records(ok)) == 1, run.stderr[-3000:]


def test_serve_answers_the_statistics_and_the_error_of_a_run_whose_file_failed(
        build_dir: Path, tmp_path: Path, file_prefix: str) -> None:
    # --serve: each placement measured answers its statistics, and where its IPFIX file could
    # not take the records an "error" beside them; the process exits 1 at the end of input
    import json

    from harness import placement, sanitizer_env
    from stateful_run import app_binary
    pcap = tmp_path / "rst.pcap"
    write_pcap(pcap, rst_flows(200))
    line = json.dumps(placement("stateful", 1))
    cmd = [str(app_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--vdev", f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "--vdev", "net_null0",
           "--", "--serve", "--packets", "2000", "--ipfix-file", "/dev/full"]
    p = subprocess.run(cmd, input=f"{line}\n{line}\n", capture_output=True, text=True, timeout=120,
                       env=sanitizer_env())
    assert p.returncode == 1, p.stderr[-3000:]
    assert not sanitizer_reports(p.stderr), p.stderr[-3000:]
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert [o["line"] for o in out] == [1, 2]
    for o in out:
        assert o["accounting_ok"] is True and o["total"]["rx_packets"] >= 2000
        assert o["error"] == f"stdin line {o['line']}: measured, but the app's output is incomplete " \
                             "(messages on stderr)"


def rst_flows(count: int) -> list[bytes]:
    """count one-packet TCP flows, each a lone RST: each ends at once."""
    frames = []
    for i in range(count):
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / \
            IP(src=f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}", dst="192.0.2.1") / \
            TCP(sport=1024 + i % 50000, dport=80, flags="R")
        frames.append(bytes(pkt))
    return frames


def test_unreachable_collector_and_full_queue_are_counted(build_dir: Path, tmp_path: Path,
                                                          file_prefix: str) -> None:
    """No collector listens (the kernel refuses the datagrams) and the queue
    holds 2 flows: nothing stalls, every packet is forwarded, and every ended
    flow is either queued or counted as dropped; every record the writer took
    is either exported or counted as lost."""
    frames = rst_flows(4000)
    pcap = tmp_path / "rst.pcap"
    n = write_pcap(pcap, frames)
    port = free_udp_port()  # nothing listens there
    run = run_app(build_dir, tmp_path, file_prefix, pcap,
                  ["--ipfix-collector", f"127.0.0.1:{port}", "--export-queue", "2",
                   "--template-interval", "0.01"], duration_s=1.5)
    assert run.returncode == 0, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr), run.stderr[-3000:]
    assert run.stats is not None and run.stats["accounting_ok"] is True
    total = run.stats["total"]
    assert total["rx_packets"] == n and total["dropped_packets"] == 0
    app = run.stats["app_stats"]
    x = app["ipfix"]
    ended = x["flows_ended_in_run"]
    assert ended["end_of_flow"] == n == app["flows_created"]
    assert x["flows_queued_in_run"] + x["export_dropped_queue_full"] == n, x
    assert x["flows_dequeued"] == x["flows_queued_in_run"], x
    assert x["records_exported"] + x["records_lost"] == x["flows_dequeued"], x
    # The refused datagrams are reported once, by name.  (The kernel refuses
    # the send after the one that drew the ICMP error, so which messages are
    # lost is up to timing; the sum above is what must hold.)
    assert x["first_error"] is not None and "Connection refused" in x["first_error"], x
    assert x["template_sends"] >= 1, x
    assert f"IPFIX export to collector 127.0.0.1:{port} (UDP) failed" in run.stderr


@pytest.mark.parametrize("args, words", [
    (["--active-timeout", "-1"], "--active-timeout"),
    (["--export-queue", "1"], "--export-queue"),
    (["--template-interval", "0"], "--template-interval"),
])
def test_bad_export_options_are_refused(build_dir: Path, tmp_path: Path, file_prefix: str,
                                        args: list[str], words: str) -> None:
    pcap = tmp_path / "one.pcap"
    write_pcap(pcap, [b"\x02" * 12 + b"\x08\x06" + b"\0" * 46])
    run = run_app(build_dir, tmp_path, file_prefix, pcap, args, duration_s=0.5)
    assert run.returncode != 0 and words in run.stderr, run.stderr[-2000:]



def file_records(path: Path) -> list[dict[str, str]]:
    """The data records of an IPFIX file, as ipfixDump prints them."""
    dump = subprocess.run(["ipfixDump", "--in", str(path)], capture_output=True,
                          text=True, timeout=120, check=True)
    records: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in dump.stdout.splitlines():
        if line.startswith("--- "):
            current = {} if line.startswith("--- data record") else None
            if current is not None:
                records.append(current)
        elif current is not None and " : " in line:
            name, value = line.split(" : ", 1)
            current[name.split()[-1]] = value.strip()
    return records


def test_table_pressure_evicts_and_exports(build_dir: Path, tmp_path: Path,
                                           file_prefix: str) -> None:
    """20 UDP flows that share one nProbe bucket, a table of 3 records: each
    new flow evicts the bucket's least recently seen one (lackOfResources),
    and the 3 left end at shutdown (forcedEnd); every packet is in a record."""
    flows = 20
    frames = [bytes(Ether() / IP(src=f"10.0.0.{k}", dst="192.168.0.1")
                    / UDP(sport=60000 - k, dport=53) / (b"x" * k))
              for k in range(1, flows + 1)]
    pcap = tmp_path / "pressure.pcap"
    write_pcap(pcap, frames)
    out = tmp_path / "pressure.ipfix"
    run = run_app(build_dir, tmp_path, file_prefix, pcap,
                  ["--max-flows", "3", "--ipfix-file", str(out)], duration_s=1.0)
    assert run.returncode == 0, run.stderr[-3000:]
    assert not sanitizer_reports(run.stderr), run.stderr[-3000:]
    assert run.stats is not None
    x = run.stats["app_stats"]["ipfix"]
    assert x["flows_ended_in_run"]["lack_of_resources"] == flows - 3, x
    assert x["flows_evicted_table_pressure"] == flows - 3
    assert run.stats["app_stats"]["flows_dropped_table_full"] == 0
    recs = file_records(out)
    assert len(recs) == flows == x["records_exported"]
    reasons = collections.Counter(r["flowEndReason"] for r in recs)
    assert reasons == {"5": flows - 3, "4": 3}
    by_port = {int(r["sourceTransportPort"]): r for r in recs}
    for k in range(1, flows + 1):
        r = by_port[60000 - k]
        assert (r["sourceIPv4Address"], r["packetDeltaCount"], r["octetDeltaCount"]) == \
            (f"10.0.0.{k}", "1", str(len(frames[k - 1])))
    # The evicted ones are the oldest: the first 17 flows in arrival order.
    assert {int(r["sourceTransportPort"]) for r in recs if r["flowEndReason"] == "5"} == \
        {60000 - k for k in range(1, flows - 2)}
