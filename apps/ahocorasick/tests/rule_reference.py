"""Brute-force reference for rules mode, written apart from the app's C code:
every rule is parsed from its text here and evaluated on every packet,
following the semantics README.md ("Rules mode") states.

Used by test_ahocorasick_rules.py to check the app's alerts exactly."""
from __future__ import annotations

import ipaddress
import re
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

ACTIONS = {"alert", "log", "pass", "drop", "reject", "sdrop", "activate", "dynamic"}
NO_EFFECT = {"msg", "reference", "sid", "rev", "classtype", "metadata", "priority", "gid", "rawbytes"}
PCRE_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}


class Unusable(Exception):
    """A rule the reference cannot evaluate the way the app does."""


@dataclass
class Content:
    data: bytes
    negated: bool = False
    nocase: bool = False
    fp_only: bool = False
    offset: int | None = None
    depth: int | None = None
    distance: int | None = None
    within: int | None = None


@dataclass
class Pcre:
    regex: re.Pattern[bytes] | None  # None: a flag the app does not evaluate
    negated: bool
    anchored: bool


@dataclass
class Rule:
    sid: int
    rev: int
    msg: str
    classtype: str
    proto: str
    src: str
    sport: str
    bidirectional: bool
    dst: str
    dport: str
    contents: list[Content] = field(default_factory=list)
    pcres: list[Pcre] = field(default_factory=list)
    partial: bool = False


def rule_lines(path: Path) -> list[str]:
    """Rule texts, '\\'-continued lines joined; '# alert ...' lines count."""
    out: list[str] = []
    buf = ""
    for raw in path.read_bytes().decode("latin-1").split("\n"):
        line = raw.rstrip("\r")
        if line.endswith("\\"):
            buf += line[:-1]
            continue
        line = (buf + line).strip()
        buf = ""
        if line.startswith("#"):
            line = line[1:].strip()
            if not line.split(" ", 1)[0] in ACTIONS or "(" not in line:
                continue
        if line:
            out.append(line)
    return out


def split_options(body: str) -> list[tuple[str, str]]:
    opts: list[tuple[str, str]] = []
    cur, quoted, i = "", False, 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            cur += body[i:i + 2]
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            opts.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    opts.append(cur)
    result = []
    for o in opts:
        o = o.strip()
        if not o:
            continue
        name, _, value = o.partition(":")
        result.append((name.strip(), value.strip()))
    return result


def decode_content(value: str) -> tuple[bytes, bool]:
    negated = value.startswith("!")
    if negated:
        value = value[1:].strip()
    assert value[0] == '"' and value[-1] == '"', value
    s = value[1:-1]
    out = bytearray()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "|":
            j = s.index("|", i + 1)
            out += bytes.fromhex(s[i + 1:j].replace(" ", ""))
            i = j + 1
            continue
        if ch == "\\":
            i += 1
            ch = s[i]
        out += ch.encode("latin-1")
        i += 1
    return bytes(out), negated


def position(value: str) -> int | None:
    """An integer, or None for a byte_extract variable (the app leaves it out)."""
    return int(value) if re.fullmatch(r"-?\d+", value) else None


def parse_rule(text: str) -> Rule:
    head, _, rest = text.partition("(")
    f = head.split()
    assert len(f) == 7 and rest.endswith(")"), text
    r = Rule(0, 0, "", "", f[1], f[2], f[3], f[4] == "<>", f[5], f[6])
    for name, value in split_options(rest[:-1]):
        last = r.contents[-1] if r.contents else None
        if name == "content":
            data, neg = decode_content(value)
            r.contents.append(Content(data, negated=neg))
        elif name == "nocase":
            last.nocase = True
        elif name in ("offset", "depth", "distance", "within"):
            v = position(value)
            if v is None:
                r.partial = True
            setattr(last, name, v)
        elif name == "fast_pattern":
            if value == "only":
                last.fp_only = True
        elif name.startswith("http_"):
            r.partial = True
        elif name == "pcre":
            neg = value.startswith("!")
            v = value[1:] if neg else value
            body = v[1:-1]
            expr, _, flags = body[1:].rpartition("/")
            if any(c not in "ismxAB" for c in flags):
                r.partial = True
                r.pcres.append(Pcre(None, neg, False))
                continue
            fl = 0
            for c in flags:
                fl |= PCRE_FLAGS.get(c, 0)
            if re.search(r"\\[zZGKRXQEpPhHvVcgkNC]|\(\*|\\x\{|\(\?<[^=!]|\(\?P|\[:|\{,|\(\?\||\(\?[R0-9+-]|\(\?\(",
                         expr):
                raise Unusable(f"pcre /{expr}/ uses syntax Python's re reads differently")
            try:
                rx = re.compile(expr.encode("latin-1"), fl)
            except (re.error, ValueError) as e:
                raise Unusable(f"pcre /{expr}/ not readable by Python's re: {e}") from None
            r.pcres.append(Pcre(rx, neg, "A" in flags))
        elif name == "sid":
            r.sid = int(value)
        elif name == "rev":
            r.rev = int(value)
        elif name == "msg":
            r.msg = re.sub(r"\\(.)", r"\1", value[1:-1])
        elif name == "classtype":
            r.classtype = value
        elif name not in NO_EFFECT:
            r.partial = True
    return r


