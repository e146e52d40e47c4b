"""The evasion suite: Ptacek and Newsham's ways of hiding an attack from an
IDS by splitting it, each applied to rules of the community set, under each
target-based policy (first, last, bsd, linux, windows, solaris: one
destination network each), over IPv4 and IPv6, in built frames:

  - the content split at every byte offset across two segments;
  - one-byte segments;
  - segments out of order (reversed, shuffled);
  - overlapping segments with conflicting bytes (held out of order, and
    retransmissions of bytes already in order), both ways round;
  - tiny and overlapping IP fragments, and fragments out of order;
  - TTL-limited insertion segments and fragments (expiring before the
    target);
  - HTTP bodies chunked (the content cut by chunk headers), gzipped,
    deflated (zlib and raw), chunked and gzipped, in a response and in a
    request, the content at any place; and a decompression bomb, cut at
    the bound and counted.

Each case is one flow.  The expected alerts come from what the target
stack puts together (target_model.py, written apart from the C code, from
the policy table) judged by rule_reference.py: the rule's sid iff its
options hold on the target's bytes.  The engine must raise exactly those
on every flow: no miss, no false alert.  ac-ids runs the whole suite
(seconds); the app runs it too, once per engine, and must agree."""
from __future__ import annotations

import collections
import gzip
import json
import random
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import frames as fr  # noqa: E402
import rule_reference as ref  # noqa: E402
import target_model as tm  # noqa: E402

POLICIES = tm.POLICIES
VARS = ("ipvar HOME_NET any\nipvar EXTERNAL_NET any\nportvar HTTP_PORTS [80,8080]\n"
        "portvar FILE_DATA_PORTS [$HTTP_PORTS,110,143]\n")
CLIENT4, CLIENT6 = bytes([10, 0, 0, 1]), bytes.fromhex("20010db800ff0000" "0000000000000001")
PREFIX = 12  # payload bytes before the attack: the attack starts at datagram offset 32


def server(family: int, k: int) -> bytes:
    """The target of policy k: 198.18.k.2 or 2001:db8:k::2."""
    if family == 4:
        return bytes([198, 18, k, 2])
    return bytes.fromhex(f"20010db8{k:04x}0000" "0000000000000002")


def policy_args() -> list[str]:
    out = []
    for k, pol in enumerate(POLICIES):
        out += ["--target-policy", f"198.18.{k}.0/24={pol}", "--target-policy", f"2001:db8:{k:x}::/48={pol}"]
    return out


def port_in(spec: str, vars_: dict[str, str], prefer: tuple[int, ...]) -> int | None:
    try:
        ports = ref.resolve(spec, vars_, True)
    except (KeyError, ref.Unusable):
        return None
    for p in prefer + tuple(range(1, 65536)):
        if p in ports:
            return p
    return None


@dataclass
class Target:
    """A rule under test, and a payload that carries its attack."""
    text: str
    rule: ref.Rule
    payload: bytes       # attack
    benign: bytes        # the same with the attack's bytes replaced
    a0: int              # attack region [a0, a1) in the payload
    a1: int
    sport: int
    dport: int


