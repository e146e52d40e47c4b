"""ipfwd IPv6 with the hashed table (variants l1 and mem): generated IPv6 and
mixed IPv4/IPv6 captures (extension headers, every drop reason) compared
packet by packet with the Python reference; then the extension header walk,
hop-limit expiry and malformed headers case by case, each case's verdict
named by hand (the reference is checked against those names too), and
randomly mangled IPv6 frames, all under ASan+UBSan in the test suite."""
from __future__ import annotations

import struct
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from harness import read_pcap  # noqa: E402
from ipfwd_harness import assert_like_reference, instance, placement, run_ipfwd  # noqa: E402
from ipfwd_reference import EXTENSION_HEADERS, forward  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic as tr  # noqa: E402

REASONS = ("not_ip", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired", "no_route",
           "ipv6_bad_version", "hop_limit_expired", "ipv6_ext_truncated", "ipv6_hop_by_hop_not_first")
DST = 0x20010DB8_00000001_00000000_0000002A
SRC = 0x20010DB8_0000FFFF_00000000_00000001


def run_and_compare(build_dir: Path, file_prefix: str, tmp: Path, pkts: list[bytes],
                    variant: str) -> tuple[dict, Counter[str]]:
    """Run the frames through ipfwd once (net_pcap in, net_pcap out) and
    compare every sent frame and every drop count with the reference."""
    cap, out = tmp / "in.pcap", tmp / "out.pcap"
    tr.write_pcap(cap, pkts)
    res = run_ipfwd(build_dir, file_prefix, tmp, [f"net_pcap0,rx_pcap={cap}", f"net_pcap1,tx_pcap={out}"],
                    placement([instance(0, 0, 1, 0)], variant), ["--packets", str(len(pkts))])
    res.assert_clean()
    n_entries = res.stats["app_stats"]["table_entries"]
    drops = assert_like_reference(res.stats, read_pcap(out), pkts, lambda p: forward(p, n_entries), REASONS)
    return res.stats, drops


def has_extension_headers(p: bytes) -> bool:
    return len(p) >= 54 and p[12:14] == b"\x86\xdd" and p[20] in EXTENSION_HEADERS


@pytest.mark.parametrize("variant,family", [("l1", "mixed"), ("mem", "ipv6")])
def test_ipv6_captures_forward_like_reference(build_dir: Path, file_prefix: str, tmp_path: Path,
                                              variant: str, family: str) -> None:
    """The l1 and mem variants on the generator's IPv6 captures: a fifth
    broken over every drop reason of the family, a third of the valid IPv6
    packets with extension headers (some later fragments)."""
    pkts = tr.generate(variant, 3000, 16, 64 if variant == "l1" else 100, 0.2, 5, family, 0.3)
    stats, drops = run_and_compare(build_dir, file_prefix, tmp_path, pkts, variant)
    six = ("ipv6_bad_version", "hop_limit_expired", "ipv6_ext_truncated", "ipv6_hop_by_hop_not_first")
    four = ("bad_version_or_ihl", "bad_checksum", "ttl_expired")
    assert all(drops[r] > 0 for r in ("not_ip", "truncated") + six + (four if family == "mixed" else ())), drops
    forwarded_ext = sum(1 for p in pkts if has_extension_headers(p) and not isinstance(forward(p, 64), str))
    assert forwarded_ext > 200
    a = stats["app_stats"]
    if variant == "mem":
        assert a["table_bytes"] >= 4 * a["llc_bytes"]
    else:
        assert a["table_bytes"] == a["l1d_bytes"] // 2
    if family == "mixed":
        v4 = sum(1 for p in pkts if p[12:14] == b"\x08\x00")
        assert 1200 < v4 < 1800


def udp6(plen: int = 10, hop: int = 64, nh: int = 17, vtc: int = 6 << 28, pad: int = 0) -> bytes:
    """An IPv6 frame with payload length plen (bytes after the fixed header,
    zeros), Next Header nh, and pad bytes of Ethernet padding after it."""
    hdr = struct.pack(">IHBB", vtc, plen, nh, hop) + SRC.to_bytes(16, "big") + DST.to_bytes(16, "big")
    return tr.ETH_IPV6 + hdr + bytes(plen) + b"\xee" * pad


