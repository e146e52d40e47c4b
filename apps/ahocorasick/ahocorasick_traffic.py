#!/usr/bin/env python3
"""Default traffic for ahocorasick: TCP and UDP packets of the simple IMIX
size mix (64/594/1514 bytes, 7:4:1) with random payload bytes, and a set
fraction (--match-fraction, default 0.05) carrying one planted keyword of the
chosen Snort rule set at a random offset, so the matcher both scans clean
payloads and reports matches, as on an IDS sensor's link.

Keywords are the rules' `content:` strings (|hex| runs and \\ escapes
decoded); --dos keeps the rules of the paper's DoS classtypes. Ports are
those rules look at most (80, 443, 53, 25, ...), spread over many flows.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import pcapgen  # noqa: E402

DOS_CLASSTYPES = ("attempted-dos", "denial-of-service", "successful-dos")
DEFAULT_RULES = Path(__file__).resolve().parents[3] / "shared" / "data" / "snort" / "community.rules"
CONTENT = re.compile(r'content:\s*(!?)\s*"((?:[^"\\]|\\.)*)"')
CLASSTYPE = re.compile(r"classtype:\s*([^;]+);")
PORTS = np.array([80, 443, 53, 25, 21, 8080, 110, 143, 445, 3306])


def decode_content(text: str) -> bytes:
    """A Snort content string: |41 42| hex runs, backslash escapes."""
    out = bytearray()
    parts = text.split("|")
    for i, part in enumerate(parts):
        if i % 2:
            out += bytes.fromhex(part.replace(" ", ""))
        else:
            out += re.sub(r"\\(.)", r"\1", part).encode("latin-1")
    return bytes(out)


def keywords(rules: Path, dos: bool) -> list[bytes]:
    """The positive content keywords of the rules (commented-out ones too,
    as the app loads them by default), at least 2 bytes long."""
    found: list[bytes] = []
    for n, line in enumerate(rules.read_text(errors="replace").splitlines(), 1):
        line = line.lstrip("# ").strip()
        if not line.startswith("alert"):
            continue
        if dos:
            m = CLASSTYPE.search(line)
            if not m or m.group(1).strip() not in DOS_CLASSTYPES:
                continue
        for neg, text in CONTENT.findall(line):
            if neg:
                continue
            try:
                kw = decode_content(text)
            except ValueError as e:
                raise SystemExit(f"{rules}:{n}: bad content {text!r}: {e}") from None
            if len(kw) >= 2:
                found.append(kw)
    if not found:
        raise SystemExit(f"{rules}: no content keyword{' in the DoS rules' if dos else ''}")
    return found


def generate(out: Path, n: int, seed: int, rules: Path, dos: bool, match_fraction: float) -> int:
    rng = np.random.default_rng(seed)
    kws = keywords(rules, dos)
    sizes = pcapgen.imix_sizes(rng, n)
    tcp = rng.random(n) < 0.8
    planted = rng.random(n) < match_fraction
    frames = []
    for i in range(n):
        proto = pcapgen.PROTO_TCP if tcp[i] else pcapgen.PROTO_UDP
        flow = pcapgen.Flow(pcapgen.ipv4(0x0B000000 + int(rng.integers(1, 1 << 16))),
                            pcapgen.ipv4(0x0A000000 + int(rng.integers(1, 1 << 16))), proto,
                            int(rng.integers(1024, 65536)), int(PORTS[rng.integers(len(PORTS))]))
        room = int(sizes[i]) - 14 - 20 - (20 if tcp[i] else 8)
        payload = bytearray(rng.integers(0, 256, size=room, dtype=np.uint8).tobytes())
        if planted[i]:
            kw = kws[int(rng.integers(len(kws)))][:room]
            at = int(rng.integers(0, room - len(kw) + 1))
            payload[at:at + len(kw)] = kw
        frames.append(pcapgen.frame(flow, bytes(payload), tcp_flags=pcapgen.TCP_ACK | pcapgen.TCP_PSH,
                                    seq=i * 1460))
    return pcapgen.write_pcap(out, frames)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", type=Path, help="pcap file to write")
    ap.add_argument("--packets", type=int, default=16384, help="packets in the capture (16384)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rules", type=Path, default=DEFAULT_RULES, help=f"Snort rules ({DEFAULT_RULES})")
    ap.add_argument("--dos", action="store_true", help="keywords of the DoS classtypes only")
    ap.add_argument("--match-fraction", type=float, default=0.05,
                    help="fraction of packets carrying a planted keyword (0.05)")
    a = ap.parse_args(argv)
    if a.packets < 1:
        ap.error(f"--packets {a.packets}: expected at least 1")
    if not 0.0 <= a.match_fraction <= 1.0:
        ap.error(f"--match-fraction {a.match_fraction}: expected a fraction 0..1")
    if not a.rules.is_file():
        ap.error(f"--rules {a.rules}: no such file")
    generate(a.output, a.packets, a.seed, a.rules, a.dos, a.match_fraction)
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "ahocorasick_traffic.py"))