def disabled(r: Rule) -> bool:
    """What the app disables (README): icmp, nothing left to evaluate."""
    usable_pcres = [p for p in r.pcres if p.regex is not None]
    return r.proto == "icmp" or (not r.contents and not usable_pcres)


# --- addresses and ports ------------------------------------------------------
class NetSet:
    """Positive and negated ranges: in when in some positive one (or none
    given) and in no negated one; never when empty_match is False."""

    def __init__(self) -> None:
        self.pos: list[tuple[int, int]] = []
        self.neg: list[tuple[int, int]] = []
        self.nothing = False

    def __contains__(self, x: int) -> bool:
        if self.nothing:
            return False
        ok = not self.pos or any(lo <= x <= hi for lo, hi in self.pos)
        return ok and not any(lo <= x <= hi for lo, hi in self.neg)


def split_list(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "[") - (ch == "]")
        cur += ch
    parts.append(cur)
    return parts


def resolve(text: str, vars_: dict[str, str], port: bool) -> NetSet:
    top = 65535 if port else 2**32 - 1

    def atoms(s: str, neg: bool, out: NetSet) -> None:
        s = s.strip()
        if s.startswith("!"):
            inner = NetSet()
            atoms(s[1:], False, inner)
            if inner.neg or inner.nothing:
                raise Unusable(f"negated set with negations: {s}")
            for rg in inner.pos:
                (out.pos if neg else out.neg).append(rg)
            return
        if s.startswith("["):
            for p in split_list(s[1:-1]):
                atoms(p, neg, out)
            return
        if s.startswith("$"):
            atoms(vars_[s[1:]], neg, out)
            return
        if s == "any":
            rg = (0, top)
        elif port:
            if ":" in s:
                a, b = s.split(":")
                rg = (int(a) if a else 0, int(b) if b else 65535)
            else:
                rg = (int(s), int(s))
        else:
            n = ipaddress.ip_network(s, strict=False)
            rg = (int(n.network_address), int(n.broadcast_address))
        (out.neg if neg else out.pos).append(rg)

    ns = NetSet()
    atoms(text, False, ns)
    if (0, top) in ns.pos:
        ns.pos = []
    return ns