def pick_rules(community: Path, vars_: dict[str, str]) -> list[Target]:
    """By property: a plain content rule, an http_uri rule and a rule of two
    contents with a relative position, each to_server over TCP, with nothing
    the reference cannot evaluate."""
    want: dict[str, Target] = {}
    for text in ref.rule_lines(community):
        try:
            r = ref.parse_rule(text)
        except ref.Unusable:
            continue
        if (r.proto != "tcp" or r.left_out or r.flowbits or r.dsize or r.urilen
                or not r.flow <= {"to_server", "established", "from_client"} or r.pcres
                or any(isinstance(o, ref.ByteOp) for o in r.opts) or ref.disabled(r)):
            continue
        cs = r.contents
        if any(c.negated or c.nocase or c.offset is not None or c.depth is not None for c in cs):
            continue
        dport = port_in(r.dport, vars_, (80, 8080, 21, 25, 445, 139, 1433))
        sport = port_in(r.sport, vars_, (40000,))
        if dport is None or sport is None or sport == dport:
            continue
        safe = all(32 < b < 127 and b not in b"%?\\" for c in cs for b in c.data)
        if "plain" not in want and len(cs) == 1 and cs[0].buf == ref.PKT and 10 <= len(cs[0].data) <= 24 \
                and cs[0].distance is None and cs[0].within is None:
            a = b"x" * PREFIX + cs[0].data + b"yyyy"
            want["plain"] = Target(text, r, a, b"", PREFIX, PREFIX + len(cs[0].data), sport, dport)
        elif "uri" not in want and len(cs) == 1 and cs[0].buf == "http_uri" and 6 <= len(cs[0].data) <= 24 \
                and safe and cs[0].distance is None and cs[0].within is None and dport in (80, 8080):
            path = cs[0].data if cs[0].data.startswith(b"/") else b"/" + cs[0].data
            head = b"GET /a" + b"b" * (PREFIX - 6)
            a = head + path + b" HTTP/1.1\r\nHost: t\r\n\r\n"
            want["uri"] = Target(text, r, a, b"", PREFIX, PREFIX + len(path), sport, dport)
        elif "two" not in want and len(cs) == 2 and all(c.buf == ref.PKT for c in cs) \
                and cs[0].distance is None and cs[0].within is None \
                and isinstance(cs[1].distance or 0, int) and 0 <= (cs[1].distance or 0) <= 8 \
                and len(cs[0].data) + len(cs[1].data) <= 40 and len(cs[0].data) >= 4:
            gap = b"z" * (cs[1].distance or 0)
            a = b"x" * PREFIX + cs[0].data + gap + cs[1].data + b"yyyy"
            want["two"] = Target(text, r, a, b"", PREFIX, PREFIX + len(cs[0].data) + len(gap) + len(cs[1].data),
                                 sport, dport)
        if len(want) == 3:
            break
    assert set(want) == {"plain", "uri", "two"}, f"community rules lack a kind: found {sorted(want)}"
    for t in want.values():
        t.benign = t.payload[:t.a0] + b"_" * (t.a1 - t.a0) + t.payload[t.a1:]
    return list(want.values())


def pick_body_rules(community: Path, vars_: dict[str, str]) -> list[tuple[str, ref.Rule]]:
    """By property: a file_data rule on responses and an http_client_body
    rule on requests, each one plain content, nothing else to evaluate."""
    want: dict[str, tuple[str, ref.Rule]] = {}
    for text in ref.rule_lines(community):
        try:
            r = ref.parse_rule(text)
        except ref.Unusable:
            continue
        cs = r.contents
        if (r.proto != "tcp" or r.left_out or r.flowbits or r.dsize or r.urilen or r.pcres or len(cs) != 1
                or any(isinstance(o, ref.ByteOp) for o in r.opts) or ref.disabled(r) or cs[0].negated
                or cs[0].offset is not None or cs[0].depth is not None or cs[0].distance is not None
                or cs[0].within is not None or not 8 <= len(cs[0].data) <= 30):
            continue
        if "to_client" in r.flow and cs[0].buf == ref.FILE and port_in(r.sport, vars_, (80,)) == 80:
            want.setdefault("response", (text, r))
        elif "to_server" in r.flow and cs[0].buf == "http_client_body" and port_in(r.dport, vars_, (80,)) == 80:
            want.setdefault("request", (text, r))
        if len(want) == 2:
            break
    assert set(want) == {"response", "request"}, f"community rules lack a kind: found {sorted(want)}"
    return [want["response"], want["request"]]


def chunk(body: bytes, cuts: list[int]) -> bytes:
    """body in chunks cut at the offsets given (the chunk headers land in
    the middle of whatever is there)."""
    out, last = b"", 0
    for c in sorted(set(cuts)) + [len(body)]:
        if c > last:
            out += b"%x\r\n" % (c - last) + body[last:c] + b"\r\n"
            last = c
    return out + b"0\r\n\r\n"


def matches(rule: ref.Rule, stream: bytes) -> bool:
    """The reference's verdict on the bytes the target has, as one PDU."""
    return ref.Evaluator.payload_options(rule, ref.http_buffers(stream, True))


@dataclass
class Case:
    name: str
    family: int
    policy: int
    cport: int
    expect: bool


