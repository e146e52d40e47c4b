"""Tunnels and links in built frames, through ac-ids: TCP inside VXLAN and
Geneve is decapsulated and reassembled as its own flow (an attack split in
two segments is found only with reassembly, as outside the tunnel); a
malformed tunnel header is counted by its fault and the datagram judged
as the UDP it is (nothing hidden from the udp rules), never a crash; PPP,
PPP in HDLC framing, Cisco HDLC and ARCNET links carry IPv4 and IPv6 TCP
(and MPLS over PPP) to the same rules."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import frames as fr  # noqa: E402

ATTACK = b"TUNNELED-ATTACK-BYTES"
CUT = 9  # the attack's bytes split here across two segments
RULES = (f'alert tcp any any -> any any (msg:"split tcp"; content:"{ATTACK.decode()}"; sid:9101;)\n'
         f'alert udp any any -> any any (msg:"udp"; content:"{ATTACK.decode()}"; sid:9102;)\n')
C4, S4 = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
C6, S6 = bytes.fromhex("20010db8000000000000000000000001"), bytes.fromhex("20010db8000000000000000000000002")
U4, V4 = bytes([198, 18, 100, 1]), bytes([198, 18, 100, 2])  # the underlay
U6, V6 = bytes.fromhex("20010db8ff0000000000000000000001"), bytes.fromhex("20010db8ff0000000000000000000002")

LINK_PPP, LINK_PPP_HDLC, LINK_C_HDLC, LINK_ARCNET_LINUX, LINK_ARCNET = 9, 50, 104, 129, 7


def split_session(client: bytes, server: bytes, cport: int) -> list[bytes]:
    """A TCP session (Ethernet frames) whose attack is cut in two segments."""
    payload = b"prefix " + ATTACK + b" suffix"
    cut = len(b"prefix ") + CUT
    s = fr.Session(client, server, cport, 80).handshake()
    return s.send(0, payload[:cut]).send(cut, payload[cut:]).close().frames


def udp_frame(src: bytes, dst: bytes, dport: int, payload: bytes, sport: int = 50000) -> bytes:
    return fr.ip_frame(src, dst, fr.UDP, fr.l4_segment(src, dst, fr.UDP, sport, dport, payload))


def vxlan(inner: bytes, flags: int = 0x08, vni: int = 42, outer6: bool = False) -> bytes:
    hdr = struct.pack(">B3xI", flags, vni << 8)
    return udp_frame(U6 if outer6 else U4, V6 if outer6 else V4, 4789, hdr + inner)


def geneve(inner: bytes, proto: int = 0x6558, opt_words: int = 2, version: int = 0,
           outer6: bool = True, opt_bytes: bytes | None = None) -> bytes:
    opts = bytes(4 * opt_words) if opt_bytes is None else opt_bytes
    hdr = struct.pack(">BBHI", version << 6 | opt_words, 0, proto, 7 << 8)
    return udp_frame(U6 if outer6 else U4, V6 if outer6 else V4, 6081, hdr + opts + inner)


def run(build_dir: Path, tmp: Path, frames: list[bytes], link: int = 1,
        extra: list[str] | None = None) -> tuple[list[dict], dict, str]:
    cap, rules, log, stats = tmp / "t.pcap", tmp / "t.rules", tmp / "alerts.json", tmp / "stats.json"
    fr.pcapgen.write_pcap(cap, frames, linktype=link)
    rules.write_text(RULES)
    r = subprocess.run([str(build_dir / "apps" / "ahocorasick" / "ac-ids"), "--rules", str(rules),
                        "--alerts", str(log), "--stats", str(stats), *(extra or []), str(cap)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [json.loads(x) for x in log.read_text().splitlines()], json.loads(stats.read_text()), r.stderr


def flows(log: list[dict], sid: int) -> set[tuple[str, int, str, int]]:
    return {(a["src_ip"], a["src_port"], a["dest_ip"], a["dest_port"])
            for a in log if a["alert"]["signature_id"] == sid}


@pytest.mark.offline
def test_split_tcp_in_vxlan_and_geneve_is_found_only_with_reassembly(build_dir: Path, tmp_path: Path) -> None:
    plain = split_session(C4, S4, 40000)
    v = [vxlan(f) for f in split_session(C4, S4, 40001)]
    v6 = [vxlan(f, outer6=True) for f in split_session(C6, S6, 40002)]
    g = [geneve(f) for f in split_session(C6, S6, 40003)]
    g4 = [geneve(f, outer6=False, opt_words=0) for f in split_session(C4, S4, 40004)]
    bare = [geneve(f[14:], proto=0x0800) for f in split_session(C4, S4, 40005)]  # IP bare in Geneve
    frames = plain + v + v6 + g + g4 + bare
    log, stats, _ = run(build_dir, tmp_path, frames)
    want = {("10.0.0.1", 40000, "10.0.0.2", 80), ("10.0.0.1", 40001, "10.0.0.2", 80),
            ("2001:db8::1", 40002, "2001:db8::2", 80), ("2001:db8::1", 40003, "2001:db8::2", 80),
            ("10.0.0.1", 40004, "10.0.0.2", 80), ("10.0.0.1", 40005, "10.0.0.2", 80)}
    # the inner flow, once each; the outer UDP is transport, not judged
    assert flows(log, 9101) == want and len([a for a in log if a["alert"]["signature_id"] == 9101]) == 6
    assert flows(log, 9102) == set()
    assert stats["tunnels"]["vxlan"] == len(v) + len(v6)
    assert stats["tunnels"]["geneve"] == len(g) + len(g4) + len(bare)
    assert sum(stats["tunnels"]["not_decapsulated"].values()) == 0
    # the attack is split: without reassembly no flow alerts, tunnelled or not
    log, stats, _ = run(build_dir, tmp_path, frames, extra=["--no-reassembly"])
    assert flows(log, 9101) == set() and stats["tunnels"]["vxlan"] == len(v) + len(v6)


@pytest.mark.offline
def test_fragments_inside_a_tunnel_are_put_back_together(build_dir: Path, tmp_path: Path) -> None:
    """The inner IP datagram cut into fragments, each in its own VXLAN or
    Geneve packet: defragmented as the inner packet, the attack found; the
    outer datagram cut; and both cut at once."""
    frames = []
    for k, (wrap, client, server) in enumerate(((vxlan, C4, S4), (geneve, C6, S6))):
        s = fr.Session(client, server, 41000 + k, 80).handshake()
        frames += [wrap(f) for f in s.frames]
        seg = s.segment_bytes(0, b"xx " + ATTACK + b" yy")
        frames += [wrap(fr.fragment(client, server, fr.TCP, 77, 0, seg[:24], True)),
                   wrap(fr.fragment(client, server, fr.TCP, 77, 24, seg[24:], False))]
    # and the outer datagram cut in fragments, the tunnel whole inside it
    s = fr.Session(C4, S4, 41002, 80).handshake()
    frames += [vxlan(f) for f in s.frames]
    inner = s._seg(True, 0, b"xx " + ATTACK + b" yy", fr.ACK | fr.PSH, 64)
    udp = fr.l4_segment(U4, V4, fr.UDP, 50000, 4789, struct.pack(">B3xI", 8, 42 << 8) + inner)
    frames += [fr.fragment(U4, V4, fr.UDP, 78, 0, udp[:40], True), fr.fragment(U4, V4, fr.UDP, 78, 40, udp[40:], False)]
    # every frame a tunnel carried counts once (the outer fragments as their datagram)
    tunneled = len(frames) - 1
    # and both cut: the inner datagram in two fragments, each in a VXLAN packet whose outer datagram is cut
    # in two as well (an attack the defragmenter must put back together twice over to see)
    s = fr.Session(C4, S4, 41003, 80).handshake()
    frames += [vxlan(f) for f in s.frames]
    tunneled += len(s.frames)
    seg = s.segment_bytes(0, b"xx " + ATTACK + b" yy")
    for k, inner in enumerate((fr.fragment(C4, S4, fr.TCP, 79, 0, seg[:24], True),
                               fr.fragment(C4, S4, fr.TCP, 79, 24, seg[24:], False))):
        udp = fr.l4_segment(U4, V4, fr.UDP, 50000, 4789, struct.pack(">B3xI", 8, 42 << 8) + inner)
        frames += [fr.fragment(U4, V4, fr.UDP, 80 + k, 0, udp[:40], True),
                   fr.fragment(U4, V4, fr.UDP, 80 + k, 40, udp[40:], False)]
        tunneled += 1
    log, stats, _ = run(build_dir, tmp_path, frames)
    assert flows(log, 9101) == {("10.0.0.1", 41000, "10.0.0.2", 80), ("2001:db8::1", 41001, "2001:db8::2", 80),
                                ("10.0.0.1", 41002, "10.0.0.2", 80), ("10.0.0.1", 41003, "10.0.0.2", 80)}
    assert stats["defrag"]["reassembled"] == 6
    assert stats["tunnels"]["vxlan"] + stats["tunnels"]["geneve"] == tunneled


@pytest.mark.offline
def test_malformed_tunnel_headers_are_counted_and_judged_as_udp(build_dir: Path, tmp_path: Path) -> None:
    inner = fr.Session(C4, S4, 42000, 80)._seg(True, 0, ATTACK, fr.ACK | fr.PSH, 64)  # a data segment
    bad = {
        "bad_header": [vxlan(inner, flags=0x00), geneve(inner, version=1)],
        "truncated": [udp_frame(U4, V4, 4789, b"\x08\x00\x00\x00"), geneve(b"", opt_words=63, opt_bytes=ATTACK)],
        "unknown_protocol": [geneve(inner, proto=0x1234)],
        "too_deep": [vxlan(vxlan(vxlan(inner)))],
    }
    frames = [f for fs in bad.values() for f in fs]
    # every tunnel's UDP payload cut at every length (the outer headers
    # whole): no crash, every frame accounted for, nothing judged
    whole = [vxlan(inner), geneve(inner), geneve(inner[14:], proto=0x0800), vxlan(geneve(inner))]
    cuts = []
    for f in whole:
        outer6 = f[12:14] == b"\x86\xdd"
        l4 = 14 + (40 if outer6 else 20)
        pay, port = f[l4 + 8:], struct.unpack(">H", f[l4 + 2:l4 + 4])[0]
        cuts += [udp_frame(U6 if outer6 else U4, V6 if outer6 else V4, port, pay[:n]) for n in range(len(pay))]
    log, stats, _ = run(build_dir, tmp_path, frames + cuts)
    got = stats["tunnels"]["not_decapsulated"]
    assert got["bad_header"] == 2 and got["unknown_protocol"] == 1 and got["too_deep"] == 1
    assert got["truncated"] >= 2 + 4 * 8  # each cut inside a tunnel header
    # the malformed ones that carry the attack are judged as UDP: one alert each
    assert len([a for a in log if a["alert"]["signature_id"] == 9102]) == 5
    assert flows(log, 9101) == set() and stats["frames"] == len(frames) + len(cuts)


def ppp_frames(frames: list[bytes], style: str) -> list[bytes]:
    """Ethernet frames re-framed: PPP with or without 0xff03, a compressed
    protocol field, Cisco HDLC, ARCNET (Linux RFC 1051 and RFC 1201; ATA
    878.1), MPLS over PPP."""
    out = []
    for f in frames:
        v6, ip = f[12:14] == b"\x86\xdd", f[14:]
        hdr = {
            "ppp-hdlc": b"\xff\x03" + (b"\x00\x57" if v6 else b"\x00\x21"),
            "ppp": b"\x00\x57" if v6 else b"\x00\x21",
            "ppp-pfc": b"\x57" if v6 else b"\x21",
            "cisco": b"\x0f\x00" + f[12:14],
            "arcnet-linux": b"\x01\x02\x00\x00" + (b"\xc4\x00\x00\x00" if v6 else b"\xf0"),
            "arcnet-linux-1201": b"\x01\x02\x00\x00" + (b"\xc4" if v6 else b"\xd4") + b"\x00\x00\x01",
            "arcnet": b"\x01\x02" + (b"\xc4" if v6 else b"\xd4") + b"\x00\x00\x01",
            "mpls": b"\xff\x03\x02\x81" + struct.pack(">I", 100 << 12 | 0 << 8 | 64)
            + struct.pack(">I", 200 << 12 | 1 << 8 | 64),
        }[style]
        out.append(hdr + ip)
    return out


@pytest.mark.offline
@pytest.mark.parametrize("link,styles", [(LINK_PPP, ["ppp-hdlc", "ppp", "ppp-pfc", "mpls"]),
                                         (LINK_PPP_HDLC, ["ppp-hdlc", "cisco"]),
                                         (LINK_C_HDLC, ["cisco"]),
                                         (LINK_ARCNET_LINUX, ["arcnet-linux", "arcnet-linux-1201"]),
                                         (LINK_ARCNET, ["arcnet"])])
def test_ppp_hdlc_and_arcnet_carry_ipv4_and_ipv6_tcp(build_dir: Path, tmp_path: Path, link: int,
                                                     styles: list[str]) -> None:
    frames, want = [], set()
    for k, style in enumerate(styles):
        frames += ppp_frames(split_session(C4, S4, 43000 + 2 * k), style)
        frames += ppp_frames(split_session(C6, S6, 43001 + 2 * k), style)
        want |= {("10.0.0.1", 43000 + 2 * k, "10.0.0.2", 80), ("2001:db8::1", 43001 + 2 * k, "2001:db8::2", 80)}
    control = {LINK_PPP: b"\xff\x03\xc0\x21\x01\x01\x00\x04",  # LCP: not IP
               LINK_PPP_HDLC: b"\xff\x03\xc0\x21\x01\x01\x00\x04",
               LINK_C_HDLC: b"\x8f\x00\x80\x35" + bytes(8),  # Cisco SLARP
               LINK_ARCNET_LINUX: b"\x01\x02\x00\x00\xf1" + bytes(28),  # RFC 1051 ARP
               LINK_ARCNET: b"\x01\x02\xd4\x03\x00\x01" + bytes(20)}[link]  # a piece of a split packet
    log, stats, err = run(build_dir, tmp_path, frames + [control], link=link)
    assert flows(log, 9101) == want and "not one ac-ids reads" not in err
    # the control frame: skipped by the link (or, Cisco's SLARP, not IP)
    assert stats["frames_link_type_unhandled"] + stats["packets_unscanned"]["not_ip"] == 1


@pytest.mark.offline
def test_a_link_type_not_read_is_said(build_dir: Path, tmp_path: Path) -> None:
    frames = [b"\x00" * 40]
    log, stats, err = run(build_dir, tmp_path, frames, link=105)  # IEEE 802.11
    assert "link type 105" in err and "not one ac-ids reads" in err
    assert stats["frames_link_type_unhandled"] == 1 and log == []


def test_the_app_decapsulates_as_ac_ids_does(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """The DPDK app decodes with the same engine: the split attack in VXLAN
    and Geneve found on the inner flows, the malformed tunnel counted, every
    packet accounted for."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from ac_run import assert_clean, run_app
    inner = fr.Session(C4, S4, 44009, 80)._seg(True, 0, ATTACK, fr.ACK | fr.PSH, 64)
    frames = ([vxlan(f) for f in split_session(C4, S4, 44001)] + [geneve(f) for f in split_session(C6, S6, 44002)]
              + [vxlan(inner, flags=0)])
    cap, rules, log = tmp_path / "t.pcap", tmp_path / "t.rules", tmp_path / "alerts.json"
    fr.pcapgen.write_pcap(cap, frames)
    rules.write_text(RULES)
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  ["--mode", "rules", "--rules", str(rules), "--alert-log", str(log), "--packets", str(len(frames))],
                  duration=None, timeout=120)
    assert_clean(run)
    app = run.stats["app_stats"]
    assert run.stats["total"]["rx_packets"] == len(frames)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert flows(lines, 9101) == {("10.0.0.1", 44001, "10.0.0.2", 80), ("2001:db8::1", 44002, "2001:db8::2", 80)}
    assert flows(lines, 9102) == {("198.18.100.1", 50000, "198.18.100.2", 4789)}
    assert app["tunnels"]["vxlan"] == len(frames) - 1 - len(split_session(C6, S6, 1))
    assert app["tunnels"]["geneve"] == len(split_session(C6, S6, 1))
    assert app["tunnels"]["not_decapsulated"]["bad_header"] == 1