def read_vars(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        f = line.split(None, 2)
        if len(f) == 3 and f[0] in ("ipvar", "portvar", "var"):
            out[f[1]] = f[2].strip()
    return out


# --- evaluation -------------------------------------------------------------------
@dataclass
class Packet:
    proto: int
    src: int
    dst: int
    sport: int
    dport: int
    payload: bytes


class Evaluator:
    def __init__(self, rules: list[Rule], vars_: dict[str, str]) -> None:
        self.rules = [r for r in rules if not disabled(r)]
        self.sets = [(resolve(r.src, vars_, False), resolve(r.sport, vars_, True),
                      resolve(r.dst, vars_, False), resolve(r.dport, vars_, True)) for r in self.rules]

    def header(self, i: int, p: Packet) -> bool:
        r = self.rules[i]
        if (r.proto == "tcp" and p.proto != 6) or (r.proto == "udp" and p.proto != 17):
            return False
        s, sp, d, dp = self.sets[i]
        if p.src in s and p.sport in sp and p.dst in d and p.dport in dp:
            return True
        return r.bidirectional and p.dst in s and p.dport in sp and p.src in d and p.sport in dp

    @staticmethod
    def contents(cs: list[Content], data: bytes) -> bool:
        low = data.lower()
        n = len(data)

        def occurs(c: Content, start: int, end: int) -> list[int]:
            hay = low if c.nocase else data
            needle = c.data.lower() if c.nocase else c.data
            return [p for p in range(max(start, 0), end - len(needle) + 1)
                    if hay[p:p + len(needle)] == needle]

        def window(c: Content, prev: int) -> tuple[int, int]:
            s = c.offset if c.offset is not None else 0
            e = s + c.depth if c.depth is not None else n
            if c.distance is not None or c.within is not None:
                rs = prev + (c.distance or 0)
                re_ = rs + c.within if c.within is not None else n
                s, e = max(s, rs), min(e, re_)
            return max(s, 0), min(e, n)

        @lru_cache(maxsize=None)
        def from_(i: int, prev: int) -> bool:
            if i == len(cs):
                return True
            c = cs[i]
            if c.fp_only and not c.negated:
                return bool(occurs(c, 0, n)) and from_(i + 1, prev)
            s, e = window(c, prev)
            if c.negated:
                return not occurs(c, s, e) and from_(i + 1, prev)
            return any(from_(i + 1, p + len(c.data)) for p in occurs(c, s, e))

        return from_(0, 0)

    def matches(self, i: int, p: Packet) -> bool:
        r = self.rules[i]
        if not self.header(i, p):
            return False
        if r.contents and not self.contents(r.contents, p.payload):
            return False
        for pc in r.pcres:
            if pc.regex is None:
                continue
            hit = (pc.regex.match(p.payload) if pc.anchored else pc.regex.search(p.payload)) is not None
            if hit == pc.negated:
                return False
        return True

    def alerts(self, p: Packet) -> list[int]:
        """Indexes of the rules that alert on p, every rule tried."""
        out = []
        for i, r in enumerate(self.rules):
            # cheap necessary condition first: each plain content occurs somewhere
            low = None
            ok = True
            for c in r.contents:
                if c.negated:
                    continue
                if c.nocase:
                    low = p.payload.lower() if low is None else low
                    if c.data.lower() not in low:
                        ok = False
                        break
                elif c.data not in p.payload:
                    ok = False
                    break
            if ok and self.matches(i, p):
                out.append(i)
        return out


# --- packets ----------------------------------------------------------------------
def payload_of(frame: bytes) -> Packet | None:
    """IPv4 TCP/UDP behind Ethernet and up to two VLAN tags; None otherwise
    (or truncated, fragment other than the first, bad header lengths)."""
    off = 12
    if len(frame) < 14:
        return None
    et = struct.unpack_from("!H", frame, off)[0]
    tags = 0
    while et in (0x8100, 0x88A8, 0x9100) and tags < 2:
        off += 4
        tags += 1
        if len(frame) < off + 2:
            return None
        et = struct.unpack_from("!H", frame, off)[0]
    if et != 0x0800:
        return None
    l3 = off + 2
    if len(frame) < l3 + 20 or frame[l3] >> 4 != 4:
        return None
    ihl = (frame[l3] & 15) * 4
    total = struct.unpack_from("!H", frame, l3 + 2)[0]
    frag = struct.unpack_from("!H", frame, l3 + 6)[0]
    proto = frame[l3 + 9]
    if ihl < 20 or total < ihl or l3 + total > len(frame):
        return None
    if proto not in (6, 17) or frag & 0x1FFF:
        return None
    l4 = l3 + ihl
    end = l3 + total
    if proto == 6:
        if end < l4 + 20:
            return None
        hl = (frame[l4 + 12] >> 4) * 4
        if hl < 20 or end < l4 + hl:
            return None
        start = l4 + hl
    else:
        if end < l4 + 8:
            return None
        start = l4 + 8
    src, dst = struct.unpack_from("!II", frame, l3 + 12)
    sport, dport = struct.unpack_from("!HH", frame, l4)
    return Packet(proto, src, dst, sport, dport, frame[start:end])
