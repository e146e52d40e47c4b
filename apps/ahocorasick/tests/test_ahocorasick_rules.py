"""Rules mode end to end, under whatever build PIPEPLACE_BUILD points at.

The app's alerts on single packets (--no-reassembly) are checked against
rule_reference.py, a brute-force evaluator written apart from the C code
(every rule on every packet, with flows and flowbits carried from packet to
packet), for both engines: on every shared capture joined into one (those
holding TCP sessions and HTTP among them, IPv6 too) with the community
rules, and on generated traffic with planted matches for the position
modifiers' edge cases (the flow, flowbits, HTTP and byte_* edges are in
test_ahocorasick_flows.py).  With reassembly (the default) the app must
raise exactly the alerts of ac-ids (the engine without DPDK, which the
evasion suite and the tshark comparison hold to account: ids/tests/) on
the same captures.  Then every shared capture goes through the app in
rules mode with every packet accounted for, and the parser's errors are
checked."""
from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ac_run import (COMMUNITY_VARS, MAX_CAPTURES_PER_RUN, assert_clean, captures, joined_captures, packet_counts, read_frames,
                    run_app, small_capture, tool)

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import pcapgen  # noqa: E402
import rule_reference as ref  # noqa: E402

RULES = ["--mode", "rules", "--no-reassembly"]
VARS = COMMUNITY_VARS
# (sid, src, sport, dst, dport, proto, direction, flow_state, partial)
Alert = tuple[int, str, int, str, int, str, str, str, bool]


def ip(x: int) -> str:
    return ref.addr_str(x)


def reference_alerts(ev: ref.Evaluator, files: list[Path]) -> collections.Counter[Alert]:
    """Every packet of files in order through one evaluator (one flow table)."""
    out: collections.Counter[Alert] = collections.Counter()
    for f in files:
        for fr in read_frames(f):
            p = ref.payload_of(fr)
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
        assert e["event_type"] == "alert" and e["timestamp"].endswith("+0000")
        out[(e["alert"]["signature_id"], e["src_ip"], e["src_port"], e["dest_ip"], e["dest_port"],
             e["proto"], e["direction"], e["flow_state"], e["alert"]["partial"])] += 1
    return out


def usable_rules(src: Path, dst: Path) -> list[ref.Rule]:
    """The rules the reference reads the way the app does (a few pcres use
    syntax or flags Python's re has not got), written to dst for the app."""
    keep, rules = [], []
    for text in ref.rule_lines(src):
        try:
            r = ref.parse_rule(text)
        except ref.Unusable:
            continue
        keep.append(text)
        rules.append(r)
    dst.write_text("\n".join(keep) + "\n", encoding="latin-1")
    return rules


