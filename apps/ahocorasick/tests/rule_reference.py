"""Brute-force reference for rules mode, written apart from the app's C code:
every rule is parsed from its text here and evaluated on every packet, in
the packets' order, with the flows, flowbits, HTTP buffers and payload
options that the Snort 2.9 manual describes and README.md ("Rules mode",
"Flows", "HTTP buffers") pins down where the manual leaves a choice.

Used by test_ahocorasick_rules.py and test_ahocorasick_flows.py to check
the app's alerts exactly."""
from __future__ import annotations

import ipaddress
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

ACTIONS = {"alert", "log", "pass", "drop", "reject", "sdrop", "activate", "dynamic"}
# Options that decide nothing about a packet.
NO_EFFECT = {"reference", "priority", "gid", "tag"}
PCRE_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}
# The buffers, by the name of the content modifier (or sticky option) that picks them.
PKT, FILE = "pkt_data", "file_data"
HTTP_MODIFIERS = {"http_uri", "http_raw_uri", "http_header", "http_raw_header", "http_cookie",
                  "http_raw_cookie", "http_client_body", "http_method", "http_stat_code",
                  "http_stat_msg"}
PCRE_BUFFERS = {"U": "http_uri", "I": "http_raw_uri", "P": "http_client_body", "H": "http_header",
                "D": "http_raw_header", "M": "http_method", "C": "http_cookie", "K": "http_raw_cookie",
                "S": "http_stat_code", "Y": "http_stat_msg", "B": PKT}
MAIL = {"smtp", "pop3", "imap"}


class Unusable(Exception):
    """A rule the reference cannot evaluate the way the app does."""


@dataclass
class Content:
    data: bytes
    buf: str
    negated: bool = False
    nocase: bool = False
    fp_only: bool = False
    offset: int | str | None = None  # str: a byte_extract variable
    depth: int | str | None = None
    distance: int | str | None = None
    within: int | str | None = None


@dataclass
class Pcre:
    regex: re.Pattern[bytes]
    negated: bool
    anchored: bool
    relative: bool
    buf: str


@dataclass
class ByteOp:
    kind: str  # byte_test, byte_jump, byte_extract, isdataat
    buf: str   # the default buffer where the option stands
    n: int = 0
    base: int = 0  # 0: binary; else the base of a number written in text
    little: bool = False
    relative: bool = False
    negate: bool = False
    op: str = "="
    offset: int | str = 0
    value: int | str = 0
    multiplier: int = 1
    bitmask: int = 0
    align: int = 0
    from_beginning: bool = False
    post_offset: int = 0
    var: str = ""


@dataclass
class FlowbitOp:
    cmd: str
    names: list[str]
    any_: bool = False  # '|' between names, or "any" with a group
    all_group: bool = False
    group: str | None = None


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
    opts: list[Content | Pcre | ByteOp] = field(default_factory=list)
    flow: set[str] = field(default_factory=set)
    flowbits: list[FlowbitOp] = field(default_factory=list)
    dsize: tuple[str, int, int] | None = None
    urilen: tuple[str, int, int] | None = None
    urilen_raw: bool = True
    mail: bool = False
    http: bool = False
    left_out: set[str] = field(default_factory=set)

    @property
    def contents(self) -> list[Content]:
        return [o for o in self.opts if isinstance(o, Content)]

    @property
    def pcres(self) -> list[Pcre]:
        return [o for o in self.opts if isinstance(o, Pcre)]

    def reads(self, buf: str) -> bool:
        return any(o.buf == buf for o in self.opts)

    @property
    def partial(self) -> bool:
        return bool(self.left_out)

    @property
    def mail_file_data(self) -> bool:
        """Alerts on packets that are not HTTP responses are partial."""
        return self.mail and self.http and self.reads(FILE)

    @property
    def noalert(self) -> bool:
        return any(f.cmd == "noalert" for f in self.flowbits)


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
    opts: list[str] = []
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


def number(text: str) -> int:
    text = text.strip()
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def number_or_var(text: str, variables: list[str]) -> int | str:
    text = text.strip()
    if re.fullmatch(r"[A-Za-z_]\w*", text):
        if text not in variables:
            raise ValueError(f"variable {text} not defined before")
        return text
    return number(text)