class Suite:
    def __init__(self, targets: list[Target]) -> None:
        self.targets = targets
        self.frames: list[bytes] = []
        self.cases: dict[tuple[bytes, int], tuple[Case, Target]] = {}
        self.cport = 20000
        self.ident = 1

    def _session(self, t: Target, family: int, k: int) -> fr.Session:
        self.cport += 1
        c = CLIENT4 if family == 4 else CLIENT6
        return fr.Session(c, server(family, k), self.cport, t.dport).handshake()

    def _add(self, name: str, t: Target, family: int, k: int, s: fr.Session, target_bytes: bytes | None) -> None:
        expect = target_bytes is not None and matches(t.rule, target_bytes)
        c = Case(name, family, k, s.cport, expect)
        self.cases[(s.client, s.cport)] = (c, t)
        self.frames += s.close().frames

    def tcp(self, name: str, t: Target, family: int, k: int,
            segs: list[tuple[int, bytes, int]]) -> None:
        """segs: (offset, bytes, ttl) in arrival order."""
        s = self._session(t, family, k)
        for off, data, ttl in segs:
            s.send(off, data, ttl=ttl)
        reach = [(off, data) for off, data, ttl in segs if ttl >= 60]
        self._add(name, t, family, k, s, tm.tcp_reassemble(reach, POLICIES[k]))

    def frags(self, name: str, t: Target, family: int, k: int,
              pieces: list[tuple[int, int, bool, int]]) -> None:
        """The client's one data segment as IP fragments: (start, end,
        benign, ttl) over its TCP header and payload, in arrival order."""
        s = self._session(t, family, k)
        seg = s.segment_bytes(0, t.payload)
        bseg = seg[:20] + t.benign
        total = len(seg)
        frs, reach = [], []
        self.ident += 1
        for a, b, benign, ttl in pieces:
            b = min(b, total)
            data = (bseg if benign else seg)[a:b]
            more = b < total
            frs.append(fr.fragment(s.client, s.server, fr.TCP, self.ident, a, data, more, ttl))
            if ttl >= 60:
                reach.append((a, data, more))
        s.frames += frs
        s.ends[0] = len(t.payload)
        dgram = tm.ip_reassemble(reach, POLICIES[k])
        self._add(name, t, family, k, s, None if dgram is None else dgram[20:])


