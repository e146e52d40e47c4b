"""Profiles (JSON) and flags: a two-stream profile does what it says, flags
override it, and every bad value is refused naming the file and the field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader

from tgen_harness import run_tgen


def test_two_stream_profile_with_flag_override(build_dir: Path, file_prefix: str,
                                               tmp_path: Path) -> None:
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({
        "packets": 4,
        "streams": [
            {"name": "dns", "dport": 53, "size": 64, "payload": ["ab", "\\x01"]},
            {"name": "web", "dport": "8000-8001", "size": "128", "proto": "udp", "ttl": 3,
             "payload": ["GET ", "/x"]},
        ]}))
    out = tmp_path / "out.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--profile", str(prof), "--src-ip", "10.7.7.7"])
    r.assert_clean()
    names = {s["name"]: s for s in r.stats["streams"]}
    assert set(names) == {"dns", "web"} and all(s["tx_packets"] == 4 for s in names.values())
    pk = [Ether(bytes(d)) for d, _ in RawPcapReader(str(out))]
    assert len(pk) == 8
    assert all(p[IP].src == "10.7.7.7" for p in pk)  # the flag applies to every stream
    dns = [p for p in pk if p[UDP].dport == 53]
    web = [p for p in pk if p[UDP].dport in (8000, 8001)]
    assert len(dns) == 4 and len(web) == 4
    assert all(len(p) == 60 for p in dns)  # 64-byte frame: the signature fills it, no payload room
    assert sorted(p[UDP].dport for p in web) == [8000, 8000, 8001, 8001]
    assert all(len(p) == 124 and p[IP].ttl == 3 and bytes(p)[60:66] == b"GET /x" for p in web)


BAD_PROFILES = {
    "syntax": ('{"streams": [', "line 1"),
    "unknown_key": ('{"colour": "red"}', "unknown key 'colour'"),
    "stream_unknown_key": ('{"streams": [{"srcip": "1.2.3.4"}]}', "streams[0]: unknown key 'srcip'"),
    "bad_ip": ('{"streams": [{}, {"src_ip": "10.0.0.300"}]}', "streams[1].src_ip: '10.0.0.300'"),
    "bad_range": ('{"streams": [{"sport": "9-2"}]}', "streams[0].sport"),
    "bad_rate": ('{"streams": [{"rate": "fast"}]}', "streams[0].rate: 'fast'"),
    "bad_size": ('{"streams": [{"size": 9000}]}', "streams[0].size"),
    "tcp_too_small": ('{"streams": [{"proto": "tcp", "size": 64}]}', "size 64 is below 76"),
    "empty_streams": ('{"streams": []}', "streams: expected an array"),
    "bad_duration": ('{"duration": "soon"}', "duration: 'soon'"),
    "not_object": ('[1, 2]', "top level must be an object"),
}


@pytest.mark.parametrize("name", sorted(BAD_PROFILES))
def test_bad_profile_is_refused(build_dir: Path, file_prefix: str, tmp_path: Path, name: str) -> None:
    text, msg = BAD_PROFILES[name]
    prof = tmp_path / f"{name}.json"
    prof.write_text(text)
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], ["--profile", str(prof)])
    assert r.rc == 2 and r.stats is None
    assert msg in r.stderr, r.stderr
    if name != "tcp_too_small":  # a cross-field check names the stream, not the file
        assert str(prof) in r.stderr, r.stderr


BAD_FLAGS = {
    "rate": (["--rate", "fast"], "--rate: 'fast'"),
    "unknown": (["--colour", "red"], "unknown option '--colour'"),
    "missing_value": (["--duration"], "--duration needs a value"),
    "unknown_last": (["--colour"], "unknown option '--colour'"),  # not "needs a value"
    "stream_key_missing_value": (["--src-ip"], "--src-ip needs a value"),
    "stats_missing_dir": (["--stats", "/nonexistent-pp-dir/s.json", "--duration", "30"],
                          "--stats /nonexistent-pp-dir/s.json: cannot open for writing"),
    "mode": (["--mode", "turbo"], "'turbo' is not a mode"),
    "queues": (["--tx-queues", "0"], "--tx-queues: '0'"),
    "payload_escape": (["--payload", "\\xZZ"], "--payload"),
    "rfc_needs_rx": (["--mode", "rfc2544"], "needs --rx-port"),
}


@pytest.mark.parametrize("name", sorted(BAD_FLAGS))
def test_bad_flag_is_refused(build_dir: Path, file_prefix: str, tmp_path: Path, name: str) -> None:
    args, msg = BAD_FLAGS[name]
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], args)
    assert r.rc == 2 and r.stats is None
    assert msg in r.stderr, r.stderr


def test_help_lists_every_flag_it_parses(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    r = run_tgen(build_dir, file_prefix, tmp_path, [], ["--help"])
    assert r.rc == 0
    for flag in ("--profile", "--mode", "--tx-port", "--rx-port", "--tx-queues", "--rx-queues",
                 "--duration", "--packets", "--link-gbps", "--drain", "--link-wait", "--peer-wait",
                 "--start-after", "--stats", "--live", "--tx-retry", "--mbufs", "--dst-mac",
                 "--src-ip", "--size", "--rate", "--flows", "--payload", "--fill",
                 "--signature", "--no-signature", "--name", "--pcap", "--loops",
                 "--frame-sizes", "--trial", "--resolution", "--loss-tolerance",
                 "--delay-us", "--out-port", "--capacity-pps", "--capacity-burst"):
        assert flag in r.stdout, flag


def test_yaml_profile_is_the_json_profile(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    prof = tmp_path / "p.yaml"
    prof.write_text(
        "# the same keys as JSON\n"
        "packets: 3\n"
        "streams:\n"
        "  - name: web\n"
        "    dport: 8000-8002\n"
        "    size: 128\n"
        "    ttl: 5\n"
        "    payload: ['GET ', '/x']\n")
    out = tmp_path / "out.pcap"
    r = run_tgen(build_dir, file_prefix, tmp_path, [f"net_pcap0,tx_pcap={out}"],
                 ["--profile", str(prof)])
    r.assert_clean()
    pk = [Ether(bytes(d)) for d, _ in RawPcapReader(str(out))]
    assert [p[UDP].dport for p in pk] == [8000, 8001, 8002]
    assert all(len(p) == 124 and p[IP].ttl == 5 and bytes(p)[60:66] == b"GET /x" for p in pk)
    assert r.stats["streams"][0]["name"] == "web"


@pytest.mark.parametrize("text,msg", [
    ("streams:\n  - src_ip: [1, 2\n", "line "),
    ("streams:\n  - {}\n  - src_ip: 10.0.0.300\n", "streams[1].src_ip: '10.0.0.300'"),
    ("colour: red\n", "unknown key 'colour'"),
])
def test_bad_yaml_profile_is_refused(build_dir: Path, file_prefix: str, tmp_path: Path,
                                     text: str, msg: str) -> None:
    prof = tmp_path / "bad.yml"
    prof.write_text(text)
    r = run_tgen(build_dir, file_prefix, tmp_path, ["net_null0"], ["--profile", str(prof)])
    assert r.rc == 2 and str(prof) in r.stderr and msg in r.stderr, r.stderr