def chain(*headers: tuple[int, bytes], upper: int = 17, upper_bytes: int = 8, hop: int = 64,
          plen_delta: int = 0) -> bytes:
    """An IPv6 frame whose payload is the given extension headers (kind,
    body after the Next Header byte) then upper_bytes of upper-layer data;
    the payload length off by plen_delta."""
    kinds = [k for k, _ in headers] + [upper]
    payload = b"".join(bytes([kinds[i + 1]]) + body for i, (_, body) in enumerate(headers))
    payload += bytes(upper_bytes)
    hdr = struct.pack(">IHBB", 6 << 28, len(payload) + plen_delta, kinds[0], hop)
    return tr.ETH_IPV6 + hdr + SRC.to_bytes(16, "big") + DST.to_bytes(16, "big") + payload


def opts(units: int) -> bytes:
    """Hop-by-Hop or Destination Options body: Hdr Ext Len, then PadN."""
    size = 8 * (units + 1)
    return bytes([units, 1, size - 4]) + bytes(size - 4)


def frag(offset: int) -> bytes:
    return struct.pack(">BHI", 0, offset << 3 | 1, 0x1234)


def ah(units4: int) -> bytes:
    """AH body: Payload Len in 4-byte units minus 2 (RFC 4302)."""
    size = 4 * (units4 + 2)
    return bytes([units4, 0, 0]) + struct.pack(">II", 7, 1) + bytes(size - 12)


HBH, ROUTING, FRAGMENT, AH, DEST, ESP, NO_NEXT = 0, 43, 44, 51, 60, 50, 59

# (what, frame, verdict named by hand: "forward" or the drop reason)
CASES: list[tuple[str, bytes, str]] = [
    ("plain UDP", udp6(), "forward"),
    ("traffic class and flow label set", udp6(vtc=6 << 28 | 0xAB << 20 | 0x12345), "forward"),
    ("hop limit 2 leaves with 1", udp6(hop=2), "forward"),
    ("Ethernet padding after the packet", udp6(plen=4, pad=20), "forward"),
    ("No Next Header, payload length 0", udp6(plen=0, nh=NO_NEXT, pad=10), "forward"),
    ("ESP is not walked", udp6(plen=40, nh=ESP), "forward"),
    ("Hop-by-Hop first", chain((HBH, opts(0))), "forward"),
    ("the recommended order", chain((HBH, opts(1)), (DEST, opts(0)), (ROUTING, bytes([2, 4, 0]) + bytes(20)),
                                    (FRAGMENT, frag(0)), (AH, ah(4)), (DEST, opts(2))), "forward"),
    ("chain ending at the payload's last byte", chain((DEST, opts(0)), upper=NO_NEXT, upper_bytes=0), "forward"),
    ("a later fragment: what follows is data, not headers",
     chain((FRAGMENT, frag(100)), upper=HBH, upper_bytes=3), "forward"),
    ("experimental 253 and Mobility walked", chain((253, opts(0)), (135, opts(1))), "forward"),
    ("frame of 53 bytes", udp6()[:53], "truncated"),
    ("Ethernet header alone", tr.ETH_IPV6, "truncated"),
    ("payload length beyond the frame", udp6(plen=10)[:-1], "truncated"),
    ("version 4 under EtherType 0x86DD", udp6(vtc=4 << 28), "ipv6_bad_version"),
    ("version 0", udp6(vtc=0), "ipv6_bad_version"),
    ("hop limit 1", udp6(hop=1), "hop_limit_expired"),
    ("hop limit 0", udp6(hop=0), "hop_limit_expired"),
    ("Hop-by-Hop after Destination Options", chain((DEST, opts(0)), (HBH, opts(0))), "ipv6_hop_by_hop_not_first"),
    ("Routing header longer than the payload", chain((ROUTING, bytes([10, 4, 0]) + bytes(20))),
     "ipv6_ext_truncated"),
    ("Hop-by-Hop with 4 bytes of payload", udp6(plen=4, nh=HBH, pad=10), "ipv6_ext_truncated"),
    ("AH's 4-byte units past the payload", chain((AH, ah(4)), upper_bytes=0, plen_delta=-4), "ipv6_ext_truncated"),
    ("second header cut by the payload length", chain((HBH, opts(0)), (DEST, opts(1)), plen_delta=-20),
     "ipv6_ext_truncated"),
    ("truncated chain and hop limit 1: the chain decides", chain((DEST, opts(3)), upper_bytes=0, hop=1,
                                                                 plen_delta=-8), "ipv6_ext_truncated"),
    ("bad version and hop limit 0: the version decides", udp6(vtc=5 << 28, hop=0), "ipv6_bad_version"),
    ("payload beyond the frame and a bad chain", chain((DEST, opts(0)), (HBH, opts(0)), plen_delta=9),
     "truncated"),
    ("IPv4 header version 6 under EtherType 0x0800",
     tr.packet(0x0A000001, 0x0B000001, 64, 64, 1)[:14] + b"\x65" + bytes(49), "bad_version_or_ihl"),
    ("neither IPv4 nor IPv6", b"\x02" * 12 + b"\x88\xb5" + bytes(50), "not_ip"),
]