def parse_range(text: str) -> tuple[str, int, int]:
    """dsize/urilen: N, <N, >N, <=N, >=N, !N, N<>M (exclusive), N<=>M (inclusive)."""
    t = text.replace(" ", "")
    m = re.fullmatch(r"(\d+)(<>|<=>)(\d+)", t)
    if m:
        return ("<>" if m.group(2) == "<>" else "<=>", int(m.group(1)), int(m.group(3)))
    m = re.fullmatch(r"(<=|>=|!=|<|>|=|!)?(\d+)", t)
    assert m, text
    op = {None: "=", "!=": "!", "=": "="}.get(m.group(1), m.group(1))
    return (op, int(m.group(2)), int(m.group(2)))


def in_range(rg: tuple[str, int, int], x: int) -> bool:
    op, lo, hi = rg
    return {"=": x == lo, "!": x != lo, "<": x < lo, ">": x > lo, "<=": x <= lo, ">=": x >= lo,
            "<>": lo < x < hi, "<=>": lo <= x <= hi}[op]


def parse_byte_op(kind: str, value: str, default_buf: str, variables: list[str]) -> ByteOp | None:
    """None for an option asking for DCE/RPC byte order (not evaluated)."""
    f = [x.strip() for x in value.split(",")]
    b = ByteOp(kind, default_buf)
    if kind == "isdataat":
        loc = f[0]
        if loc.startswith("!"):
            b.negate, loc = True, loc[1:].strip()
        b.offset = number_or_var(loc, variables)
        b.relative = "relative" in f[1:]
        return b
    b.n = int(f[0])
    if kind == "byte_test":
        op = f[1]
        if op.startswith("!"):
            b.negate, op = True, op[1:]
        b.op = op or "="
        b.value = number_or_var(f[2], variables)
        b.offset = number_or_var(f[3], variables)
        rest = f[4:]
    elif kind == "byte_jump":
        b.offset = number_or_var(f[1], variables)
        rest = f[2:]
    else:
        b.offset = number_or_var(f[1], variables)
        b.var = f[2]
        rest = f[3:]
    string, dce = False, False
    for a in rest:
        words = a.split()
        if a == "relative":
            b.relative = True
        elif a in ("big", "little"):
            b.little = a == "little"
        elif a == "string":
            string = True
        elif a in ("hex", "dec", "oct"):
            b.base = {"hex": 16, "dec": 10, "oct": 8}[a]
        elif a == "dce":
            dce = True
        elif words[0] == "bitmask":
            b.bitmask = number(words[1])
        elif words[0] == "multiplier":
            b.multiplier = int(words[1])
        elif a == "align":
            b.align = 4
        elif words[0] == "align":
            b.align = int(words[1])
        elif a == "from_beginning":
            b.from_beginning = True
        elif words[0] == "post_offset":
            b.post_offset = int(words[1])
        else:
            raise AssertionError(f"{kind} argument {a}")
    if string and not b.base:
        b.base = 10
    if kind == "byte_extract" and b.var not in variables:
        variables.append(b.var)
    return None if dce else b


def parse_flowbits(value: str) -> FlowbitOp:
    f = [x.strip() for x in value.split(",")]
    op = FlowbitOp(f[0], [])
    if len(f) == 3 or (f[0] == "reset" and len(f) == 2):
        op.group = f[-1]
    if f[0] in ("noalert", "reset"):
        return op
    if f[1] in ("any", "all"):
        op.any_, op.all_group = f[1] == "any", f[1] == "all"
    else:
        op.any_ = "|" in f[1]
        op.names = [x.strip() for x in re.split(r"[&|]", f[1])]
    return op


def parse_pcre(value: str, buf_default: str) -> Pcre:
    neg = value.startswith("!")
    v = value[1:] if neg else value
    body = v[1:-1]
    expr, _, flags = body[1:].rpartition("/")
    if "E" in flags or "G" in flags:
        raise Unusable(f"pcre flag E or G: Python's re has no such option (/{expr}/{flags})")
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
    buf = buf_default
    for c in flags:
        buf = PCRE_BUFFERS.get(c, buf)
    return Pcre(rx, neg, "A" in flags, "R" in flags, buf)