def http_cases(su: Suite, body_rules: list[tuple[str, ref.Rule]], family: int, k: int) -> None:
    """Each HTTP body encoding with the rule's content where a plain scan
    misses it; the expected verdict from the body as the target decodes it."""
    for text, r in body_rules:
        content = r.contents[0].data
        plain = b"<html>" + b"x" * 40 + content + b"</html>" * 3
        mid = 46 + len(content) // 2
        encodings = {
            "chunked": (b"Transfer-Encoding: chunked\r\n", chunk(plain, [mid, mid + 1])),
            "gzip": (b"Content-Encoding: gzip\r\n", gzip.compress(plain, mtime=0)),
            "deflate-zlib": (b"Content-Encoding: deflate\r\n", zlib.compress(plain)),
            "deflate-raw": (b"Content-Encoding: deflate\r\n", zlib.compress(plain)[2:-4]),
            "chunked-gzip": (b"Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n",
                             chunk(gzip.compress(plain, mtime=0), [5, 17])),
        }
        for name, (hdrs, wire) in encodings.items():
            length = b"" if b"chunked" in hdrs else b"Content-Length: %d\r\n" % len(wire)
            t = Target(text, r, b"", b"", 0, 0, 40000, 80)
            s = su._session(t, family, k)
            if "to_client" in r.flow:
                s.send(0, b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
                msg = b"HTTP/1.1 200 OK\r\n" + hdrs + length + b"\r\n" + wire
                for off in range(0, len(msg), 37):
                    s.send(off, msg[off:off + 37], from_client=False)
                seen = b"HTTP/1.1 200 OK\r\n\r\n" + plain
            else:
                msg = b"POST /x HTTP/1.1\r\nHost: t\r\n" + hdrs + length + b"\r\n" + wire
                for off in range(0, len(msg), 37):
                    s.send(off, msg[off:off + 37])
                seen = b"POST /x HTTP/1.1\r\nHost: t\r\n\r\n" + plain
            # a plain scan of what is sent misses it: only decoding finds it
            assert content not in msg
            su._add(f"http-{name}", t, family, k, s, seen)


def build(targets: list[Target], body_rules: list[tuple[str, ref.Rule]] | None = None) -> Suite:
    su = Suite(targets)
    rng = random.Random(55)
    for family in (4, 6):
        for k in range(len(POLICIES)):
            for t in targets:
                p, b, a0, a1, n = t.payload, t.benign, t.a0, t.a1, len(t.payload)
                su.tcp("whole", t, family, k, [(0, p, 64)])
                su.tcp("benign", t, family, k, [(0, b, 64)])
                if t is targets[0]:
                    for cut in range(a0 + 1, a1):
                        su.tcp(f"split@{cut}", t, family, k, [(0, p[:cut], 64), (cut, p[cut:], 64)])
                su.tcp("one-byte", t, family, k, [(i, p[i:i + 1], 64) for i in range(n)])
                thirds = [(0, p[:a0 + 2], 64), (a0 + 2, p[a0 + 2:a1 - 2], 64), (a1 - 2, p[a1 - 2:], 64)]
                su.tcp("reversed", t, family, k, thirds[::-1])
                shuffled = [(i, p[i:i + 1], 64) for i in range(n)]
                rng.shuffle(shuffled)
                su.tcp("shuffled", t, family, k, shuffled)
                # overlaps held out of order (the hole [0, h) filled last), both ways round
                h = a0 - 4
                for first, second, tag in ((b, p, "benign-first"), (p, b, "attack-first")):
                    for shape, e, nw in (
                            ("repeat", (a0 - 4, a1 + 4), (a0 - 4, a1 + 4)),
                            ("cover", (a0, a1), (a0 - 4, a1 + 4)),
                            ("same-start-longer", (a0, a1), (a0, a1 + 4)),
                            ("left", (a0 - 4, a0 + 4), (a0, a1 + 4)),
                            ("right-partial", (a0 + 2, a1 + 4), (a0 - 4, a1)),
                            ("right-partial-same-start", (a0, a1 + 4), (a0, a1))):
                        segs = [(e[0], first[e[0]:e[1]], 64), (nw[0], second[nw[0]:nw[1]], 64),
                                (0, p[:h], 64), (h, p[h:], 64)]
                        su.tcp(f"overlap-{shape}-{tag}", t, family, k, segs)
                # retransmissions over bytes already in order
                su.tcp("retransmit-benign-over-attack", t, family, k, [(0, p, 64), (0, b, 64)])
                su.tcp("retransmit-attack-over-benign", t, family, k, [(0, b, 64), (0, p, 64)])
                # TTL-limited insertion: expires before the target
                su.tcp("ttl-insertion-benign", t, family, k, [(0, p[:h], 64), (h, b[h:], 1), (h, p[h:], 64)])
                su.tcp("ttl-insertion-attack", t, family, k, [(0, b[:h], 64), (h, p[h:], 1), (h, b[h:], 64)])
                # IP fragments of the data segment (attack at datagram offset 32)
                end = 20 + n
                su.frags("frag-tiny", t, family, k, [(o, o + 8, False, 64) for o in range(0, end, 8)])
                su.frags("frag-reversed", t, family, k,
                         [(o, o + 16, False, 64) for o in range(0, end, 16)][::-1])
                tiny = [(o, o + 8, False, 64) for o in range(0, end, 8)]
                rng.shuffle(tiny)
                su.frags("frag-shuffled", t, family, k, tiny)
                for benign_first, tag in ((True, "benign-first"), (False, "attack-first")):
                    for shape, e, nw in (("cover", (32, 48), (24, 56)), ("repeat", (32, 48), (32, 48)),
                                         ("left", (24, 40), (32, 56)), ("right-partial", (40, 64), (24, 48)),
                                         ("right-partial-same-start", (32, 64), (32, 48))):
                        pieces = [(e[0], e[1], benign_first, 64), (nw[0], nw[1], not benign_first, 64),
                                  (0, 24, False, 64)]
                        pieces += [(o, o + 8, False, 64) for o in range(56, end, 8)]
                        su.frags(f"frag-overlap-{shape}-{tag}", t, family, k, pieces)
                su.frags("frag-ttl-insertion-benign", t, family, k,
                         [(32, 48, True, 1)] + [(o, o + 8, False, 64) for o in range(0, end, 8)])
                su.frags("frag-ttl-insertion-attack", t, family, k,
                         [(32, 48, False, 1)] + [(o, o + 8, o in (32, 40), 64) for o in range(0, end, 8)])
            if body_rules:
                http_cases(su, body_rules, family, k)
    return su


def alerted(log: list[dict], su: Suite, sids: set[int]) -> dict[tuple[bytes, int], set[int]]:
    """The sids alerted per case (the flow's client address and port)."""
    import ipaddress
    out: dict[tuple[bytes, int], set[int]] = collections.defaultdict(set)
    for a in log:
        if a["alert"]["signature_id"] not in sids:
            continue
        src = (ipaddress.ip_address(a["src_ip"]).packed, a["src_port"])
        dst = (ipaddress.ip_address(a["dest_ip"]).packed, a["dest_port"])
        out[src if src in su.cases else dst].add(a["alert"]["signature_id"])
    return out


def check(su: Suite, got: dict[tuple[bytes, int], set[int]]) -> list[str]:
    """Every case's miss or false alert, named."""
    bad = []
    for key, (c, t) in su.cases.items():
        want = {t.rule.sid} if c.expect else set()
        have = got.get(key, set())
        if have != want:
            what = "missed" if c.expect else "false alert"
            bad.append(f"IPv{c.family} {POLICIES[c.policy]} {c.name} sid {t.rule.sid} port {c.cport}: {what}")
    return bad


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> tuple[Suite, Path, Path, Path]:
    d = tmp_path_factory.mktemp("evasion")
    vars_path = d / "vars.conf"
    vars_path.write_text(VARS)
    community = shared_dir / "data" / "snort" / "community.rules"
    targets = pick_rules(community, ref.read_vars(vars_path))
    body_rules = pick_body_rules(community, ref.read_vars(vars_path))
    rules = d / "evasion.rules"
    rules.write_text("".join(t.text.lstrip("# ") + "\n" for t in targets)
                     + "".join(text.lstrip("# ") + "\n" for text, _r in body_rules), encoding="latin-1")
    su = build(targets, body_rules)
    cap = d / "evasion.pcap"
    fr.pcapgen.write_pcap(cap, su.frames)
    return su, rules, vars_path, cap


def test_the_model_gives_the_published_results() -> None:
    """The target model itself, on the Sturges-Novak fragments, each policy."""
    for pol in POLICIES:
        frags = [(o, c.encode() * n, i != 16) for i, (o, n, c) in enumerate(tm.NOVAK)]
        d = tm.ip_reassemble(frags, pol)
        assert d is not None
        got = "".join(chr(d[8 * u]) for u in range(24))
        assert got == tm.NOVAK_RESULT[pol], pol


def test_the_suite_has_both_verdicts_per_class(suite: tuple[Suite, Path, Path, Path]) -> None:
    """Cases where the target sees the attack and cases where it does not,
    under different policies: the suite can fail both ways."""
    su = suite[0]
    by_class: dict[str, set[bool]] = collections.defaultdict(set)
    for c, _t in su.cases.values():
        by_class[c.name.split("@")[0].rsplit("-benign-first", 1)[0].rsplit("-attack-first", 1)[0]].add(c.expect)
    assert by_class["whole"] == {True} and by_class["benign"] == {False}
    assert by_class["split"] == {True} and by_class["frag-tiny"] == {True}
    assert by_class["ttl-insertion-benign"] == {True} and by_class["ttl-insertion-attack"] == {False}
    # policies disagree on the overlaps: both verdicts occur for each shape
    for shape in ("overlap-cover", "overlap-same-start-longer", "overlap-left", "overlap-right-partial",
                  "frag-overlap-cover", "frag-overlap-left", "frag-overlap-right-partial"):
        assert by_class[shape] == {True, False}, shape
    assert len(su.cases) > 1000


def ids_alerts(build_dir: Path, rules: Path, vars_path: Path, cap: Path, engine: str, tmp: Path,
               extra: list[str] | None = None) -> tuple[list[dict], dict]:
    exe = build_dir / "apps" / "ahocorasick" / "ac-ids"
    log, stats = tmp / f"alerts-{engine}.json", tmp / f"stats-{engine}.json"
    subprocess.run([str(exe), "--rules", str(rules), "--vars", str(vars_path), "--engine", engine,
                    "--alerts", str(log), "--stats", str(stats), *policy_args(), *(extra or []), str(cap)],
                   check=True, capture_output=True, text=True, timeout=300)
    return [json.loads(x) for x in log.read_text().splitlines()], json.loads(stats.read_text())


@pytest.mark.offline
@pytest.mark.parametrize("engine", ["ac", "hs"])
def test_no_miss_no_false_alert(build_dir: Path, tmp_path: Path, engine: str,
                                suite: tuple[Suite, Path, Path, Path]) -> None:
    su, rules, vars_path, cap = suite
    log, stats = ids_alerts(build_dir, rules, vars_path, cap, engine, tmp_path)
    sids = {t.rule.sid for _c, t in su.cases.values()}
    bad = check(su, alerted(log, su, sids))
    assert not bad, f"{len(bad)} of {len(su.cases)} cases wrong:\n" + "\n".join(bad[:40])
    # the limits and counters the suite went through
    assert stats["ttl_insertions"] > 0 and stats["defrag"]["reassembled"] > 0
    assert stats["events"]["frag_overlap"] > 0 and stats["events"]["frag_ttl_delta"] > 0
    assert stats["stream"]["overlaps"] > 0 and stats["untracked"] == 0
    assert stats["http"]["dechunked"] > 0 and stats["http"]["decompressed"] > 0


@pytest.mark.parametrize("engine", ["ac", "hs"])
def test_the_app_too(build_dir: Path, file_prefix: str, tmp_path: Path, engine: str,
                     suite: tuple[Suite, Path, Path, Path]) -> None:
    """The DPDK app on the same frames: the same verdicts, every packet
    accounted for."""
    from ac_run import assert_clean, run_app
    su, rules, vars_path, cap = suite
    log = tmp_path / "alerts.json"
    # until every frame is in (a time limit would cut a loaded machine's run short)
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  ["--rules", str(rules), "--vars", str(vars_path), "--alert-log", str(log), *policy_args(),
                   "--packets", str(len(su.frames))], variant=engine, duration=None, timeout=300)
    assert_clean(run)
    app = run.stats["app_stats"]
    assert run.stats["total"]["rx_packets"] == len(su.frames)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    sids = {t.rule.sid for _c, t in su.cases.values()}
    bad = check(su, alerted(lines, su, sids))
    assert not bad, f"{len(bad)} of {len(su.cases)} cases wrong:\n" + "\n".join(bad[:40])
    assert app["reassembly"] is True and app["defrag"]["reassembled"] > 0
    assert app["ttl_insertions"] > 0 and app["stream"]["shed"] == 0


