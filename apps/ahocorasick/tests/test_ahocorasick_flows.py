"""Rules mode with flows, end to end: built TCP and UDP sessions whose packets
sit just inside and just outside every flow, flowbits, byte_*, isdataat,
dsize, urilen and HTTP buffer condition go through the app on single
packets (--no-reassembly), and its alerts, with their direction, flow state
and partial flag, must equal those of rule_reference.py (written apart from
the C code) exactly, for both engines; with reassembly (the default), the
alerts on packets are the same (every segment of these sessions is in
order), flow:only_stream rules alert on the PDUs only, and the alerts on
PDUs are ac-ids's.
A few alerts are also checked by hand, so that the reference is held to
the README's words too.  Then captures of broken sessions (no handshake,
overlapping and repeated segments, truncated HTTP, cut frames) go through
the app with the community rules: no crash, no sanitizer report, every
packet accounted for, and the same alerts as the reference."""
from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import pytest
from scapy.utils import RawPcapReader

from ac_run import COMMUNITY_VARS, assert_clean, run_app

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import pcapgen  # noqa: E402
import rule_reference as ref  # noqa: E402

SYN, ACK, FIN, RST, PSH = pcapgen.TCP_SYN, pcapgen.TCP_ACK, pcapgen.TCP_FIN, pcapgen.TCP_RST, pcapgen.TCP_PSH
CLIENT, SERVER = 0x0A000001, 0xC6120002  # 10.0.0.1 (HOME_NET), 198.18.0.2
VARS = "ipvar HOME_NET 10.0.0.0/8\nipvar EXTERNAL_NET any\nportvar HTTP_PORTS [80,8080]\n"
# (sid, src, sport, dst, dport, proto, direction, flow_state, partial)
Alert = tuple[int, str, int, str, int, str, str, str, bool]