@pytest.fixture(scope="module")
def community(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> tuple[Path, Path, list[ref.Rule]]:
    d = tmp_path_factory.mktemp("community")
    rules_file, vars_file = d / "community.rules", d / "vars.conf"
    rules = usable_rules(shared_dir / "data" / "snort" / "community.rules", rules_file)
    assert len(rules) > 3990
    vars_file.write_text(VARS)
    return rules_file, vars_file, rules


@pytest.fixture(scope="module")
def shared_joined(tmp_path_factory: pytest.TempPathFactory, build_dir: Path, shared_dir: Path,
                  community: tuple[Path, Path, list[ref.Rule]]) -> tuple[Path, collections.Counter[Alert]]:
    """Every shared capture joined into one, and the reference's alerts on it."""
    joined = tmp_path_factory.mktemp("shared") / "all.pcap"
    counts = joined_captures(build_dir, captures(shared_dir), joined)
    frames = read_frames(joined)
    assert len(frames) == sum(n for n in counts.values() if n > 0)
    # what the check covers, by property: TCP sessions with their handshake,
    # HTTP requests and responses, UDP flows both ways
    ev = ref.Evaluator(community[2], ref.read_vars(community[1]))
    seen = collections.Counter()
    for fr in frames:
        p = ref.payload_of(fr)
        if p is None:
            continue
        _flow, _client, established = ev.track(p)
        ev.end_flow(p)
        bufs = ref.http_buffers(p.payload, p.proto == 6)
        seen["tcp_established" if p.proto == 6 and established else "tcp" if p.proto == 6 else "udp"] += 1
        seen["http_request"] += "http_method" in bufs
        seen["http_response"] += "http_stat_code" in bufs
    assert seen["tcp_established"] > 50 and seen["tcp"] > 100 and seen["udp"] > 100, seen
    assert seen["http_request"] >= 2 and seen["http_response"] >= 2, seen
    ev = ref.Evaluator(community[2], ref.read_vars(community[1]))
    return joined, reference_alerts(ev, [joined])


@pytest.mark.parametrize("engine", ["ac", "hs"])
def test_alerts_equal_reference_on_shared_captures(build_dir: Path, file_prefix: str, tmp_path: Path,
                                                   community: tuple[Path, Path, list[ref.Rule]],
                                                   shared_joined: tuple[Path, collections.Counter[Alert]],
                                                   engine: str) -> None:
    rules_file, vars_file, _ = community
    joined, want = shared_joined
    log = tmp_path / "alerts.json"
    run = run_app(build_dir, file_prefix, tmp_path, [joined],
                  RULES + ["--rules", str(rules_file), "--vars", str(vars_file), "--alert-log", str(log),
                           "--top", "0"], variant=engine)
    assert_clean(run)
    app = run.stats["app_stats"]
    assert app["mode"] == "rules" and app["engine"] == engine
    if engine == "ac":
        # the whole set's full table (tens of MB) exceeds any L2: auto takes the compact layout
        assert app["ac_layout"] == "compact" and app["ac_full_table_bytes"] > app["ac_layout_budget_bytes"]
        assert app["engine_bytes"] < app["ac_full_table_bytes"] / 4
    got = app_alerts(log)
    assert sum(want.values()) > 100, "the captures should raise alerts"
    assert {a[7] for a in want} == {"established", "not_established"}
    assert got == want, (f"app-only: {dict(got - want)}", f"reference-only: {dict(want - got)}")
    by_sid = collections.Counter()
    for a, n in want.items():
        by_sid[str(a[0])] += n
    assert app["alerts_by_sid"] == dict(by_sid)
    assert app["alerts"] == sum(want.values()) == app["alerts_logged"]
    assert app["alerts_log_dropped"] == 0 and app["pcre_errors"] == 0 and app["verify_budget_exceeded"] == 0
    assert app["flows"]["untracked"] == 0 and app["flows"]["ended"]["tcp_end"] > 5


def ids_alerts(build_dir: Path, rules: Path, vars_: Path, cap: Path, engine: str,
               tmp: Path) -> collections.Counter[tuple]:
    """ac-ids's alerts (no flow or fragment timeout: the app's clock is
    not the capture's)."""
    log = tmp / f"ids-{engine}.json"
    subprocess.run([str(tool(build_dir, "ac-ids")), "--rules", str(rules), "--vars", str(vars_), "--engine",
                    engine, "--alerts", str(log), "--flow-timeout", "0", "--frag-timeout", "86400",
                    str(cap)], check=True, capture_output=True, timeout=600)
    return with_stream(log)


def with_stream(log: Path) -> collections.Counter[tuple]:
    out: collections.Counter[tuple] = collections.Counter()
    for line in log.read_text().splitlines():
        e = json.loads(line)
        out[(e["alert"]["gid"], e["alert"]["signature_id"], e["src_ip"], e["src_port"], e["dest_ip"],
             e["dest_port"], e["proto"], e.get("direction"), e.get("flow_state"), e["alert"]["partial"],
             e["stream"])] += 1
    return out


@pytest.mark.parametrize("engine", ["ac", "hs"])
def test_with_reassembly_the_app_is_the_engine(build_dir: Path, file_prefix: str, tmp_path: Path,
                                                community: tuple[Path, Path, list[ref.Rule]],
                                                shared_joined: tuple[Path, collections.Counter[Alert]],
                                                engine: str) -> None:
    """The default (defragmentation, TCP reassembly): the app's alerts are
    ac-ids's, on packets and on rebuilt PDUs alike."""
    rules_file, vars_file, _ = community
    joined, _want = shared_joined
    log = tmp_path / "alerts.json"
    n = len(read_frames(joined))  # every frame in, however loaded the machine
    run = run_app(build_dir, file_prefix, tmp_path, [joined],
                  ["--rules", str(rules_file), "--vars", str(vars_file), "--alert-log", str(log), "--top", "0",
                   "--packets", str(n)], variant=engine, duration=None, timeout=600)
    assert_clean(run)
    app = run.stats["app_stats"]
    got, want = with_stream(log), ids_alerts(build_dir, rules_file, vars_file, joined, engine, tmp_path)
    assert got == want, (f"app-only: {dict(got - want)}", f"ac-ids-only: {dict(want - got)}")
    assert sum(got.values()) > 100
    # the PDUs were judged too (what they found had been found on their packets)
    assert app["reassembly"] is True and app["stream"]["pdus"] > 50 and app["stream"]["shed"] == 0
    assert app["stream"]["dedup_skipped"] > 0
    assert app["alerts_log_dropped"] == 0


# --- planted edge cases ---------------------------------------------------------------
EDGE_RULES = r"""
alert tcp any any -> any 80 (msg:"offset depth window"; content:"ABCD"; offset:2; depth:6; sid:1001; rev:1;)
alert tcp any any -> any 80 (msg:"distance within"; content:"XY"; content:"ZW"; distance:3; within:4; sid:1002; rev:2;)
alert tcp any any -> any 80 (msg:"negative distance"; content:"MNOP"; content:"NO"; distance:-3; within:2; sid:1003; rev:1;)
alert tcp any any -> any 80 (msg:"nocase"; content:"HeLLo"; nocase; sid:1004; rev:1; classtype:misc-activity;)
alert tcp any any -> any 80 (msg:"negation"; content:"GET "; depth:4; content:!"admin"; sid:1005; rev:1;)
alert tcp any any -> any 80 (msg:"relative negation"; content:"key="; content:!"secret"; distance:0; within:6; sid:1006; rev:1;)
alert tcp any any -> any 80 (msg:"backtrack"; content:"ab"; content:"cd"; distance:0; within:2; sid:1007; rev:1;)
alert tcp any any -> any 80 (msg:"fast pattern only"; content:"QQQQ"; fast_pattern:only; content:"rr"; depth:2; sid:1008; rev:1;)
alert tcp any any -> any 80 (msg:"fast pattern chosen"; content:"long-content"; content:"fp"; fast_pattern; sid:1009; rev:1;)
alert tcp any any -> any 80 (msg:"pcre"; content:"user"; pcre:"/user=[a-z]{3}\d+/i"; sid:1010; rev:1;)
alert tcp any any -> any 80 (msg:"negated pcre"; content:"pw="; pcre:!"/pw=\d+/"; sid:1011; rev:1;)
alert tcp any any -> any 80 (msg:"anchored pcre"; pcre:"/^START/A"; sid:1012; rev:1;)
alert udp $HOME_NET any -> $EXTERNAL_NET 53 (msg:"header vars"; content:"dnsq"; sid:1013; rev:1;)
alert tcp any [1000:2000,!1500] <> any 80 (msg:"bidirectional ports"; content:"both"; sid:1014; rev:1;)
alert tcp any any -> any 80 (msg:"left out"; detection_filter:track by_src, count 2, seconds 60; content:"partial!"; sid:1015; rev:1;)
alert icmp any any -> any any (msg:"icmp disabled"; content:"ping"; sid:1016; rev:1;)
alert tcp any any -> any 80 (msg:"within from end"; content:"AA"; depth:2; content:"BB"; within:3; sid:1017; rev:1;)
alert tcp any any -> any 80 (msg:"depth exact"; content:"EDGE"; offset:4; depth:4; sid:1018; rev:1;)
"""


def edge_payloads() -> list[tuple[int, int, bytes]]:
    """(sport, dport, payload): each edge case just inside and just outside."""
    return [
        (1234, 80, b"xxABCDyy"), (1234, 80, b"xxxABCDy"), (1234, 80, b"xABCD"),
        (1234, 80, b"XY...ZW"), (1234, 80, b"XY......ZW"), (1234, 80, b"XY..ZW"), (1234, 80, b"XY...xZW"),
        (1234, 80, b"MNOP"), (1234, 80, b"MNO-NO"),
        (1234, 80, b"say hello"), (1234, 80, b"HELLO"), (1234, 80, b"HELL0"),
        (1234, 80, b"GET /index"), (1234, 80, b"GET /admin"), (1234, 80, b" GET /"),
        (1234, 80, b"key=public"), (1234, 80, b"key=secret"), (1234, 80, b"key=xsecret"),
        (1234, 80, b"ab..abcd"), (1234, 80, b"ab..ab.cd"), (1234, 80, b"abxcd"),
        (1234, 80, b"rr then QQQQ"), (1234, 80, b"xrr QQQQ"), (1234, 80, b"rr QQQ"),
        (1234, 80, b"fp long-content"), (1234, 80, b"fp only"),
        (1234, 80, b"user=abc123"), (1234, 80, b"USER=ABC9"), (1234, 80, b"user=ab1"),
        (1234, 80, b"pw=abc"), (1234, 80, b"pw=123"),
        (1234, 80, b"START here"), (1234, 80, b" START"),
        (1500, 80, b"both"), (1400, 80, b"both"), (80, 1400, b"both"), (80, 1500, b"both"), (80, 99, b"both"),
        (1234, 80, b"partial!"), (1234, 80, b"ping"),
        (1234, 80, b"AAxBB"), (1234, 80, b"AAxxBB"), (1234, 80, b"xAABB"),
        (1234, 80, b"1234EDGE"), (1234, 80, b"123EDGE"), (1234, 80, b"12345EDGE"),
    ]


def edge_capture(path: Path) -> None:
    frames = []
    for sport, dport, payload in edge_payloads():
        flow = pcapgen.Flow(pcapgen.ipv4(0x0A000001), pcapgen.ipv4(0x08080808), pcapgen.PROTO_TCP, sport, dport)
        frames.append(pcapgen.frame(flow, payload))
    for src, payload in ((0x0A000002, b"dnsq"), (0x08080404, b"dnsq")):  # inside / outside HOME_NET
        frames.append(pcapgen.frame(pcapgen.Flow(pcapgen.ipv4(src), pcapgen.ipv4(0x01010101),
                                                 pcapgen.PROTO_UDP, 5353, 53), payload))
    pcapgen.write_pcap(path, frames)


@pytest.mark.parametrize("engine", ["ac", "hs", "ac-compact"])
def test_alerts_equal_reference_on_planted_edge_cases(build_dir: Path, file_prefix: str, tmp_path: Path,
                                                      engine: str) -> None:
    rules_file, vars_file, cap = tmp_path / "edge.rules", tmp_path / "vars.conf", tmp_path / "edge.pcap"
    rules_file.write_text(EDGE_RULES)
    vars_file.write_text(VARS)
    edge_capture(cap)
    ev = ref.Evaluator([ref.parse_rule(t) for t in ref.rule_lines(rules_file)], ref.read_vars(vars_file))
    want = reference_alerts(ev, [cap])
    # the edge cases are decided both ways: each sid but the disabled icmp one alerts,
    # and there are packets that miss each sid's window
    assert {a[0] for a in want} == set(range(1001, 1016)) | {1017, 1018}
    log = tmp_path / "alerts.json"
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  RULES + ["--rules", str(rules_file), "--vars", str(vars_file), "--alert-log", str(log),
                           "--list-unsupported"] + (["--ac-layout", "compact"] if engine == "ac-compact" else []),
                  variant=engine.split("-")[0])
    assert_clean(run)
    assert app_alerts(log) == want
    app = run.stats["app_stats"]
    if engine.startswith("ac"):
        # a few patterns: auto's table fits any L2; --ac-layout compact forces the other
        assert app["ac_layout"] == ("compact" if engine == "ac-compact" else "full")
    assert app["rules_disabled"] == 1 and app["rules_partial"] == 1
    assert app["rules_partial_by_option"] == {"detection_filter": 1}
    assert "sid 1016: disabled: icmp rule" in run.stderr
    assert "sid 1015: partial: evaluated without detection_filter" in run.stderr
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    partial = {x["alert"]["signature_id"]: x["alert"]["partial"] for x in lines}
    assert partial[1015] is True and partial[1001] is False
    e = next(x for x in lines if x["alert"]["signature_id"] == 1004)
    assert e["alert"]["signature"] == "nocase" and e["alert"]["category"] == "misc-activity"
    assert e["alert"]["rev"] == 1 and e["src_ip"] == "10.0.0.1" and e["dest_port"] == 80


