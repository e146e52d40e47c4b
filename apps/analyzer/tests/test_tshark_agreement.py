"""The analyzer's decoder agrees with tshark, field by field, on every
Ethernet/IPv4/IPv6 TCP or UDP packet of the shared tcpdump captures.

The decoder's records come from `an-pcap-decode` (same decoder library as the
app).  A packet is compared when either decoder sees TCP or UDP directly
under the first IPv4/IPv6 header (after IPv6 extension headers).  tshark runs
with IP reassembly off so that each frame is dissected on its own, as the
analyzer does.  Compared: MACs, VLAN IDs (outer first), L3, TTL or hop
limit, addresses, L4 protocol, ports.  Every disagreement must be listed,
with its reason, in tshark_allowlist.py."""
from __future__ import annotations

import csv
import io
import ipaddress
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tshark_allowlist import ALLOWLIST

TSHARK_FIELDS = [
    "frame.number", "eth.src", "eth.dst", "ip.ttl", "ipv6.hlim", "ip.proto",
    "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport",
    "udp.srcport", "udp.dstport", "frame.protocols", "ieee8021ad.id", "vlan.id",
]
IPV6_EXT_LAYERS = {"ipv6.hopopts", "ipv6.routing", "ipv6.fraghdr",
                   "ipv6.dstopts", "ah"}
NOT_ETHERNET = 3  # an-pcap-decode exit status


def tshark_layers(protocols: str) -> tuple[str | None, str | None]:
    """(L3, L4) from tshark's frame.protocols when the stack is Ethernet,
    VLAN tags, IPv4/IPv6, IPv6 extension headers, then TCP/UDP."""
    s = protocols.split(":")
    if s[:2] != ["eth", "ethertype"]:
        return None, None
    i = 2
    while i < len(s) and s[i] in ("vlan", "ieee8021ad"):
        i += 1
        if i < len(s) and s[i] == "ethertype":
            i += 1
    if i >= len(s) or s[i] not in ("ip", "ipv6"):
        return None, None
    l3 = s[i]
    i += 1
    while i < len(s) and s[i] in IPV6_EXT_LAYERS:
        i += 1
    return l3, (s[i] if i < len(s) and s[i] in ("tcp", "udp") else None)


def norm_addr(a: str) -> str:
    try:
        return str(ipaddress.ip_address(a))
    except ValueError:
        return a


def decode_file(tool: Path, pcap: Path) -> tuple[list[dict[str, str]] | None, dict[int, dict[str, str]]]:
    r = subprocess.run([str(tool), str(pcap)], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == NOT_ETHERNET:
        return None, {}
    assert r.returncode == 0, f"an-pcap-decode {pcap}: rc {r.returncode}: {r.stderr}"
    ours = list(csv.DictReader(io.StringIO(r.stdout)))
    cmd = ["tshark", "-n", "-r", str(pcap), "-o", "ip.defragment:FALSE",
           "-o", "ipv6.defragment:FALSE", "-T", "fields",
           "-E", "occurrence=a", "-E", "aggregator=,", "-E", "separator=\t"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    t = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    theirs = {}
    for line in t.stdout.splitlines():
        # Every occurrence of each field, ','-separated (no field compared
        # here contains a comma): VLAN tags need all; the others the first,
        # i.e. the outermost header, as the analyzer logs.
        row = {f: v.split(",") for f, v in zip(TSHARK_FIELDS, line.split("\t"))}
        first = {f: v[0] for f, v in row.items()}
        # The outer tags are the vlan/ieee8021ad layers right after eth
        # (later ones belong to tunnelled or sampled frames).
        layers = first["frame.protocols"].split(":")
        n_tags = 0
        while 2 + 2 * n_tags < len(layers) and layers[2 + 2 * n_tags] in ("vlan", "ieee8021ad"):
            n_tags += 1
        first["vlan_ids"] = [x for x in row["ieee8021ad.id"] + row["vlan.id"] if x][:n_tags]
        theirs[int(first["frame.number"])] = first
    return ours, theirs


def compare(o: dict[str, str], t: dict) -> set[str] | None:
    """Fields that differ, or None when the packet is out of scope."""
    tl3, tl4 = tshark_layers(t["frame.protocols"])
    ol3 = {"ipv4": "ip", "ipv6": "ipv6"}.get(o["l3"])
    ol4 = {"6": "tcp", "17": "udp"}.get(o["l4_proto"]) if ol3 else None
    if tl4 is None and ol4 is None:
        return None
    diffs = set()
    if o["mac_src"] != t["eth.src"] or o["mac_dst"] != t["eth.dst"]:
        diffs.add("mac")
    ours_vlans = o["vlan"].split(".") if o["vlan"] else []
    if ours_vlans != t["vlan_ids"]:
        diffs.add("vlan")
    if ol3 != tl3:
        diffs.add("l3")
    else:
        ttl = t["ip.ttl"] if tl3 == "ip" else t["ipv6.hlim"]
        if o["ttl"] != ttl:
            diffs.add("ttl")
        if (norm_addr(o["src"]) != norm_addr(t[tl3 + ".src"])
                or norm_addr(o["dst"]) != norm_addr(t[tl3 + ".dst"])):
            diffs.add("addr")
    # IPv4: the protocol field itself; IPv6: the L4 after the extension
    # headers (tshark has no single field for it).
    if tl3 == "ip" and ol3 == "ip":
        if o["l4_proto"] != t["ip.proto"]:
            diffs.add("l4_proto")
    elif ol4 != tl4 and not (tl4 is None and o["fragment"] == "later"):
        diffs.add("l4_proto")
    tsport = t[tl4 + ".srcport"] if tl4 else ""
    tdport = t[tl4 + ".dstport"] if tl4 else ""
    if o["sport"] != tsport or o["dport"] != tdport:
        diffs.add("ports")
    return diffs


def test_decoder_agrees_with_tshark(build_dir: Path, shared_dir: Path) -> None:
    assert shutil.which("tshark"), "tshark is not installed (Debian package tshark)"
    tool = build_dir / "apps" / "analyzer" / "an-pcap-decode"
    assert tool.exists(), f"{tool} not built"
    pcaps = sorted(p for p in (shared_dir / "data/pcaps/tcpdump-tests").iterdir()
                   if p.suffix in (".pcap", ".pcapng"))
    assert len(pcaps) > 400
    with ThreadPoolExecutor(3) as ex:
        results = list(ex.map(lambda p: (p.name, *decode_file(tool, p)), pcaps))

    ethernet_files = compared = 0
    found: dict[tuple[str, int], set[str]] = {}
    for name, ours, theirs in results:
        if ours is None:
            continue
        ethernet_files += 1
        assert len(ours) == len(theirs), (
            f"{name}: an-pcap-decode read {len(ours)} frames, tshark {len(theirs)}")
        for o in ours:
            frame = int(o["frame"])
            d = compare(o, theirs[frame])
            if d is None:
                continue
            compared += 1
            if d:
                found[(name, frame)] = d

    # Guards against a vacuous pass (e.g. every file read as non-Ethernet).
    assert ethernet_files >= 200, ethernet_files
    assert compared >= 1000, compared
    unexplained = {k: sorted(v) for k, v in found.items()
                   if k not in ALLOWLIST or ALLOWLIST[k][0] != v}
    assert not unexplained, f"disagreements with tshark not in the allowlist: {unexplained}"
    stale = sorted(k for k in ALLOWLIST if k not in found)
    assert not stale, f"allowlist entries that now agree with tshark: {stale}"