RULES = r"""
alert tcp any any -> any any (msg:"established, to server"; flow:to_server,established; content:"hello"; sid:2001; rev:1;)
alert tcp any any -> any any (msg:"established, to client"; flow:established,to_client; content:"world"; sid:2002; rev:1;)
alert tcp any any -> any any (msg:"not established"; flow:not_established; content:"hello"; sid:2003; rev:1;)
alert tcp any any -> any any (msg:"stateless"; flow:stateless; content:"hello"; sid:2004; rev:1;)
alert tcp any any -> any any (msg:"from server"; flow:from_server; content:"hello"; sid:2005; rev:1;)
alert tcp any any -> any any (msg:"no_stream"; flow:established,no_stream; content:"world"; sid:2006; rev:1;)
alert tcp any any -> any any (msg:"only_stream: partial"; flow:to_server,established,only_stream; content:"hello"; sid:2007; rev:1;)
alert udp any any -> any any (msg:"udp to server"; flow:to_server; content:"ping"; sid:2010; rev:1;)
alert udp any any -> any any (msg:"udp established"; flow:established; content:"p"; depth:1; sid:2011; rev:1;)
alert udp any any -> any any (msg:"udp to client"; flow:to_client; content:"pong"; sid:2012; rev:1;)
alert tcp any any -> any 21 (msg:"login"; flow:to_server; content:"USER"; depth:4; flowbits:set,logged_in; flowbits:noalert; sid:2020; rev:1;)
alert tcp any any -> any 21 (msg:"command after login"; flow:to_server; content:"CMD"; flowbits:isset,logged_in; sid:2021; rev:1;)
alert tcp any any -> any 21 (msg:"command without login"; content:"CMD"; flowbits:isnotset,logged_in; sid:2022; rev:1;)
alert tcp any any -> any 21 (msg:"logout"; content:"QUIT"; flowbits:unset,logged_in; flowbits:noalert; sid:2023; rev:1;)
alert tcp any any -> any 21 (msg:"toggle"; content:"TOG"; flowbits:toggle,t1; flowbits:noalert; sid:2024; rev:1;)
alert tcp any any -> any 21 (msg:"toggled on"; content:"CHK"; flowbits:isset,t1; sid:2025; rev:1;)
alert tcp any any -> any 21 (msg:"state A"; content:"STA"; flowbits:setx,st_a,grp; flowbits:noalert; sid:2026; rev:1;)
alert tcp any any -> any 21 (msg:"state B"; content:"STB"; flowbits:setx,st_b,grp; flowbits:noalert; sid:2027; rev:1;)
alert tcp any any -> any 21 (msg:"in A"; content:"QRY"; flowbits:isset,st_a; sid:2028; rev:1;)
alert tcp any any -> any 21 (msg:"any of group"; content:"QRY"; flowbits:isset,any,grp; sid:2029; rev:1;)
alert tcp any any -> any 21 (msg:"none of group"; content:"QRY"; flowbits:isnotset,all,grp; sid:2030; rev:1;)
alert tcp any any -> any 21 (msg:"group cleared"; content:"CLR"; flowbits:unset,all,grp; flowbits:noalert; sid:2031; rev:1;)
alert tcp any any -> any 21 (msg:"both set"; content:"AB"; flowbits:set,fa&fb; flowbits:noalert; sid:2032; rev:1;)
alert tcp any any -> any 21 (msg:"one of"; content:"ONE"; flowbits:isset,fa|zz; sid:2033; rev:1;)
alert tcp any any -> any 21 (msg:"all of"; content:"ALL"; flowbits:isset,fa&zz; sid:2034; rev:1;)
alert tcp any any -> any 21 (msg:"same packet: check"; content:"SAME"; flowbits:isset,same; sid:2035; rev:1;)
alert tcp any any -> any 21 (msg:"same packet: set"; content:"SAME"; flowbits:set,same; flowbits:noalert; sid:2036; rev:1;)
alert tcp any any -> any 21 (msg:"reset"; content:"RESET"; flowbits:reset; flowbits:noalert; sid:2037; rev:1;)
alert tcp any any -> any 9 (msg:"byte_test relative"; content:"BT"; byte_test:2,>,0x1000,0,relative; sid:2040; rev:1;)
alert tcp any any -> any 9 (msg:"byte_test string"; content:"LEN="; byte_test:4,=,1234,0,relative,string,dec; sid:2041; rev:1;)
alert tcp any any -> any 9 (msg:"byte_test little bitmask"; content:"BM"; byte_test:2,!&,0x02,4,little,bitmask 0x0f00; sid:2042; rev:1;)
alert tcp any any -> any 9 (msg:"byte_test not equal"; content:"NE"; byte_test:1,!=,7,0,relative; sid:2043; rev:1;)
alert tcp any any -> any 9 (msg:"byte_test hex"; content:"HX"; byte_test:2,>=,0xff,0,relative,string,hex; sid:2044; rev:1;)
alert tcp any any -> any 9 (msg:"byte_jump"; content:"BJ"; byte_jump:1,0,relative; content:"END"; within:3; sid:2045; rev:1;)
alert tcp any any -> any 9 (msg:"byte_jump align multiplier"; content:"JA"; byte_jump:1,0,relative,multiplier 2,align; content:"Z"; within:1; sid:2046; rev:1;)
alert tcp any any -> any 9 (msg:"byte_jump from_beginning post_offset"; content:"JB"; byte_jump:1,0,relative,from_beginning,post_offset -1; content:"Q"; within:1; sid:2047; rev:1;)
alert tcp any any -> any 9 (msg:"byte_extract"; content:"BE"; byte_extract:1,0,len,relative; content:"X"; distance:len; within:1; sid:2048; rev:1;)
alert tcp any any -> any 9 (msg:"byte_extract offset"; content:"EO"; byte_extract:1,0,at,relative; byte_test:1,=,0x41,at,relative; sid:2049; rev:1;)
alert tcp any any -> any 9 (msg:"isdataat relative"; content:"ID"; isdataat:3,relative; sid:2050; rev:1;)
alert tcp any any -> any 9 (msg:"not isdataat"; content:"NI"; depth:2; isdataat:!4; sid:2051; rev:1;)
alert tcp any any -> any 9 (msg:"dsize"; dsize:5; content:"DS"; sid:2052; rev:1;)
alert tcp any any -> any 9 (msg:"dsize range"; dsize:5<>8; content:"DR"; sid:2053; rev:1;)
alert tcp any any -> any 9 (msg:"pcre relative"; content:"abc"; pcre:"/^def/R"; sid:2054; rev:1;)
alert tcp any any -> any 9 (msg:"byte_test dce: partial"; content:"DC"; byte_test:4,>,1,0,relative,dce; sid:2055; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"uri normalised"; flow:to_server,established; content:"/admin/x"; http_uri; sid:2060; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"raw uri"; content:"/a/../"; http_raw_uri; sid:2061; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"method"; content:"POST"; http_method; content:"a=b"; http_client_body; sid:2062; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"header"; content:"X-Evil|3A| 1"; http_header; sid:2063; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"cookie out of header"; content:"sess="; http_header; sid:2064; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"cookie"; content:"sess=42"; http_cookie; content:"sess="; http_raw_header; sid:2065; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"urilen"; urilen:6; content:"GET"; http_method; sid:2066; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"urilen norm range"; urilen:1<>7,norm; content:"/d"; http_uri; sid:2067; rev:1;)
alert tcp any $HTTP_PORTS -> any any (msg:"status"; content:"404"; http_stat_code; content:"Not Found"; http_stat_msg; sid:2068; rev:1;)
alert tcp any $HTTP_PORTS -> any any (msg:"file data"; file_data; content:"<html>"; depth:6; sid:2069; rev:1;)
alert tcp any any -> any any (msg:"file data of a plain packet"; file_data; content:"plain"; depth:5; sid:2070; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"pcre U"; pcre:"/^\/admin\/x/U"; sid:2071; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"pcre H C P I M"; pcre:"/X-Evil/H"; pcre:"/sess/C"; pcre:"/GET|POST/M"; sid:2072; rev:1;)
alert tcp any any -> any $HTTP_PORTS (msg:"pcre P I"; pcre:"/a=b/P"; pcre:"/%61/I"; sid:2073; rev:1;)
alert tcp any $HTTP_PORTS -> any any (msg:"pcre S Y D K"; pcre:"/^404$/S"; pcre:"/^Not/Y"; pcre:"/Set-Cookie/D"; pcre:"/id=7/K"; sid:2074; rev:1;)
alert tcp any $HTTP_PORTS -> any any (msg:"pcre B after file_data"; file_data; content:"<html>"; pcre:"/^HTTP/B"; sid:2075; rev:1;)
alert tcp any any -> any any (msg:"split request: header"; content:"User-Agent|3A| evil"; http_header; sid:2076; rev:1;)
alert tcp any any -> any any (msg:"split request: payload"; content:"User-Agent|3A| evil"; sid:2077; rev:1;)
alert tcp any any -> any any (msg:"split request: uri"; content:"/split"; http_uri; sid:2078; rev:1;)
alert udp any any -> any any (msg:"no HTTP on UDP"; content:"GET"; http_method; sid:2079; rev:1;)
alert tcp any any -> any any (msg:"negated content in an absent buffer"; content:"nohttp"; content:!"x"; http_uri; sid:2080; rev:1;)
alert tcp any $HTTP_PORTS -> any any (msg:"mail and http file_data: partial on mail"; flow:to_client; file_data; content:"MZ"; depth:2; metadata:service http, service smtp; sid:2081; rev:1;)
alert tcp any any -> any 25 (msg:"mail only file_data: partial"; file_data; content:"MZ"; depth:2; metadata:service smtp; sid:2082; rev:1;)
"""
NOALERT = {2020, 2023, 2024, 2026, 2027, 2031, 2032, 2036, 2037}


