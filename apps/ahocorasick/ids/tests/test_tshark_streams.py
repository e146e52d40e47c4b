"""TCP reassembly against an independent reference: for every TCP stream
of every shared capture, the bytes ac-ids puts together in each direction
(the PDUs it judges, in order) must equal what tshark's "follow" gives
(-o tcp.desegment_tcp_streams:TRUE -z follow,tcp,raw), byte for byte.
ac-ids runs without a flow timeout (tshark has none: the comparison is of
reassembly, not of flow aging).

Where they cannot agree by design, the difference is named by a rule keyed
on a property of the direction's packets, never by a file name (explain()
below), and counted; every other difference fails the test.  The figures
are printed (pytest -s): streams, directions, equal, explained by rule."""
from __future__ import annotations

import collections
import ipaddress
import re
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

RULES = 'alert tcp any any -> any any (msg:"never"; content:"|00 ff 00 ff 00 ff|"; sid:1;)\n'
BLOCK = re.compile(r"^Node 0: (.+):(\d+)\nNode 1: (.+):(\d+)\n(.*?)^=+$", re.M | re.S)

Key = tuple[str, int, str, int]  # src, sport, dst, dport (one direction)


def norm(addr: str) -> str:
    return str(ipaddress.ip_address(addr.strip("[]")))


def parse_follow(out: str) -> dict[int, dict[Key, bytes]]:
    """tshark's follow output: per stream number, the bytes of each direction."""
    parts: dict[int, dict[Key, bytes]] = {}
    for block in out.split("Follow: tcp,raw\n")[1:]:
        num = int(re.match(r"Filter: tcp.stream eq (\d+)", block).group(1))
        m = BLOCK.search(block)
        if m is None:
            continue
        a = (norm(m.group(1)), int(m.group(2)))
        b = (norm(m.group(3)), int(m.group(4)))
        data: dict[Key, bytearray] = {a + b: bytearray(), b + a: bytearray()}
        for line in m.group(5).splitlines():
            if line.strip():
                data[b + a if line.startswith("\t") else a + b] += bytes.fromhex(line.strip())
        parts[num] = {k: bytes(v) for k, v in data.items()}
    return parts