def test_an_alert_log_that_cannot_take_the_alerts_fails_the_run(build_dir: Path, file_prefix: str,
                                                                 tmp_path: Path) -> None:
    # /dev/full opens and fails every write (a disk that filled during the run): the alerts
    # are still counted in the statistics, and the exit status is 1, so that a script does
    # not take the log as whole
    rules_file, vars_file, cap = tmp_path / "edge.rules", tmp_path / "vars.conf", tmp_path / "edge.pcap"
    rules_file.write_text(EDGE_RULES)
    vars_file.write_text(VARS)
    edge_capture(cap)
    run = run_app(build_dir, file_prefix, tmp_path, [cap],
                  RULES + ["--rules", str(rules_file), "--vars", str(vars_file), "--alert-log", "/dev/full"])
    assert run.rc == 1, run.stderr[-3000:]
    assert not run.sanitizer_reports(), run.stderr[-3000:]
    assert run.stats is not None and run.stats["accounting_ok"] is True
    assert run.stats["app_stats"]["alerts"] > 0
    assert "--alert-log '/dev/full': cannot write: No space left on device; the log is incomplete" \
        in run.stderr, run.stderr[-3000:]


def test_on_alert_drop_drops_alerted_packets(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    rules_file, cap = tmp_path / "edge.rules", tmp_path / "edge.pcap"
    rules_file.write_text(EDGE_RULES)
    edge_capture(cap)
    run = run_app(build_dir, file_prefix, tmp_path, [cap], RULES + ["--rules", str(rules_file), "--on-alert", "drop"],
                  variant="hs")
    assert_clean(run)
    app, total = run.stats["app_stats"], run.stats["total"]
    assert app["packets_alerted"] > 10
    assert total["dropped_by_reason"]["rule_alert"] == app["packets_alerted"]
    assert total["tx_packets"] == total["rx_packets"] - app["packets_alerted"]


# --- every shared capture ---------------------------------------------------------
N_CHUNKS = 14


@pytest.mark.parametrize("k", range(N_CHUNKS))
def test_every_capture_through_app_in_rules_mode(build_dir: Path, shared_dir: Path, file_prefix: str,
                                                 tmp_path: Path, k: int) -> None:
    files = captures(shared_dir)
    assert len(files) <= N_CHUNKS * MAX_CAPTURES_PER_RUN
    files = files[k * MAX_CAPTURES_PER_RUN:(k + 1) * MAX_CAPTURES_PER_RUN]
    variant = "ac" if k % 2 == 0 else "hs"
    run = run_app(build_dir, file_prefix, tmp_path, files,
                  ["--on-alert", ["forward", "drop", "mark"][k % 3], "--alert-log", str(tmp_path / "a.json")],
                  variant=variant)
    assert_clean(run)
    s, app = run.stats, run.stats["app_stats"]
    total = s["total"]
    assert app["mode"] == "rules", "rules mode is the default"
    assert s["accounting_ok"] is True
    expect = packet_counts(build_dir, files)
    for i, f in enumerate(files):
        assert s["instances"][i]["rx_packets"] == max(expect[f], 0), f.name
    assert app["packets_scanned"] + sum(app["packets_unscanned"].values()) == total["rx_packets"]
    assert sum(app["alerts_per_packet_histogram"].values()) == app["packets_scanned"]
    assert app["engine_scan_errors"] == 0
    assert app["alerts"] == sum(app["alerts_by_sid"].values())
    assert app["alerts_log_enqueued"] + app["alerts_log_dropped"] == app["alerts"]
    logged = len((tmp_path / "a.json").read_text().splitlines())
    assert logged == app["alerts_log_enqueued"]
    assert total["dropped_by_reason"].get("rule_alert", 0) == (app["packets_alerted"] if k % 3 == 1 else 0)


# --- rule parser errors for the new options -------------------------------------------
@pytest.mark.parametrize("option, message", [
    ('content:"abc"; fast_pattern:sometimes;', "bad fast_pattern value 'sometimes'"),
    ('content:"abc"; fast_pattern:2,5;', "bad fast_pattern value '2,5'"),
    ('fast_pattern; content:"abc";', "'fast_pattern' before any content"),
    ('content:"abc"; offset:x-1;', "bad offset value 'x-1'"),
    ('content:"abc"; depth:;', "bad depth value ''"),
    ('content:"abc"; distance:99999999;', "bad distance value '99999999'"),
    ('content:"abc"; within:1.5;', "bad within value '1.5'"),
    ('pcre:"abc";', "pcre value not \"/regex/flags\""),
    ('pcre:"/abc/Z";', "unknown pcre flag 'Z'"),
    ('pcre:"/abc";', "pcre has no closing '/'"),
    ('pcre:"//i";', "empty pcre expression"),
    ('msg:unquoted;', "msg value not in double quotes"),
    ('http_uri; content:"abc";', "'http_uri' before any content"),
    ('content:"abc"; byte_test:2,~,1,0;', "bad byte_test operator '~'"),
    ('content:"abc"; byte_test:5,>,1,0;', "byte_test '5,>,1,0': more than 4 bytes need 'string'"),
    ('content:"abc"; byte_jump:4,0,sideways;', "unknown byte_jump argument 'sideways'"),
    ('content:"abc"; byte_test:1,>,n,0;', "byte_test value 'n' is neither a number nor a byte_extract variable"),
    ('content:"abc"; distance:len;', "distance names 'len', no byte_extract variable defined before it"),
    ('content:"abc"; isdataat:70000;', "bad isdataat location '70000'"),
    ('content:"abc"; flow:to_server,to_client;', "contradictory flow arguments 'to_server,to_client'"),
    ('content:"abc"; flow:sideways;', "unknown flow argument 'sideways'"),
    ('content:"abc"; flowbits:set,a|b;', "bad flowbits value 'set,a|b'"),
    ('content:"abc"; flowbits:setx,a;', "bad flowbits value 'setx,a'"),
    ('content:"abc"; flowbits:frob,a;', "unknown flowbits command in 'frob,a'"),
    ('content:"abc"; dsize:5<>;', "bad size range '5<>'"),
    ('content:"abc"; urilen:5,cooked;', "bad urilen buffer 'cooked'"),
    ('content:"abc"; pcre:"/a/UH";', "pcre flags name two buffers"),
])
def test_rule_option_errors_name_file_line_and_option(build_dir: Path, tmp_path: Path, option: str,
                                                      message: str) -> None:
    rules = tmp_path / "bad.rules"
    rules.write_text('alert tcp any any -> any any (content:"ok"; sid:1;)\n\n'
                     f'alert tcp any any -> any any ({option} sid:2;)\n')
    r = subprocess.run([str(tool(build_dir, "ac-rules")), "--rules", str(rules), "--list-skipped"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{rules}:3: malformed: {message}" in r.stderr, r.stderr


@pytest.mark.parametrize("rule, message", [
    ('alert tcp $NOPE any -> any any (content:"abc"; sid:7;)', "sid 7: disabled: unknown variable '$NOPE'"),
    ('alert tcp any any -> any 99999 (content:"abc"; sid:7;)', "sid 7: disabled: bad port '99999'"),
    ('alert tcp 10.0.0.300 any -> any any (content:"abc"; sid:7;)', "sid 7: disabled: bad address '10.0.0.300'"),
    ('alert tcp any any -> any any (pcre:"/a(b/"; sid:7;)', "sid 7: disabled: pcre \"/a(b/\" does not compile"),
    ('alert tcp any any -> any any (flow:established; detection_filter:track by_src, count 2, seconds 9; sid:7;)',
     "sid 7: disabled: nothing left to evaluate (no content, no usable pcre; cannot evaluate: detection_filter)"),
    ('alert tcp any any -> any any (content:"abc"; byte_test:4,>,1,0,relative,dce; asn1:oversize_length 9; sid:7;)',
     "sid 7: partial: evaluated without byte_test/dce,asn1"),
    ('alert tcp any any -> any any (flow:to_server,established,only_stream; content:"abc"; sid:7;)',
     "sid 7: partial: evaluated without flow:only_stream"),
    ('alert tcp any any -> any 25 (flow:to_server; file_data; content:"MZ"; metadata:service smtp; sid:7;)',
     "sid 7: partial: evaluated without file_data/mail"),
])
def test_rules_the_app_cannot_evaluate_are_listed(build_dir: Path, file_prefix: str,
                                                  tmp_path: Path, rule: str, message: str) -> None:
    rules = tmp_path / "r.rules"
    rules.write_text('alert tcp any any -> any any (content:"ok"; sid:1;)\n' + rule + "\n")
    src = small_capture(tmp_path / "small.pcap")
    # flow:only_stream is partial only without reassembly (with it, exact)
    extra = ["--no-reassembly"] if "only_stream" in rule else []
    run = run_app(build_dir, file_prefix, tmp_path, [src], ["--rules", str(rules), "--list-unsupported", *extra])
    assert_clean(run)
    assert f"{rules}:2: {message}" in run.stderr, run.stderr[-3000:]
    assert "rules mode: 1 rules enabled" in run.stderr or "rules mode: 2 rules enabled" in run.stderr
    if extra:
        run = run_app(build_dir, file_prefix, tmp_path, [src], ["--rules", str(rules), "--list-unsupported"])
        assert_clean(run)
        assert f"{rules}:2:" not in run.stderr and run.stats["app_stats"]["rules_partial"] == 0


@pytest.mark.parametrize("args, message", [
    (["--mode", "fast"], "--mode 'fast': expected rules or keywords"),
    (["--ac-layout", "tiny"], "--ac-layout 'tiny': expected auto, full or compact"),
    (["--on-alert", "explode"], "--on-alert 'explode': expected forward, drop or mark"),
    (["--vars", "/nonexistent/vars.conf"], "--vars: cannot read '/nonexistent/vars.conf'"),
    (["--scan-all-frames"], "--scan-all-frames is for --mode keywords only"),
    (["--mode", "keywords", "--alert-log", "/tmp/x"], "are for --mode rules only"),
    (["--mode", "keywords", "--stateless"], "are for --mode rules only"),
    (["--max-flows", "0"], "--max-flows '0'"),
    (["--max-flows", "16777217"], "--max-flows '16777217'"),
    (["--flow-timeout", "soon"], "--flow-timeout 'soon'"),
    (["--stateless", "--max-flows", "5"], "--max-flows and --flow-timeout need flows; --stateless has none"),
])
def test_bad_rules_mode_options_are_refused(build_dir: Path, file_prefix: str,
                                            tmp_path: Path, args: list[str], message: str) -> None:
    src = small_capture(tmp_path / "small.pcap")
    run = run_app(build_dir, file_prefix, tmp_path, [src], args)
    assert run.returncode != 0
    assert message in run.stderr, run.stderr[-3000:]


def test_bad_vars_file_line_is_named(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    v = tmp_path / "vars.conf"
    v.write_text("ipvar HOME_NET any\nportvar\n")
    src = small_capture(tmp_path / "small.pcap")
    run = run_app(build_dir, file_prefix, tmp_path, [src], ["--vars", str(v)])
    assert run.returncode != 0
    assert f"{v}:2: bad variable name" in run.stderr, run.stderr[-3000:]


def test_a_deployed_binary_finds_its_rules_or_says_which_option(build_dir: Path, shared_dir: Path,
                                                                  tmp_path: Path) -> None:
    """No path of the build machine inside: a copy of the binary away from
    its build tree finds no rules and exits 2 naming --rules and
    PIPEPLACE_RULES; PIPEPLACE_RULES gives them; in its build tree it finds
    ../shared beside the source tree."""
    src = tool(build_dir, "ac-rules")
    assert str(shared_dir).encode() not in src.read_bytes()
    # seven directories down: the binary looks for ../shared beside its six nearest ancestors, and those
    # then all lie inside tmp_path (a shared/ beside the temporary directory's root, as a clone in /tmp
    # with ../shared has, would otherwise be found)
    copy = tmp_path.joinpath(*"abcdefg") / "ac-rules"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(src.read_bytes())
    copy.chmod(0o755)
    env = {k: v for k, v in __import__("os").environ.items() if k != "PIPEPLACE_RULES"}
    r = subprocess.run([str(copy)], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "--rules FILE" in r.stderr and "PIPEPLACE_RULES" in r.stderr, r.stderr
    rules = shared_dir / "data" / "snort" / "community.rules"
    r = subprocess.run([str(copy)], capture_output=True, text=True, env={**env, "PIPEPLACE_RULES": str(rules)})
    assert r.returncode == 0 and str(rules) in r.stderr
    r = subprocess.run([str(copy)], capture_output=True, text=True,
                       env={**env, "PIPEPLACE_RULES": str(tmp_path / "none.rules")})
    assert r.returncode == 2 and "PIPEPLACE_RULES" in r.stderr and "none.rules" in r.stderr
    r = subprocess.run([str(src)], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "community.rules" in r.stderr