class Tcp:
    """A TCP conversation between a client and a server, frame by frame."""

    def __init__(self, cport: int, sport: int, client: int = CLIENT, server: int = SERVER) -> None:
        self.c = pcapgen.Flow(pcapgen.ipv4(client), pcapgen.ipv4(server), pcapgen.PROTO_TCP, cport, sport)
        self.s = pcapgen.Flow(pcapgen.ipv4(server), pcapgen.ipv4(client), pcapgen.PROTO_TCP, sport, cport)
        self.seq = {0: 1000, 1: 5000}

    def pkt(self, from_client: bool, payload: bytes = b"", flags: int = ACK | PSH) -> bytes:
        d = 0 if from_client else 1
        f = pcapgen.frame(self.c if from_client else self.s, payload, flags, self.seq[d], self.seq[1 - d])
        self.seq[d] += len(payload) + (1 if flags & (SYN | FIN) else 0)
        return f

    def handshake(self) -> list[bytes]:
        return [self.pkt(True, flags=SYN), self.pkt(False, flags=SYN | ACK), self.pkt(True, flags=ACK)]

    def close(self) -> list[bytes]:
        return [self.pkt(True, flags=FIN | ACK), self.pkt(False, flags=FIN | ACK), self.pkt(True, flags=ACK)]


def udp(sport: int, dport: int, payload: bytes, reply: bool = False) -> bytes:
    a, b = (SERVER, CLIENT) if reply else (CLIENT, SERVER)
    ports = (dport, sport) if reply else (sport, dport)
    return pcapgen.frame(pcapgen.Flow(pcapgen.ipv4(a), pcapgen.ipv4(b), pcapgen.PROTO_UDP, *ports), payload)


def http_request(uri: bytes, method: bytes = b"GET", headers: bytes = b"", body: bytes = b"") -> bytes:
    return method + b" " + uri + b" HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + body