def pcapng_section(path: Path) -> bytes:
    """The capture as one pcapng section (a pcapng file already is one)."""
    data = path.read_bytes()
    if data[:4] == b"\x0a\x0d\x0d\x0a":
        return data
    link, recs = records(path)
    nano = data[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    shb = struct.pack("<IIIHHq", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1) + struct.pack("<I", 28)
    opt = struct.pack("<HHB3x", 9, 1, 9 if nano else 6) + struct.pack("<HH", 0, 0)
    idb_body = struct.pack("<HHI", link, 0, 262144) + opt
    idb = struct.pack("<II", 1, 12 + len(idb_body)) + idb_body + struct.pack("<I", 12 + len(idb_body))
    out = [shb, idb]
    for frame, orig, ts in recs_ts(path):
        pad = b"\0" * (-len(frame) % 4)
        n = 32 + len(frame) + len(pad)
        out.append(struct.pack("<IIIIIII", 6, n, 0, ts >> 32, ts & 0xFFFFFFFF, len(frame), orig)
                   + frame + pad + struct.pack("<I", n))
    return b"".join(out)


def recs_ts(path: Path) -> list[tuple[bytes, int, int]]:
    """A pcap's records with their time in its own unit (us or ns)."""
    data = path.read_bytes()
    e = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    scale = 1000000000 if data[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1000000
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, cap, orig = struct.unpack(e + "IIII", data[off:off + 16])
        out.append((data[off + 16:off + 16 + cap], orig, sec * scale + frac))
        off += 16 + cap
    return out


def tshark_all(caps: list[Path], tmp: Path) -> tuple[dict[Path, dict[Key, bytes]], int]:
    """Per capture with TCP, per direction, the bytes of its TCP streams
    (streams on the same addresses and ports joined in their order).  One
    tshark run over every capture as a section of one pcapng file (a
    tshark start costs more than a capture), then one per capture where
    tshark joined a stream across two captures."""
    merged = tmp / "all.pcapng"
    merged.write_bytes(b"".join(pcapng_section(c) for c in caps))
    fields = subprocess.run(["tshark", "-r", str(merged), "-T", "fields", "-e", "frame.section_number",
                             "-e", "tcp.stream"], capture_output=True, text=True, timeout=300).stdout
    sections: dict[int, set[int]] = collections.defaultdict(set)
    for line in fields.splitlines():
        sec, _, stream = line.partition("\t")
        if stream.strip().isdigit():
            sections[int(stream)].add(int(sec))
    args = ["tshark", "-r", str(merged), "-q", "-o", "tcp.desegment_tcp_streams:TRUE"]
    for st in sorted(sections):
        args += ["-z", f"follow,tcp,raw,{st}"]
    parts = parse_follow(subprocess.run(args, capture_output=True, text=True, timeout=600).stdout)
    per: dict[Path, dict[Key, bytes]] = collections.defaultdict(lambda: collections.defaultdict(bytes))
    alone = {caps[sec - 1] for st, secs in sections.items() if len(secs) > 1 for sec in secs}
    for st in sorted(sections):
        (sec,) = sections[st] if len(sections[st]) == 1 else (None,)
        if sec is None or caps[sec - 1] in alone:
            continue
        for k, v in parts.get(st, {}).items():
            per[caps[sec - 1]][k] += v
    for cap in alone:
        per[cap] = collections.defaultdict(bytes, tshark_streams(cap) or {})
    return {c: {k: v for k, v in d.items() if v} for c, d in per.items()}, len(sections)


def tshark_streams(cap: Path) -> dict[Key, bytes] | None:
    """tshark_all for one capture."""
    ids = subprocess.run(["tshark", "-r", str(cap), "-T", "fields", "-e", "tcp.stream"],
                         capture_output=True, text=True, timeout=120).stdout.split()
    streams = sorted({int(x) for x in ids if x.strip().isdigit()})
    if not streams:
        return None
    args = ["tshark", "-r", str(cap), "-q", "-o", "tcp.desegment_tcp_streams:TRUE"]
    for s in streams:
        args += ["-z", f"follow,tcp,raw,{s}"]
    parts = parse_follow(subprocess.run(args, capture_output=True, text=True, timeout=300).stdout)
    joined: dict[Key, bytes] = collections.defaultdict(bytes)
    for num in sorted(parts):
        for k, v in parts[num].items():
            joined[k] += v
    return dict(joined)


def ids_streams(exe: Path, rules: Path, cap: Path, tmp: Path) -> tuple[dict[Key, bytes], dict[Key, int]]:
    """Per direction, the PDUs ac-ids judged, joined; and the PDUs that
    came after lost bytes (a hole)."""
    dump = tmp / "streams.txt"
    subprocess.run([str(exe), "--rules", str(rules), "--dump-streams", str(dump), "--flow-timeout", "0", str(cap)],
                   check=True, capture_output=True, timeout=120)
    out: dict[Key, bytearray] = collections.defaultdict(bytearray)
    gaps: dict[Key, int] = collections.Counter()
    for line in dump.read_text().splitlines():
        src, sport, dst, dport, gap, *hexa = line.split(" ")
        key = (norm(src), int(sport), norm(dst), int(dport))
        out[key] += bytes.fromhex(hexa[0] if hexa else "")
        gaps[key] += int(gap)
    return {k: bytes(v) for k, v in out.items() if v}, gaps


MISSING = re.compile(rb"\[(\d+) bytes missing in capture file\]\x00?")


@dataclass
class Props:
    """What a direction's packets have that tells why the streams differ."""
    outer: bool = False      # seen as TCP in the outer IP header (the links scan() reads)
    truncated: bool = False  # a segment cut by the capture's snap length
    rst_data: bool = False   # data on a RST (the target never hands it on)
    ranges: set[tuple[int, int]] = field(default_factory=set)  # (seq, end) of its data

    def span(self) -> int:
        """Bytes of sequence space its data covers."""
        n, last = 0, None
        for a, b in sorted(self.ranges):
            if last is not None and a < last:
                a = last
            if b > a:
                n += b - a
                last = b if last is None else max(last, b)
        return n


@dataclass
class Capture:
    link: int
    dirs: dict[Key, Props] = field(default_factory=lambda: collections.defaultdict(Props))


def records(path: Path) -> tuple[int, list[tuple[bytes, int]]]:
    """(link type, [(captured bytes, original length)]) of a pcap or the
    first interface of a pcapng."""
    from scapy.utils import RawPcapNgReader, RawPcapReader
    data = path.read_bytes()
    if data[:4] == b"\x0a\x0d\x0d\x0a":
        with RawPcapNgReader(str(path)) as r:
            recs = [(bytes(p), getattr(m, "wirelen", len(p)) or len(p)) for p, m in r]
            link = getattr(r, "interfaces", [(1,)])[0][0] if getattr(r, "interfaces", None) else 1
        return link, recs
    le = data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
    e = "<" if le else ">"
    link = struct.unpack(e + "I", data[20:24])[0] & 0xFFFF
    recs, off = [], 24
    while off + 16 <= len(data):
        _s, _u, cap, orig = struct.unpack(e + "IIII", data[off:off + 16])
        recs.append((data[off + 16:off + 16 + cap], orig))
        off += 16 + cap
    return link, recs


def scan(path: Path) -> Capture:
    """Each TCP direction's properties, from the frames as ac-ids reads them."""
    link, recs = records(path)
    c = Capture(link)
    for frame, _orig in recs:
        if link == 1:
            o, t = 12, None
            while o + 2 <= len(frame):
                t = struct.unpack(">H", frame[o:o + 2])[0]
                if t in (0x8100, 0x88A8, 0x9100):
                    o += 4
                    continue
                break
            o += 2
        elif link in (12, 101, 228, 229):
            o, t = 0, 0x86DD if frame[:1] and frame[0] >> 4 == 6 else 0x0800
        elif link == 113 and len(frame) >= 16:
            o, t = 16, struct.unpack(">H", frame[14:16])[0]
        elif link == 276 and len(frame) >= 20:
            o, t = 20, struct.unpack(">H", frame[0:2])[0]
        elif link in (0, 108) and len(frame) >= 4:
            af = struct.unpack(">I" if link == 108 else "<I", frame[:4])[0]
            o, t = 4, 0x0800 if af == 2 else 0x86DD
        else:
            continue
        ip = frame[o:]
        if t == 0x0800 and len(ip) >= 20 and ip[0] >> 4 == 4:
            ihl, tot, proto = (ip[0] & 15) * 4, struct.unpack(">H", ip[2:4])[0], ip[9]
            src, dst, l4, end = ipaddress.ip_address(ip[12:16]), ipaddress.ip_address(ip[16:20]), ihl, tot
        elif t == 0x86DD and len(ip) >= 40 and ip[0] >> 4 == 6:
            proto, l4, end = ip[6], 40, 40 + struct.unpack(">H", ip[4:6])[0]
            src, dst = ipaddress.ip_address(ip[8:24]), ipaddress.ip_address(ip[24:40])
        else:
            continue
        if proto != 6 or len(ip) < l4 + 14:
            continue
        sp, dp = struct.unpack(">HH", ip[l4:l4 + 4])
        p = c.dirs[(str(src), sp, str(dst), dp)]
        p.outer = True
        hl = (ip[l4 + 12] >> 4) * 4 if len(ip) > l4 + 12 else 20
        if len(ip) < end:
            p.truncated = True
        if ip[l4 + 13] & 0x04 and end > l4 + hl:
            p.rst_data = True
        elif end > l4 + hl and len(ip) >= 20 + l4:
            seq = struct.unpack(">I", ip[l4 + 4:l4 + 8])[0] + (1 if ip[l4 + 13] & 0x02 else 0)
            p.ranges.add((seq, seq + end - l4 - hl))
    return c


def explain(cap: Capture, key: Key, want: bytes, got: bytes) -> str | None:
    """Why tshark's bytes and ours may differ by design, or None."""
    p = cap.dirs.get(key)
    m = MISSING.search(want)
    if m and p is not None and want[:m.start()] == got[:m.start()] and len(got) == p.span():
        # tshark writes its own text where it thinks bytes are missing; the
        # capture holds every byte of the direction, and ours has them all
        return "tshark marks bytes missing that the capture holds (ours has every byte)"
    # TCP inside a VXLAN or Geneve tunnel, and on the PPP and ARCNET links,
    # is excused no more: ac-ids decapsulates and reads them
    if p is None or not p.outer:
        return None
    if p.truncated and (not got or want.startswith(got) or len(got) < len(want)):
        return "segments cut by the capture's snap length (not judged)"
    if p.rst_data and want.startswith(got):
        return "data on a RST (never handed to the target's application)"
    return None


def why_differ(want: bytes, got: bytes) -> str:
    if got == want:
        return "equal"
    if not got:
        return "ours empty"
    if want.startswith(got):
        return "ours a prefix"
    if got.startswith(want):
        return "tshark's a prefix"
    return "differ"


@pytest.mark.offline
def test_reassembled_bytes_equal_tsharks(build_dir: Path, shared_dir: Path, tmp_path: Path) -> None:
    exe = build_dir / "apps" / "ahocorasick" / "ac-ids"
    rules = tmp_path / "never.rules"
    rules.write_text(RULES)
    caps = sorted(p for p in (shared_dir / "data" / "pcaps" / "tcpdump-tests").iterdir()
                  if p.suffix in (".pcap", ".pcapng"))
    assert len(caps) >= 400
    n_caps = n_dirs = equal = 0
    explained: collections.Counter[str] = collections.Counter()
    bad: list[str] = []
    everything, n_streams = tshark_all(caps, tmp_path)
    # the captures without TCP data: ours holds none either (one run)
    rest = [c for c in caps if c not in everything]
    dump = tmp_path / "rest.txt"
    subprocess.run([str(exe), "--rules", str(rules), "--dump-streams", str(dump), "--flow-timeout", "0",
                    *map(str, rest)], check=True, capture_output=True, timeout=300)
    assert dump.read_text() == "", dump.read_text()[:500]
    for cap in caps:
        want = everything.get(cap)
        if want is None:
            continue
        n_caps += 1
        got, _gaps = ids_streams(exe, rules, cap, tmp_path)
        props = scan(cap)
        for key in sorted(set(want) | set(got)):
            n_dirs += 1
            w, g = want.get(key, b""), got.get(key, b"")
            if w == g:
                equal += 1
                continue
            why = explain(props, key, w, g)
            if why is not None:
                explained[why] += 1
            else:
                bad.append(f"{cap.name} {key}: {why_differ(w, g)} ({len(g)} bytes, tshark {len(w)})")
    print(f"\ntshark: {n_streams} TCP streams in {len(caps)} captures, {n_caps} with data, "
          f"{n_dirs} directions, {equal} equal, "
          f"{sum(explained.values())} explained, {len(bad)} unexplained")
    for why, n in explained.most_common():
        print(f"  {n:3d}  {why}")
    assert n_dirs > 80 and equal > 0.75 * n_dirs
    assert not bad, "\n".join(bad)