def parse_rule(text: str) -> Rule:
    head, _, rest = text.partition("(")
    f = head.split()
    assert len(f) == 7 and rest.endswith(")"), text
    r = Rule(0, 0, "", "", f[1], f[2], f[3], f[4] == "<>", f[5], f[6])
    default_buf = PKT
    variables: list[str] = []
    for name, value in split_options(rest[:-1]):
        contents = r.contents
        last = contents[-1] if contents else None
        if name == "content":
            data, neg = decode_content(value)
            r.opts.append(Content(data, default_buf, negated=neg))
        elif name == "nocase":
            last.nocase = True
        elif name in ("offset", "depth", "distance", "within"):
            setattr(last, name, number_or_var(value, variables))
        elif name == "fast_pattern":
            if value == "only":
                last.fp_only = True
        elif name in HTTP_MODIFIERS:
            last.buf = name
        elif name == "rawbytes":
            if last is not None:
                last.buf = PKT
        elif name == "file_data":
            default_buf = FILE
        elif name == "pkt_data":
            default_buf = PKT
        elif name == "pcre":
            r.opts.append(parse_pcre(value, default_buf))
        elif name in ("byte_test", "byte_jump", "byte_extract", "isdataat"):
            op = parse_byte_op(name, value, default_buf, variables)
            if op is None:
                r.left_out.add(name + "/dce")
            else:
                r.opts.append(op)
        elif name == "flow":
            r.flow |= {w.strip() for w in value.split(",")}
            if "only_stream" in r.flow:
                r.left_out.add("flow:only_stream")
        elif name == "flowbits":
            r.flowbits.append(parse_flowbits(value))
        elif name == "dsize":
            r.dsize = parse_range(value)
        elif name == "urilen":
            rng, _, which = value.partition(",")
            r.urilen = parse_range(rng)
            r.urilen_raw = which.strip() != "norm"
        elif name == "metadata":
            services = set(re.findall(r"(?:^|[ ,])service ([\w-]+)", value))
            r.mail = bool(services & MAIL)
            r.http = "http" in services
        elif name == "sid":
            r.sid = int(value)
        elif name == "rev":
            r.rev = int(value)
        elif name == "msg":
            r.msg = re.sub(r"\\(.)", r"\1", value[1:-1])
        elif name == "classtype":
            r.classtype = value
        elif name not in NO_EFFECT:
            r.left_out.add(name)
    if r.mail and not r.http and r.reads(FILE):
        r.left_out.add("file_data/mail")
    return r


def disabled(r: Rule) -> bool:
    """What the app disables (README): icmp; a rule that left something out
    and has no content and no pcre."""
    return r.proto == "icmp" or (r.partial and not r.contents and not r.pcres)


# --- addresses and ports ------------------------------------------------------
class NetSet:
    """Positive and negated ranges: in when in some positive one (or none
    given) and in no negated one."""

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


V4 = 0xFFFF << 32  # IPv4 addresses are IPv4-mapped IPv6 ones (::ffff:a.b.c.d)


def addr_int(packed: bytes) -> int:
    """An address as rules compare it: IPv6 as is, IPv4 IPv4-mapped."""
    x = int.from_bytes(packed, "big")
    return V4 | x if len(packed) == 4 else x


def addr_str(x: int) -> str:
    if x >> 32 == 0xFFFF:
        return str(ipaddress.IPv4Address(x & 0xFFFFFFFF))
    return str(ipaddress.IPv6Address(x))


def resolve(text: str, vars_: dict[str, str], port: bool) -> NetSet:
    top = 65535 if port else 2**128 - 1

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
            off = V4 if n.version == 4 else 0
            rg = (off | int(n.network_address), off | int(n.broadcast_address))
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


# --- packets ----------------------------------------------------------------------
@dataclass
class Packet:
    proto: int
    src: int
    dst: int
    sport: int
    dport: int
    payload: bytes
    vlan: int = 0
    tcp_flags: int = 0


TUNNEL_PORTS = {4789: "vxlan", 6081: "geneve"}
TUNNEL_DEPTH = 2  # tunnels inside tunnels decapsulated, at most


def payload_of(frame: bytes) -> Packet | None:
    """IPv4 or IPv6 TCP/UDP behind Ethernet and up to two VLAN tags, or an
    MPLS label stack (IPv6 hop-by-hop, routing, destination options,
    authentication and atomic fragment headers walked); None otherwise
    (truncated, a fragment other than the first, bad header lengths, a
    jumbogram).  UDP to 4789 (VXLAN: the I flag set) or 6081 (Geneve:
    version 0, options skipped, Ethernet or IP inside) is replaced by the
    packet it carries, two tunnels deep at most; a tunnel header that is
    malformed leaves the UDP as it is."""
    return _ethernet(frame, 0, len(frame), 0)