def sessions() -> list[bytes]:
    """Every edge case, each in its own flow (its own client port)."""
    out: list[bytes] = []
    # Handshake seen: established both ways; after the close, the same
    # 5-tuple starts a new flow without a handshake.
    t = Tcp(40001, 80)
    out += t.handshake() + [t.pkt(True, b"hello"), t.pkt(False, b"world"), t.pkt(False, b"hello")]
    out += t.close() + [t.pkt(True, b"hello")]
    # Handshake missing: data first, never established.
    t = Tcp(40002, 80)
    out += [t.pkt(True, b"hello"), t.pkt(False, b"world"), t.pkt(True, b"hello")]
    # Picked up at the server's SYN+ACK: the client is its receiver, but the
    # handshake is incomplete.
    t = Tcp(40003, 80)
    out += [t.pkt(False, flags=SYN | ACK), t.pkt(True, flags=ACK), t.pkt(True, b"hello"), t.pkt(False, b"world")]
    # RST in mid-flow: the next packet starts a new flow.
    t = Tcp(40004, 80)
    out += t.handshake() + [t.pkt(True, b"hello"), t.pkt(False, flags=RST), t.pkt(True, b"hello")]
    # SYN then data, no SYN+ACK.
    t = Tcp(40005, 80)
    out += [t.pkt(True, flags=SYN), t.pkt(True, b"hello")]
    t = Tcp(40006, 80)  # the SYN+ACK comes from the client: reversed, no handshake
    out += [t.pkt(True, flags=SYN), t.pkt(True, flags=SYN | ACK), t.pkt(True, flags=ACK), t.pkt(True, b"hello")]
    # A FIN from one side only keeps the flow; one after both ends it.
    t = Tcp(40007, 80)
    out += t.handshake() + [t.pkt(True, flags=FIN | ACK), t.pkt(False, b"world"), t.pkt(True, b"hello")]
    # UDP: established from the first reply on.
    out += [udp(5000, 53, b"ping"), udp(5000, 53, b"ping"), udp(5000, 53, b"pong", reply=True),
            udp(5000, 53, b"ping")]
    out += [udp(5001, 53, b"pong", reply=True)]  # first packet from the "server" side: it is the client
    # flowbits on port 21: two flows, the bits of one never reach the other.
    t, u = Tcp(40010, 21), Tcp(40011, 21)
    out += t.handshake() + u.handshake()
    out += [t.pkt(True, b"CMD before"), t.pkt(True, b"USER bob"), t.pkt(True, b"CMD after"),
            u.pkt(True, b"CMD other flow"), t.pkt(False, b"CMD from server"), t.pkt(True, b"QUIT"),
            t.pkt(True, b"CMD gone"), t.pkt(True, b"CHK 0"), t.pkt(True, b"TOG"), t.pkt(True, b"CHK 1"),
            t.pkt(True, b"TOG"), t.pkt(True, b"CHK 2"), t.pkt(True, b"QRY 0"), t.pkt(True, b"STA"),
            t.pkt(True, b"QRY a"), t.pkt(True, b"STB"), t.pkt(True, b"QRY b"), t.pkt(True, b"CLR"),
            t.pkt(True, b"QRY none"), t.pkt(True, b"ONE 0"), t.pkt(True, b"ALL 0"), t.pkt(True, b"AB"),
            t.pkt(True, b"ONE 1"), t.pkt(True, b"ALL 1"), t.pkt(True, b"SAME"), u.pkt(True, b"USER eve"),
            t.pkt(True, b"RESET"), t.pkt(True, b"CMD reset"), t.pkt(True, b"SAME"), u.pkt(True, b"CMD eve")]
    # byte_* and friends on port 9, each just inside and just outside.
    t = Tcp(40020, 9)
    for p in (b"BT\x10\x01", b"BT\x10\x00", b"BT\x10", b"LEN=1234", b"LEN=1235", b"LEN=12x4", b"LEN=x",
              b"BMxx\x00\x02", b"BMxx\x00\x01", b"NE\x07", b"NE\x08", b"HXff", b"HXfe", b"HXzz",
              b"BJ\x02..END", b"BJ\x03..END", b"BJ\x09..END", b"JA\x02....Z", b"JA\x02...Z", b"JB\x05xxQ",
              b"JB\x05xQx", b"BE\x02..X", b"BE\x02.X.", b"EO\x01.A", b"EO\x01A.", b"IDabcd", b"IDabc",
              b"NIab", b"NIabc", b"DSxyz", b"DSxy", b"DRabcde", b"DRab", b"DRxxxxxxxxx", b"abcdef",
              b"abc.def", b"DC\x00\x00\x00\x05"):
        out.append(t.pkt(True, p))
    # HTTP on port 80, over an established flow.
    t = Tcp(40030, 80)
    out += t.handshake()
    out += [t.pkt(True, http_request(b"/a/../admin/./x")), t.pkt(True, http_request(b"/%61dmin/x")),
            t.pkt(True, http_request(b"/%u0061dmin//x")), t.pkt(True, http_request(b"\\admin\\x")),
            t.pkt(True, http_request(b"http://h//admin/x?y=/../")), t.pkt(True, http_request(b"/admin/y")),
            t.pkt(True, http_request(b"/x%61", b"POST", b"X-Evil: 1\r\nCookie: sess=42\r\n", b"a=b")),
            t.pkt(True, http_request(b"/x", b"POST", b"Cookie: sess=41\r\n", b"a=c")),
            t.pkt(True, http_request(b"/abcde")), t.pkt(True, http_request(b"/abcd")),
            t.pkt(True, http_request(b"/d")), t.pkt(True, http_request(b"/d/../d/e/f")),
            t.pkt(True, http_request(b"/dddddd")),
            t.pkt(False, b"HTTP/1.1 404 Not Found\r\nSet-Cookie: id=7\r\n\r\n<html>gone"),
            t.pkt(False, b"HTTP/1.1 404 Found\r\n\r\n<html>"), t.pkt(False, b"HTTP/1.1 200 OK\r\n\r\nx<html>"),
            t.pkt(False, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"),  # header cut: no body
            t.pkt(False, b"<html> the rest of the body"), t.pkt(True, b"plain text"),
            t.pkt(True, b"GET /split HTTP/1.1\r\nHost: x\r\n"), t.pkt(True, b"User-Agent: evil\r\n\r\n"),
            t.pkt(True, b"nohttp"), t.pkt(False, b"MZ from the server")]
    out.append(udp(5002, 80, http_request(b"/udp")))
    t = Tcp(40031, 25)
    out += t.handshake() + [t.pkt(True, b"MZ attachment")]
    return out


def ip(x: int) -> str:
    return ref.addr_str(x)


def reference_alerts(ev: ref.Evaluator, pcap: Path) -> collections.Counter[Alert]:
    out: collections.Counter[Alert] = collections.Counter()
    for fr, _meta in RawPcapReader(str(pcap)):
        p = ref.payload_of(bytes(fr))
        if p is None:
            continue
        for i, from_client, established, partial in ev.alerts(p):
            out[(ev.rules[i].sid, ip(p.src), p.sport, ip(p.dst), p.dport, "TCP" if p.proto == 6 else "UDP",
                 "to_server" if from_client else "to_client",
                 "established" if established else "not_established", partial)] += 1
    return out


def app_alerts(log: Path) -> collections.Counter[Alert]:
    out: collections.Counter[Alert] = collections.Counter()
    for line in log.read_text().splitlines():
        e = json.loads(line)
        out[(e["alert"]["signature_id"], e["src_ip"], e["src_port"], e["dest_ip"], e["dest_port"], e["proto"],
             e["direction"], e["flow_state"], e["alert"]["partial"])] += 1
    return out


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, collections.Counter[Alert]]:
    d = tmp_path_factory.mktemp("flows")
    rules, vars_, cap = d / "edge.rules", d / "vars.conf", d / "edge.pcap"
    rules.write_text(RULES)
    vars_.write_text(VARS)
    pcapgen.write_pcap(cap, sessions())
    ev = ref.Evaluator([ref.parse_rule(t) for t in ref.rule_lines(rules)], ref.read_vars(vars_))
    return rules, vars_, cap, reference_alerts(ev, cap)