@pytest.mark.offline
def test_a_decompression_bomb_is_cut_at_the_bound(build_dir: Path, tmp_path: Path,
                                                  suite: tuple[Suite, Path, Path, Path]) -> None:
    """A gzip body of 8 MB of zeros (8 kB sent): inflation stops at the
    bound (bytes, or bytes out per byte in), counted; what lies beyond is
    not seen (the bound is the trade).  Within the bounds, the same content
    is found."""
    _su, rules, vars_path, _cap = suite
    text, rule = pick_body_rules(Path(rules), ref.read_vars(vars_path))[0]
    content = rule.contents[0].data
    frames = []
    for cport, body in ((41000, bytes(8 << 20) + content), (41001, b"<html>" + content + bytes(2000))):
        wire = gzip.compress(body, mtime=0)
        s = fr.Session(CLIENT4, server(4, 3), cport, 80).handshake()
        s.send(0, b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        msg = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(wire) + wire
        for off in range(0, len(msg), 1400):
            s.send(off, msg[off:off + 1400], from_client=False)
        frames += s.close().frames
    cap = tmp_path / "bomb.pcap"
    fr.pcapgen.write_pcap(cap, frames)
    log, stats = ids_alerts(build_dir, rules, vars_path, cap, "hs", tmp_path,
                            ["--stream-window", "65536"])
    assert stats["http"]["decompression_bound_hit"] >= 1 and stats["http"]["decompressed"] >= 2
    hit = {a["dest_port"] for a in log if a["alert"]["signature_id"] == rule.sid}
    assert hit == {41001}, hit


@pytest.mark.offline
def test_a_flood_of_gapped_flows_sheds_the_oldest(build_dir: Path, tmp_path: Path,
                                                  suite: tuple[Suite, Path, Path, Path]) -> None:
    """500 flows each holding bytes after a hole, in a memory cap of a few
    dozen directions: the pool never grows, the least recently used
    directions lose their bytes (counted), and an attack split in two
    segments after the flood is still found."""
    su, rules, vars_path, _cap = suite
    t = next(t for _c, t in su.cases.values() if len(t.rule.contents) == 1 and t.rule.contents[0].buf == ref.PKT)
    frames = []
    for i in range(500):
        s = fr.Session(CLIENT4, server(4, 3), 30000 + i, t.dport).handshake()
        s.send(100, b"held after a hole " * 8)
        frames += s.frames
    s = fr.Session(CLIENT4, server(4, 3), 29999, t.dport).handshake()
    cut = (t.a0 + t.a1) // 2
    s.send(0, t.payload[:cut]).send(cut, t.payload[cut:])
    frames += s.close().frames
    cap = tmp_path / "flood.pcap"
    fr.pcapgen.write_pcap(cap, frames)
    log, stats = ids_alerts(build_dir, rules, vars_path, cap, "ac", tmp_path,
                            ["--stream-window", "1024", "--stream-memcap", "65536"])
    slots = stats["stream_pool"]["slots"]
    assert 10 <= slots <= 40 and stats["stream_pool"]["bytes"] <= 65536
    assert stats["stream"]["shed"] >= 500 - slots and stats["stream"]["no_slot"] == 0
    assert [a["src_port"] for a in log if a["alert"]["signature_id"] == t.rule.sid] == [29999]


@pytest.mark.offline
def test_ipv6_home_net_and_decoder_alerts(build_dir: Path, tmp_path: Path,
                                          suite: tuple[Suite, Path, Path, Path]) -> None:
    """$HOME_NET with an IPv6 prefix holds IPv6 hosts only (an IPv4 prefix,
    IPv4 ones only); --decoder-alerts raises the events as Snort's gid 123
    alerts (the suite's overlapping fragments: 123:8)."""
    su, _rules, _vars, cap = suite
    rules = tmp_path / "home.rules"
    rules.write_text('alert tcp any any -> $HOME_NET any (msg:"to home"; content:"HOMEWARD"; sid:9001;)\n')
    vars_path = tmp_path / "home.conf"
    vars_path.write_text("ipvar HOME_NET [2001:db8:3::/48,198.18.4.0/24]\nipvar EXTERNAL_NET any\n")
    frames = []
    for k in (3, 4):
        for family in (4, 6):
            s = fr.Session(CLIENT4 if family == 4 else CLIENT6, server(family, k), 33000 + 2 * k + family, 80)
            frames += s.handshake().send(0, b"xx HOMEWARD yy").close().frames
    home = tmp_path / "home.pcap"
    fr.pcapgen.write_pcap(home, frames)
    log, _stats = ids_alerts(build_dir, rules, vars_path, home, "ac", tmp_path)
    assert sorted({a["dest_ip"] for a in log}) == ["198.18.4.2", "2001:db8:3::2"]
    log, stats = ids_alerts(build_dir, rules, vars_path, cap, "ac", tmp_path, ["--decoder-alerts"])
    events = collections.Counter((a["alert"]["gid"], a["alert"]["signature_id"]) for a in log)
    assert events[(123, 8)] == stats["events"]["frag_overlap"] > 0
    assert all(a["alert"]["category"] == "decoder-event" for a in log if a["alert"]["gid"] == 123)