def _ethernet(frame: bytes, at: int, end: int, depth: int) -> Packet | None:
    off = at + 12
    if end < off + 2:
        return None
    et = struct.unpack_from("!H", frame, off)[0]
    tags, vlan = 0, 0
    while et in (0x8100, 0x88A8, 0x9100) and tags < 2:
        off += 4
        tags += 1
        if end < off + 2:
            return None
        if tags == 1:
            vlan = struct.unpack_from("!H", frame, off - 2)[0] & 0x0FFF
        et = struct.unpack_from("!H", frame, off)[0]
    return _network(frame, off + 2, et, end, depth, vlan)


def _network(frame: bytes, l3: int, et: int, flen: int, depth: int, vlan: int) -> Packet | None:
    if et in (0x8847, 0x8848):  # MPLS: labels to the bottom of the stack, then IP by its version
        for _ in range(8):
            if flen < l3 + 4:
                return None
            bottom = frame[l3 + 2] & 1
            l3 += 4
            if bottom:
                break
        else:
            return None
        if flen < l3 + 1 or frame[l3] >> 4 not in (4, 6):
            return None
        et = 0x0800 if frame[l3] >> 4 == 4 else 0x86DD
    first_fragment = False
    if et == 0x0800:
        if flen < l3 + 20 or frame[l3] >> 4 != 4:
            return None
        ihl = (frame[l3] & 15) * 4
        total = struct.unpack_from("!H", frame, l3 + 2)[0]
        frag = struct.unpack_from("!H", frame, l3 + 6)[0]
        proto = frame[l3 + 9]
        if ihl < 20 or total < ihl or l3 + total > flen:
            return None
        if frag & 0x1FFF:
            return None
        first_fragment = bool(frag & 0x2000)
        l4, end = l3 + ihl, l3 + total
        src, dst = addr_int(frame[l3 + 12:l3 + 16]), addr_int(frame[l3 + 16:l3 + 20])
    elif et == 0x86DD:
        if flen < l3 + 40 or frame[l3] >> 4 != 6:
            return None
        plen = struct.unpack_from("!H", frame, l3 + 4)[0]
        end = l3 + 40 + plen
        if plen == 0 or end > flen:
            return None
        proto, l4 = frame[l3 + 6], l3 + 40
        for k in range(9):
            if proto not in (0, 43, 60, 51, 44):
                break
            if k == 8:
                return None  # more than 8 extension headers
            if proto in (0, 43, 60, 51):
                if end < l4 + 2:
                    return None
                hl = (frame[l4 + 1] + 1) * 8 if proto != 51 else (frame[l4 + 1] + 2) * 4
            else:
                fo = struct.unpack_from("!H", frame, l4 + 2)[0] if end >= l4 + 8 else 0
                if end < l4 + 8 or fo & 0xFFF8:
                    return None  # not a first fragment (a first one is judged as far as it goes)
                if fo & 1:
                    proto, l4 = frame[l4], l4 + 8
                    first_fragment = True
                    break
                hl = 8
            if end < l4 + hl:
                return None
            proto, l4 = frame[l4], l4 + hl
        src, dst = addr_int(frame[l3 + 8:l3 + 24]), addr_int(frame[l3 + 24:l3 + 40])
    else:
        return None
    if proto not in (6, 17):
        return None
    flags = 0
    if proto == 6:
        if end < l4 + 20:
            return None
        hl = (frame[l4 + 12] >> 4) * 4
        if hl < 20 or end < l4 + hl:
            return None
        start = l4 + hl
        flags = frame[l4 + 13]
    else:
        if end < l4 + 8:
            return None
        start = l4 + 8
    sport, dport = struct.unpack_from("!HH", frame, l4)
    kind = TUNNEL_PORTS.get(dport) if proto == 17 and not first_fragment else None
    if kind is not None and depth < TUNNEL_DEPTH and end >= start + 8:
        h = frame[start:start + 8]
        if kind == "vxlan" and h[0] & 0x08:
            return _ethernet(frame, start + 8, end, depth + 1)
        inner = start + 8 + (h[0] & 0x3F) * 4
        et = struct.unpack_from("!H", h, 2)[0]
        if kind == "geneve" and h[0] >> 6 == 0 and inner <= end:
            if et == 0x6558:
                return _ethernet(frame, inner, end, depth + 1)
            if et in (0x0800, 0x86DD):
                return _network(frame, inner, et, end, depth + 1, 0)
    return Packet(proto, src, dst, sport, dport, frame[start:end], vlan, flags)