def by_sid_port(want: collections.Counter[Alert]) -> dict[tuple[int, int], int]:
    out: dict[tuple[int, int], int] = collections.Counter()
    for a, n in want.items():
        out[(a[0], a[2] if a[6] == "to_server" else a[4])] += n
    return out


def test_reference_holds_to_the_readme(edge: tuple[Path, Path, Path, collections.Counter[Alert]]) -> None:
    """The reference itself, on cases decided by the README's words."""
    want = edge[3]
    alerted = {a[0] for a in want}
    sids = {int(x) for x in __import__("re").findall(r"sid:(\d+)", RULES)}
    # every rule alerts but the noalert ones and those built to stay just outside:
    # a state never set (2034), a Cookie line looked for in http_header (2064), a
    # header in a request's second packet (2076), HTTP on UDP (2079), an option on
    # a buffer the packet lacks (2080)
    outside = {2034, 2064, 2076, 2079, 2080}
    assert alerted == sids - NOALERT - outside, (sorted(sids - NOALERT - outside - alerted),
                                                 sorted(alerted & outside))
    n = by_sid_port(want)
    # established only with the handshake seen, by client port
    assert n[(2001, 40001)] == 1 and n[(2001, 40002)] == 0 and n[(2001, 40003)] == 0
    assert n[(2001, 40004)] == 1 and n[(2001, 40005)] == 0 and n[(2001, 40006)] == 0
    assert n[(2003, 40001)] == 1  # the packet after the close starts a new flow
    assert n[(2003, 40004)] == 1  # and after the RST
    assert n[(2002, 40001)] == 1 and n[(2002, 40007)] == 1  # one FIN does not end the flow
    assert n[(2005, 40001)] == 1  # "hello" from the server
    # UDP: established from the reply on; the first sender is the client
    assert n[(2011, 5000)] == 2 and n[(2010, 5000)] == 3 and n[(2012, 5000)] == 1
    # the "pong" that starts flow 5001 comes from that flow's client
    assert sum(v for a, v in want.items() if a[0] == 2012) == 1
    # flowbits: CMD after USER (not before, not after QUIT or RESET), never on the other flow
    assert n[(2021, 40010)] == 1 and n[(2022, 40010)] == 3
    assert n[(2022, 40011)] == 1 and n[(2021, 40011)] == 1
    assert n[(2025, 40010)] == 1  # toggled on once, then off
    assert n[(2028, 40010)] == 1 and n[(2029, 40010)] == 2 and n[(2030, 40010)] == 2
    assert n[(2033, 40010)] == 1 and n[(2034, 40010)] == 0
    assert n[(2035, 40010)] == 2  # set and checked on the same packet: the setter first
    # the byte_* edges: one packet inside, the others outside (or two for string hex)
    for sid in (2040, 2041, 2042, 2043, 2045, 2046, 2047, 2048, 2049, 2050, 2051, 2052, 2053, 2054):
        assert n[(sid, 40020)] == 1, sid
    assert n[(2044, 40020)] == 1
    assert n[(2060, 40030)] == 5  # five spellings of /admin/x
    # urilen 6: /abcde, and /split of the request cut after its first packet
    assert n[(2066, 40030)] == 2 and n[(2067, 40030)] == 2 and n[(2073, 40030)] == 1
    assert n[(2068, 40030)] == 1 and n[(2069, 40030)] == 3 and n[(2075, 40030)] == 3
    assert n[(2003, 40002)] == 2 and n[(2006, 40001)] == 1 and n[(2006, 40007)] == 1
    assert n[(2064, 40030)] == 0  # the Cookie line is not in http_header
    assert n[(2076, 40030)] == 0 and n[(2077, 40030)] == 1 and n[(2078, 40030)] == 1
    partial = {a[0]: a[8] for a in want}
    assert partial[2007] and partial[2055] and partial[2082] and not partial[2001]
    mail = {(a[6], a[8]) for a in want if a[0] == 2081}
    assert mail == {("to_client", True)}  # not an HTTP response: partial on that packet