def test_ipv6_header_cases_each_with_its_verdict(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    frames = [f for _, f, _ in CASES]
    for what, f, verdict in CASES:  # the reference agrees with the names given by hand
        r = forward(f, 1024)
        assert (verdict == "forward" and not isinstance(r, str)) or r == verdict, (what, r)
        if verdict == "forward":  # only the MACs and the hop limit change
            assert r[12:21] == f[12:21] and r[21] == f[21] - 1 and r[22:] == f[22:], what
    _, drops = run_and_compare(build_dir, file_prefix, tmp_path, frames, "l1")
    assert drops == Counter(v for _, _, v in CASES if v != "forward")


def test_mangled_ipv6_frames_are_counted_never_a_crash(build_dir: Path, file_prefix: str,
                                                       tmp_path: Path) -> None:
    """IPv6 frames with extension header chains, then bytes of the fixed
    header and the chain overwritten at random and frames cut anywhere: each
    is forwarded or dropped by the reason the reference gives (under
    ASan+UBSan in the test suite: no report)."""
    rng = np.random.default_rng(9)
    base = tr.generate("l1", 1500, 16, 120, 0.0, 9, "ipv6", 1.0)
    pkts = []
    for p in base:
        b = bytearray(p)
        for _ in range(int(rng.integers(1, 4))):
            b[int(rng.integers(14, min(len(b), 110)))] = int(rng.integers(0, 256))
        if rng.random() < 0.3:
            b = b[:int(rng.integers(0, len(b) + 1))]
        pkts.append(bytes(b))
    _, drops = run_and_compare(build_dir, file_prefix, tmp_path, pkts, "l1")
    assert drops["ipv6_ext_truncated"] > 0 and drops["truncated"] > 0 and drops["ipv6_bad_version"] > 0


def test_generator_ipv6_is_deterministic_and_checks_its_options(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    a = tr.generate("mem", 300, 16, 90, 0.2, 7, "mixed", 0.5)
    assert a == tr.generate("mem", 300, 16, 90, 0.2, 7, "mixed", 0.5)
    assert a != tr.generate("mem", 300, 16, 90, 0.2, 8, "mixed", 0.5)
    six = [p for p in tr.generate("mem", 300, 16, 90, 0.0, 7, "ipv6") if p[12:14] == b"\x86\xdd"]
    assert len(six) == 300 and all(p[38] >> 5 == 1 for p in six)  # mem: destinations in 2000::/3
    for args, what in ((["--family", "ipv4", "--ext-headers", "0.5"], "--ext-headers 0.5"),
                       (["--family", "ipv7"], "--family"), (["--ext-headers", "2", "--family", "ipv6"], "--ext-headers 2")):
        with pytest.raises(SystemExit) as e:
            tr.main(["l1", str(tmp_path / "x.pcap"), *args])
        assert e.value.code == 2 and what in capsys.readouterr().err
    assert not (tmp_path / "x.pcap").exists()