# --- HTTP buffers (README.md, "HTTP buffers") ---------------------------------------
METHOD_CHARS = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ_-")
HEX = b"0123456789abcdefABCDEF"


def percent_decode(s: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == 0x25:  # '%'
            u = s[i + 1:i + 6]
            if len(u) == 5 and u[:1] in (b"u", b"U") and all(c in HEX for c in u[1:]):
                v = int(u[1:], 16)
                if v < 0x100:
                    out.append(v)
                    i += 6
                    continue
            elif len(s[i + 1:i + 3]) == 2 and all(c in HEX for c in s[i + 1:i + 3]):
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
                continue
        out.append(s[i])
        i += 1
    return bytes(out)


def normalize_path(p: bytes) -> bytes:
    p = p.replace(b"\\", b"/")
    if not p:
        return b""
    segs = p.split(b"/")
    lead = p.startswith(b"/")
    trail = segs[-1] in (b"", b".", b"..")
    stack: list[bytes] = []
    for s in segs:
        if s in (b"", b"."):
            continue
        if s == b"..":
            if stack:
                stack.pop()
            continue
        stack.append(s)
    out = (b"/" if lead else b"") + b"/".join(stack)
    if trail and stack:
        out += b"/"
    return out


def normalize_uri(raw: bytes) -> bytes:
    pre = b""
    m = re.match(rb"[A-Za-z][A-Za-z0-9+.-]*://[^/?]*", raw)
    if m:
        pre, raw = m.group(0), raw[m.end():]
    q = raw.find(b"?")
    path, query = (raw, b"") if q < 0 else (raw[:q], raw[q:])
    return pre + normalize_path(percent_decode(path)) + percent_decode(query)


def line_end(b: bytes, i: int) -> int:
    """Length of the line end (CRLF 2, LF 1) at b[i], 0 if none."""
    if b[i:i + 1] == b"\n":
        return 1
    if b[i:i + 2] == b"\r\n":
        return 2
    return 0


def header_block(b: bytes, h: int) -> tuple[bytes, int | None]:
    """Header lines from h to the empty line (or the payload's end), and
    where the body starts (None when the empty line is not there)."""
    i = h
    while True:
        e = line_end(b, i)
        if e:
            return b[h:i], i + e
        nl = b.find(b"\n", i)
        if nl < 0:
            return b[h:], None
        i = nl + 1


def split_cookies(hdr: bytes, name: bytes) -> tuple[bytes, list[bytes]]:
    """The header block without the lines called name, and their values."""
    kept, values = b"", []
    for line in re.findall(rb"[^\n]*\n|[^\n]+\Z", hdr):
        key, colon, value = line.partition(b":")
        if colon and key.lower() == name:
            v = value.lstrip(b" \t")
            if v.endswith(b"\n"):
                v = v[:-1]
                if v.endswith(b"\r"):
                    v = v[:-1]
            values.append(v)
        else:
            kept += line
    return kept, values


def http_buffers(payload: bytes, tcp: bool) -> dict[str, bytes]:
    """The buffers of one payload; absent ones are left out of the dict."""
    bufs = {PKT: payload, FILE: payload}
    if not tcp:
        return bufs
    m = re.match(rb"HTTP/\d\.\d (\d\d\d)(?: ([^\n]*?))?(\r?\n)", payload)
    if m and (m.group(2) is not None or m.end(1) == m.start(3)):
        msg = m.group(2) if m.group(2) is not None else b""
        hdr, body = header_block(payload, m.end())
        kept, cookies = split_cookies(hdr, b"set-cookie")
        bufs.update({"http_stat_code": m.group(1), "http_stat_msg": msg, "http_raw_header": hdr,
                     "http_header": kept})
        if cookies:
            bufs["http_cookie"] = bufs["http_raw_cookie"] = b"".join(cookies)
        if body is None:
            del bufs[FILE]
        else:
            bufs[FILE] = payload[body:]
        return bufs
    m = re.match(rb"([A-Z_-]{1,32}) ([^ \r\n]+) HTTP/\d\.\d(\r?\n)", payload)
    if m:
        hdr, body = header_block(payload, m.end())
        kept, cookies = split_cookies(hdr, b"cookie")
        bufs.update({"http_method": m.group(1), "http_raw_uri": m.group(2),
                     "http_uri": normalize_uri(m.group(2)), "http_raw_header": hdr, "http_header": kept})
        if cookies:
            bufs["http_cookie"] = bufs["http_raw_cookie"] = b"".join(cookies)
        if body is not None:
            bufs["http_client_body"] = payload[body:]
    return bufs


# --- byte_* -----------------------------------------------------------------------
def read_number(op: ByteOp, buf: bytes, at: int, vars_: dict[str, int]) -> int | None:
    if at < 0 or at + op.n > len(buf):
        return None
    field_ = buf[at:at + op.n]
    if op.base == 0:
        v = int.from_bytes(field_, "little" if op.little else "big")
    else:
        digits = "0123456789abcdef"[:op.base]
        v, k = 0, 0
        for c in field_.decode("latin-1").lower():
            if c not in digits:
                break
            v = (v * op.base + digits.index(c)) % 2**32
            k += 1
        if k == 0:
            return None
    if op.bitmask:
        v = (v & op.bitmask) >> ((op.bitmask & -op.bitmask).bit_length() - 1)
    return v


def value_of(x: int | str, vars_: dict[str, int]) -> int:
    return vars_[x] if isinstance(x, str) else x


# --- flows ------------------------------------------------------------------------
@dataclass
class Flow:
    client_dir: int
    handshake: int = 0  # 1 SYN seen, 2 SYN+ACK after it, 3 established
    udp_seen: set[int] = field(default_factory=set)
    fins: set[int] = field(default_factory=set)
    bits: set[str] = field(default_factory=set)


def flow_key(p: Packet) -> tuple[tuple, int]:
    """The flow's key, both directions alike, and the packet's direction in it."""
    a, b = (p.src, p.sport), (p.dst, p.dport)
    lo, hi, d = (a, b, 0) if a <= b else (b, a, 1)
    return (p.vlan, p.proto, lo, hi), d


SYN, ACK, RST, FIN = 0x02, 0x10, 0x04, 0x01


class Evaluator:
    def __init__(self, rules: list[Rule], vars_: dict[str, str], streams: bool = False) -> None:
        """streams: the app reassembles (its default): flow:only_stream
        rules judge rebuilt PDUs only, exactly (not partial), and never a
        packet; without (--no-reassembly), they are judged on each packet,
        partial."""
        self.streams = streams
        for r in rules:
            if streams and "flow:only_stream" in r.left_out:
                r.left_out.discard("flow:only_stream")
        self.rules = [r for r in rules if not disabled(r)]
        self.sets = [(resolve(r.src, vars_, False), resolve(r.sport, vars_, True),
                      resolve(r.dst, vars_, False), resolve(r.dport, vars_, True)) for r in self.rules]
        # flowbits groups: the states a set or setx names with the group
        self.groups: dict[str, set[str]] = {}
        for r in self.rules:
            for f in r.flowbits:
                if f.group is not None:
                    members = self.groups.setdefault(f.group, set())
                    if f.cmd in ("set", "setx"):
                        members.update(f.names)
        self.flows: dict[tuple, Flow] = {}
        # Judging order (flowbits changers first), and per rule what a quick
        # necessary test needs: its protocol and its plain contents.
        self.order = sorted(range(len(self.rules)), key=lambda i: (self.rank(self.rules[i]), i))
        self.proto = [{"tcp": 6, "udp": 17}.get(r.proto, 0) for r in self.rules]
        self.plain = [[(c.buf, c.data.lower() if c.nocase else c.data, c.nocase)
                       for c in r.contents if not c.negated] for r in self.rules]

    # -- flows --
    def track(self, p: Packet) -> tuple[Flow, bool, bool]:
        """The packet's flow, whether it comes from the client, and whether
        the flow is established (this packet counted)."""
        key, d = flow_key(p)
        syn, ack, rst = p.tcp_flags & SYN, p.tcp_flags & ACK, p.tcp_flags & RST
        fl = self.flows.get(key)
        if fl is None:
            # the client: a lone SYN's sender, a SYN+ACK's receiver, else the first sender
            client = d ^ 1 if p.proto == 6 and syn and ack else d
            fl = self.flows[key] = Flow(client, 1 if p.proto == 6 and syn and not ack and not rst else 0)
        from_client = d == fl.client_dir
        if p.proto == 6:
            if fl.handshake == 1 and not from_client and syn and ack and not rst:
                fl.handshake = 2
            elif fl.handshake == 2 and from_client and ack and not syn and not rst:
                fl.handshake = 3
            established = fl.handshake == 3
        else:
            fl.udp_seen.add(0 if from_client else 1)
            established = len(fl.udp_seen) == 2
        return fl, from_client, established

    def end_flow(self, p: Packet) -> None:
        """A RST, or a FIN from both sides (over the flow's life), ends a TCP flow."""
        if p.proto != 6:
            return
        key, d = flow_key(p)
        fl = self.flows[key]
        if p.tcp_flags & FIN:
            fl.fins.add(d)
        if p.tcp_flags & RST or len(fl.fins) == 2:
            del self.flows[key]

    # -- rules --
    def header(self, i: int, p: Packet) -> bool:
        r = self.rules[i]
        if (r.proto == "tcp" and p.proto != 6) or (r.proto == "udp" and p.proto != 17):
            return False
        s, sp, d, dp = self.sets[i]
        if p.src in s and p.sport in sp and p.dst in d and p.dport in dp:
            return True
        return r.bidirectional and p.dst in s and p.dport in sp and p.src in d and p.sport in dp

    @staticmethod
    def flow_ok(r: Rule, from_client: bool, established: bool) -> bool:
        f = r.flow
        if f & {"to_server", "from_client"} and not from_client:
            return False
        if f & {"to_client", "from_server"} and from_client:
            return False
        if "established" in f and not established:
            return False
        return not ("not_established" in f and established)

    def states(self, f: FlowbitOp) -> set[str]:
        if f.names:
            return set(f.names)
        if f.group is not None:
            return set(self.groups.get(f.group, set()))
        return set()

    def check(self, f: FlowbitOp, bits: set[str]) -> bool:
        s = self.states(f)
        if f.cmd == "isset":
            return bool(s & bits) if f.any_ else s <= bits
        # isnotset: "a&b" (or all of a group): none set; "a|b" (or any): one not set
        return not s <= bits if f.any_ else not (s & bits)

    def change(self, f: FlowbitOp, bits: set[str]) -> None:
        s = self.states(f)
        if f.cmd == "set":
            bits |= s
        elif f.cmd == "setx":
            bits -= self.groups.get(f.group, set())
            bits |= s
        elif f.cmd == "unset":
            bits -= s
        elif f.cmd == "toggle":
            bits ^= s
        elif f.cmd == "reset":
            if f.group is None:
                bits.clear()
            else:
                bits -= s

    @staticmethod
    def payload_options(r: Rule, bufs: dict[str, bytes]) -> bool:
        """Some choice of content positions satisfies every payload option."""
        opts = r.opts

        def window(c: Content, base: int, n: int, vars_: dict[str, int]) -> tuple[int, int]:
            off, dep = c.offset, c.depth
            dis, wit = c.distance, c.within
            off = None if off is None else value_of(off, vars_)
            dep = None if dep is None else value_of(dep, vars_)
            dis = None if dis is None else value_of(dis, vars_)
            wit = None if wit is None else value_of(wit, vars_)
            s = off if off is not None else 0
            e = s + dep if dep is not None else n
            if dis is not None or wit is not None:
                rs = base + (dis or 0)
                re_ = rs + wit if wit is not None else n
                s, e = max(s, rs), min(e, re_)
            return max(s, 0), min(e, n)

        def occurs(c: Content, buf: bytes, s: int, e: int) -> list[int]:
            hay = buf.lower() if c.nocase else buf
            needle = c.data.lower() if c.nocase else c.data
            return [q for q in range(s, e - len(needle) + 1) if hay[q:q + len(needle)] == needle]

        memo: dict[tuple, bool] = {}

        def run(i: int, cur: tuple[str, int] | None, vars_: dict[str, int]) -> bool:
            key = (i, cur, tuple(sorted(vars_.items())))
            if key not in memo:
                memo[key] = step(i, cur, vars_)
            return memo[key]

        def step(i: int, cur: tuple[str, int] | None, vars_: dict[str, int]) -> bool:
            if i == len(opts):
                return True
            o = opts[i]
            if isinstance(o, ByteOp):
                if o.relative and cur is not None:
                    bname, base = cur
                else:
                    bname, base = o.buf, 0
                if bname not in bufs:
                    return False
                buf = bufs[bname]
                at = (base if o.relative else 0) + value_of(o.offset, vars_)
                if o.kind == "isdataat":
                    return ((0 <= at < len(buf)) != o.negate) and run(i + 1, cur, vars_)
                v = read_number(o, buf, at, vars_)
                if v is None:
                    return False
                if o.kind == "byte_test":
                    t = value_of(o.value, vars_)
                    ok = {"<": v < t, ">": v > t, "=": v == t, "<=": v <= t, ">=": v >= t,
                          "&": v & t != 0, "^": v ^ t != 0}[o.op]
                    return ok != o.negate and run(i + 1, cur, vars_)
                if o.kind == "byte_jump":
                    j = v * o.multiplier
                    if o.align:
                        j = (j + 3) // 4 * 4
                    c = (0 if o.from_beginning else at + o.n) + j + o.post_offset
                    return 0 <= c <= len(buf) and run(i + 1, (bname, c), vars_)
                x = v * o.multiplier
                if o.align:
                    x = (x + o.align - 1) // o.align * o.align
                return run(i + 1, (bname, at + o.n), {**vars_, o.var: x % 2**32})
            if o.buf not in bufs:
                return False
            buf = bufs[o.buf]
            base = cur[1] if cur is not None and cur[0] == o.buf else 0
            if isinstance(o, Pcre):
                start = base if o.relative else 0
                subject = buf[start:]
                m = o.regex.match(subject) if o.anchored else o.regex.search(subject)
                if o.negated:
                    return m is None and run(i + 1, cur, vars_)
                return m is not None and run(i + 1, (o.buf, start + m.end()), vars_)
            if o.fp_only and not o.negated:
                return bool(occurs(o, buf, 0, len(buf))) and run(i + 1, cur, vars_)
            s, e = window(o, base, len(buf), vars_)
            if o.negated:
                return not occurs(o, buf, s, e) and run(i + 1, cur, vars_)
            return any(run(i + 1, (o.buf, q + len(o.data)), vars_) for q in occurs(o, buf, s, e))

        return run(0, None, {})

    def matches(self, i: int, p: Packet, bufs: dict[str, bytes], from_client: bool,
                established: bool, bits: set[str]) -> bool:
        r = self.rules[i]
        if not self.header(i, p) or not self.flow_ok(r, from_client, established):
            return False
        if r.dsize is not None and not in_range(r.dsize, len(p.payload)):
            return False
        if r.urilen is not None:
            uri = bufs.get("http_raw_uri" if r.urilen_raw else "http_uri")
            if uri is None or not in_range(r.urilen, len(uri)):
                return False
        for f in r.flowbits:
            if f.cmd in ("isset", "isnotset") and not self.check(f, bits):
                return False
        if not self.payload_options(r, bufs):
            return False
        for f in r.flowbits:
            if f.cmd not in ("isset", "isnotset", "noalert"):
                self.change(f, bits)
        return True

    def rank(self, r: Rule) -> int:
        checks = any(f.cmd in ("isset", "isnotset") for f in r.flowbits)
        changes = any(f.cmd in ("set", "setx", "unset", "toggle", "reset") for f in r.flowbits)
        if not checks and not changes:
            return 0
        return 3 if not changes else (2 if checks else 1)

    def alerts(self, p: Packet) -> list[tuple[int, bool, bool, bool]]:
        """The rules that alert on p, every rule tried, with the flow's side
        and state: (rule index, from client, established, partial here).
        Packets are judged in capture order: flows and flowbits carry over."""
        fl, from_client, established = self.track(p)
        bufs = http_buffers(p.payload, p.proto == 6)
        response = "http_stat_code" in bufs
        lowered: dict[str, bytes] = {}
        out = []
        for i in self.order:
            if self.proto[i] not in (0, p.proto):
                continue
            if self.streams and "only_stream" in self.rules[i].flow:
                continue
            # cheap necessary condition first: each plain content occurs in its buffer
            ok = True
            for b, data, nocase in self.plain[i]:
                hay = bufs.get(b)
                if hay is None:
                    ok = False
                    break
                if nocase:
                    hay = lowered.get(b)
                    if hay is None:
                        hay = lowered[b] = bufs[b].lower()
                if data not in hay:
                    ok = False
                    break
            if not ok:
                continue
            r = self.rules[i]
            if self.matches(i, p, bufs, from_client, established, fl.bits) and not r.noalert:
                out.append((i, from_client, established, r.partial or (r.mail_file_data and not response)))
        self.end_flow(p)
        return out