@pytest.mark.parametrize("engine", ["ac", "hs"])
def test_flow_edges_equal_reference(build_dir: Path, file_prefix: str, tmp_path: Path, engine: str,
                                    edge: tuple[Path, Path, Path, collections.Counter[Alert]]) -> None:
    rules, vars_, cap, want = edge
    log = tmp_path / "alerts.json"
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  ["--rules", str(rules), "--vars", str(vars_), "--alert-log", str(log), "--list-unsupported",
                   "--no-reassembly"] + (["--measure-cpu"] if engine == "hs" else []), variant=engine)
    assert_clean(run)
    app = run.stats["app_stats"]
    # --measure-cpu: the P thread's CPU time in its process step, per task and summed
    if engine == "hs":
        assert 0 < app["tasks"][0]["process_cpu_ns"] == app["process_cpu_ns"]
    else:
        assert "process_cpu_ns" not in app
    got = app_alerts(log)
    assert got == want, (f"app-only: {dict(got - want)}", f"reference-only: {dict(want - got)}")
    app = run.stats["app_stats"]
    assert app["verify_budget_exceeded"] == 0 and app["pcre_errors"] == 0
    assert app["flows"]["untracked"] == 0 and app["flows"]["evicted"] == 0
    # two TCP ends: the FINs of 40001 and the RST of 40004
    assert app["flows"]["ended"]["tcp_end"] == 2 and app["flowbits_states"] > 5
    assert app["noalert_matches"] > 10 and app["flows"]["flowbits_written_back"] > 10
    assert app["http"]["requests"] > 10 and app["http"]["responses"] >= 4
    assert app["http"]["extra_buffer_scans"] > 0  # normalised URIs, cookies taken out
    assert app["rules_partial_by_option"] == {"flow:only_stream": 1, "byte_test/dce": 1, "file_data/mail": 1}
    assert "sid 2007: partial: evaluated without flow:only_stream" in run.stderr
    assert app["alerts_partial_on_packet"] == 1


def broken_sessions() -> list[bytes]:
    """Sessions a real link delivers broken: handshakes out of order or torn,
    overlapping and repeated segments, HTTP cut anywhere, frames cut short."""
    out: list[bytes] = []
    t = Tcp(41001, 80)  # data, then the SYN, then a RST+ACK answer, then data again
    out += [t.pkt(True, b"GET /x HTTP/1.1\r\n\r\n"), t.pkt(True, flags=SYN), t.pkt(False, flags=RST | ACK),
            t.pkt(True, b"GET /x HTTP/1.1\r\n\r\n")]
    t = Tcp(41002, 80)  # repeated SYNs and SYN+ACKs, a FIN on a flow that never was
    out += [t.pkt(True, flags=SYN), t.pkt(True, flags=SYN), t.pkt(False, flags=SYN | ACK),
            t.pkt(False, flags=SYN | ACK), t.pkt(True, flags=ACK)]
    out += [Tcp(41003, 80).pkt(False, flags=FIN | ACK)]
    t = Tcp(41004, 80)  # overlapping segments: same sequence numbers, other bytes
    out += t.handshake()
    seq = t.seq[0]
    a = pcapgen.frame(t.c, b"GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", ACK | PSH, seq, t.seq[1])
    b = pcapgen.frame(t.c, b"GET /../../admin/x HTTP/1.1\r\nX-Evil: 1\r\n\r\n", ACK | PSH, seq, t.seq[1])
    c = pcapgen.frame(t.c, b"/etc/passwd HTTP/1.1\r\n\r\n", ACK | PSH, seq + 4, t.seq[1])
    out += [a, b, c, a]
    t = Tcp(41005, 80)  # HTTP cut in every place
    out += t.handshake()
    for p in (b"GET", b"GET ", b"GET /abc", b"GET /abc HTTP/1.", b"GET /abc HTTP/1.1", b"GET /abc HTTP/1.1\r",
              b"GET /abc HTTP/1.1\r\nHost: x\r", b"GET /%", b"GET /%u00 HTTP/1.1\r\n", b"HTTP/1.1 2",
              b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK\r\nSet-Cookie:", b"POST / HTTP/1.1\r\n\r\n", b""):
        out.append(t.pkt(True, p))
    # frames cut short: the IPv4 total length runs past the frame, a TCP data
    # offset past the segment, an IHL below 5
    full = Tcp(41006, 80).pkt(True, b"GET /cut HTTP/1.1\r\n\r\n")
    out += [full[:40], full[:54], full[:60]]
    bad = bytearray(full)
    bad[46] = 0xF0  # data offset 15 words: past the segment
    out.append(bytes(bad))
    bad = bytearray(full)
    bad[14] = 0x44  # IHL 4
    out.append(bytes(bad))
    return out


def test_broken_sessions_every_packet_accounted(build_dir: Path, file_prefix: str, tmp_path: Path,
                                                shared_dir: Path) -> None:
    """No crash and no sanitizer report (the suite runs the ASan+UBSan build),
    every packet received and scanned or counted unscanned by reason, and the
    same alerts as the reference, on broken sessions with the community rules
    and with the edge rules."""
    frames = broken_sessions()
    cap = tmp_path / "broken.pcap"
    pcapgen.write_pcap(cap, frames)
    community = tmp_path / "community.rules"
    keep = []
    for text in ref.rule_lines(shared_dir / "data" / "snort" / "community.rules"):
        try:
            ref.parse_rule(text)
        except ref.Unusable:
            continue
        keep.append(text)
    community.write_text("\n".join(keep) + "\n", encoding="latin-1")
    vars_ = tmp_path / "vars.conf"
    vars_.write_text(COMMUNITY_VARS)
    for rules in (community, tmp_path / "edge.rules"):
        if rules.name == "edge.rules":
            rules.write_text(RULES)
            vars_.write_text(VARS)
        ev = ref.Evaluator([ref.parse_rule(t) for t in ref.rule_lines(rules)], ref.read_vars(vars_))
        want = reference_alerts(ev, cap)
        log = tmp_path / f"{rules.stem}.json"
        run = run_app(build_dir, file_prefix, tmp_path, [cap],
                      ["--rules", str(rules), "--vars", str(vars_), "--alert-log", str(log), "--no-reassembly"],
                      variant="hs")
        assert_clean(run)
        s, app = run.stats, run.stats["app_stats"]
        assert s["accounting_ok"] is True and s["total"]["rx_packets"] == len(frames)
        assert s["total"]["tx_packets"] == len(frames)
        scanned = sum(1 for f in frames if ref.payload_of(f) is not None)
        assert app["packets_scanned"] == scanned == app["flows"]["lookups"]
        assert app["packets_scanned"] + sum(app["packets_unscanned"].values()) == len(frames)
        assert app["packets_unscanned"]["truncated"] >= 3 and app["packets_unscanned"]["bad_header"] >= 1
        got = app_alerts(log)
        assert got == want, (f"app-only: {dict(got - want)}", f"reference-only: {dict(want - got)}")
    assert sum(want.values()) > 0, "the edge rules should alert on some broken packet"


def test_stateless_is_rules_mode_without_flows(build_dir: Path, file_prefix: str, tmp_path: Path,
                                               edge: tuple[Path, Path, Path, collections.Counter[Alert]]) -> None:
    """--stateless (the benchmark's baseline): no flow table, no HTTP buffers;
    the options that need them are left out and their rules are partial."""
    rules, vars_, cap, want = edge
    log = tmp_path / "alerts.json"
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  ["--rules", str(rules), "--vars", str(vars_), "--alert-log", str(log), "--stateless"])
    assert_clean(run)
    app = run.stats["app_stats"]
    assert app["stateless"] is True and "flows" not in app and "http" not in app
    left = app["rules_partial_by_option"]
    assert left["flow"] >= 10 and left["flowbits"] >= 10 and left["http_uri"] >= 3 and left["byte_test"] >= 5
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines and all("direction" not in x and "flow_state" not in x for x in lines)
    # 2003 (not_established) alerts on every "hello" without its flow option
    hellos = sum(1 for f in sessions() if (p := ref.payload_of(f)) is not None and b"hello" in p.payload)
    assert sum(1 for x in lines if x["alert"]["signature_id"] == 2003) == hellos
    assert "rules mode (--stateless):" in run.stderr


@pytest.mark.parametrize("engine", ["ac", "hs"])
def test_flow_edges_with_reassembly(build_dir: Path, file_prefix: str, tmp_path: Path, engine: str,
                                    edge: tuple[Path, Path, Path, collections.Counter[Alert]]) -> None:
    """The default: the same sessions with TCP reassembly.  Every segment is
    in order, so each packet is judged as before, except that
    flow:only_stream rules (now exact, not partial) judge PDUs only; the
    PDUs add the alerts of what packets split (a request's header in its
    second packet), never again one a packet of the PDU raised, never a
    no_stream or dsize rule; and they are ac-ids's."""
    from test_ahocorasick_rules import ids_alerts, with_stream
    rules, vars_, cap, _ = edge
    ev = ref.Evaluator([ref.parse_rule(t) for t in ref.rule_lines(rules)], ref.read_vars(vars_), streams=True)
    want_raw = reference_alerts(ev, cap)
    log = tmp_path / "alerts.json"
    n = sum(1 for _ in RawPcapReader(str(cap)))
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  ["--rules", str(rules), "--vars", str(vars_), "--alert-log", str(log), "--packets", str(n)],
                  variant=engine, duration=None, timeout=300)
    assert_clean(run)
    app = run.stats["app_stats"]
    got = with_stream(log)
    raw = collections.Counter({a[1:10]: n for a, n in got.items() if not a[10]})
    assert raw == want_raw, (f"app-only: {dict(raw - want_raw)}", f"reference-only: {dict(want_raw - raw)}")
    pdu = collections.Counter()
    for a, n in got.items():
        if a[10]:
            pdu[a[1]] += n
    assert pdu[2007] >= 2 and not any(a[9] for a in got if a[1] == 2007)  # only_stream: on PDUs, exact
    assert pdu[2076] == 1  # the header in the request's second packet: its PDU has it
    assert pdu[2006] == pdu[2052] == pdu[2053] == 0  # no_stream, dsize: packets only
    assert pdu[2001] == 0  # "hello" alerted on its packet: not again on the PDU
    assert app["rules_partial_by_option"] == {"byte_test/dce": 1, "file_data/mail": 1}
    assert app["stream"]["dedup_skipped"] > 0 and app["ttl_insertions"] == 0
    assert got == ids_alerts(build_dir, rules, vars_, cap, engine, tmp_path)
