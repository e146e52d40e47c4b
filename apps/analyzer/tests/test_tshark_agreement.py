"""The analyzer's decoder agrees with tshark, field by field, on the outer
and the inner headers: every Ethernet capture among the shared tcpdump
captures, and a capture of tunnelled frames built here (tunnel_frames.py)
and of frames whose EtherType says IPv4 over another version nibble
(tests/harness/frames.py).

The decoder's records come from `an-pcap-decode` (same decoder library as the
app).  tshark runs with IP reassembly off so that each frame is dissected on
its own, as the analyzer does.

- Outer (or only) headers: compared when either decoder sees TCP or UDP
  directly under the first IPv4/IPv6 header (after IPv6 extension headers),
  or a tunnel: MACs, VLAN IDs (outer first), L3, TTL or hop limit,
  addresses, L4 protocol, ports.
- Tunnels: compared when either decoder sees one (VXLAN, Geneve, GRE,
  ERSPAN, GTP-U, IP in IP): the chain of tunnels, the last one's ID (VNI,
  GRE key, ERSPAN session, TEID), and the same fields as above for the
  innermost headers, which tshark lists as the later occurrences of each
  field.

Every disagreement must be explained by a rule of tshark_allowlist.py (a
property of the packet, not a file name)."""
from __future__ import annotations

import csv
import io
import ipaddress
import shutil
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness import read_pcap, write_pcap
from harness.frames import wrong_ipv4_version_frames
from tshark_allowlist import RULES
from tunnel_frames import tunnel_frames

TUNNEL_ID_FIELDS = {"vxlan": "vxlan.vni", "geneve": "geneve.vni", "gre": "gre.key",
                    "erspan": "erspan.spanid", "gtpu": "gtp.teid"}
TSHARK_FIELDS = [
    "frame.number", "eth.src", "eth.dst", "ip.version", "ip.ttl", "ipv6.hlim", "ip.proto",
    "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport",
    "udp.srcport", "udp.dstport", "frame.protocols", "ieee8021ad.id", "vlan.id",
    *TUNNEL_ID_FIELDS.values(),
]
IPV6_EXT_LAYERS = {"ipv6.hopopts", "ipv6.routing", "ipv6.fraghdr",
                   "ipv6.dstopts", "ah"}
UDP_TUNNELS = {"vxlan": "vxlan", "geneve": "geneve", "gtp": "gtpu"}
NOT_ETHERNET = 3  # an-pcap-decode exit status


@dataclass
class Stack:
    """One header stack in tshark's frame.protocols, as occurrence indexes
    into its field lists."""
    eth: int | None = None
    tags: list[tuple[str, int]] = field(default_factory=list)
    l3: str | None = None
    l3_i: int | None = 0  # None: a layer tshark shows without its fields (bogus version)
    l4: str | None = None
    l4_i: int = 0


def tshark_stacks(protocols: str, outer_ip_bogus: bool = False) -> tuple[list[Stack], list[str]]:
    """The outer stack, then one per tunnel, and the tunnel chain, from
    tshark's frame.protocols (e.g. eth:ethertype:ip:udp:vxlan:eth:...).
    outer_ip_bogus: the first layer is an 'ip' whose version is not 4
    (tshark adds no TTL, address or protocol field for it, and then
    dissects a version 6 as 'ipv6'), so the fields of later IPv4
    layers start at occurrence 0."""
    s = protocols.split(":")
    seen: Counter[str] = Counter()

    def take(name: str) -> int:
        seen[name] += 1
        return seen[name] - 1

    stacks: list[Stack] = []
    tunnels: list[str] = []
    i = 0
    while True:
        st = Stack()
        if i < len(s) and s[i] == "eth":
            st.eth = take("eth")
            i += 1
            if i < len(s) and s[i] == "ethertype":
                i += 1
            while i < len(s) and s[i] in ("vlan", "ieee8021ad"):
                st.tags.append((s[i], take(s[i])))
                i += 1
                if i < len(s) and s[i] == "ethertype":
                    i += 1
        if i < len(s) and s[i] in ("ip", "ipv6"):
            bogus = outer_ip_bogus and not stacks and s[i] == "ip"
            st.l3, st.l3_i = s[i], None if bogus else take(s[i])
            i += 1
            while i < len(s) and s[i] in IPV6_EXT_LAYERS:
                i += 1
            if i < len(s) and s[i] in ("tcp", "udp"):
                st.l4, st.l4_i = s[i], take(s[i])
                i += 1
        stacks.append(st)
        nxt = s[i] if i < len(s) else None
        if st.l4 == "udp" and nxt in UDP_TUNNELS:
            tunnels.append(UDP_TUNNELS[nxt])
            i += 1
        elif st.l3 and st.l4 is None and nxt == "gre":
            i += 1
            if i < len(s) and s[i] == "erspan":
                tunnels.append("erspan")
                i += 1
            else:
                tunnels.append("gre")
        elif st.l3 and st.l4 is None and nxt in ("ip", "ipv6"):
            tunnels.append("ipip")
        else:
            return stacks, tunnels


def norm_addr(a: str) -> str:
    try:
        return str(ipaddress.ip_address(a))
    except ValueError:
        return a


def at(t: dict[str, list[str]], f: str, i: int | None) -> str:
    """Occurrence i of field f ('' when absent)."""
    v = t[f]
    return v[i] if i is not None and i < len(v) else ""


def run_tshark(pcap: Path) -> dict[int, dict[str, list[str]]]:
    cmd = ["tshark", "-n", "-r", str(pcap), "-o", "ip.defragment:FALSE",
           "-o", "ipv6.defragment:FALSE", "-T", "fields",
           "-E", "occurrence=a", "-E", "aggregator=,", "-E", "separator=\t"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    t = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    theirs = {}
    for line in t.stdout.splitlines():
        # Every occurrence of each field, ','-separated (no field compared
        # here contains a comma), outermost header first.
        row = {f: v.split(",") if v else [] for f, v in zip(TSHARK_FIELDS, line.split("\t"))}
        theirs[int(row["frame.number"][0])] = row
    return theirs


def decode_file(tool: Path, pcap: Path) -> tuple[list[dict[str, str]] | None, dict[int, dict[str, list[str]]]]:
    r = subprocess.run([str(tool), str(pcap)], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == NOT_ETHERNET:
        return None, {}
    assert r.returncode == 0, f"an-pcap-decode {pcap}: rc {r.returncode}: {r.stderr}"
    return list(csv.DictReader(io.StringIO(r.stdout))), run_tshark(pcap)


def compare_stack(o: dict[str, str], pre: str, t: dict[str, list[str]], st: Stack,
                  diffs: set[str]) -> None:
    """The MACs, tags, L3, TTL, addresses, L4 protocol and ports of one
    stack of ours (columns prefixed pre) against tshark's stack st."""
    if o[pre + "mac_src"] != at(t, "eth.src", st.eth) or o[pre + "mac_dst"] != at(t, "eth.dst", st.eth):
        diffs.add(pre + "mac")
    ours_vlans = o[pre + "vlan"].split(".") if o[pre + "vlan"] else []
    their_vlans = [at(t, name + ".id", i) for name, i in st.tags]
    if ours_vlans != their_vlans:
        diffs.add(pre + "vlan")
    ol3 = {"ipv4": "ip", "ipv6": "ipv6"}.get(o[pre + "l3"])
    ol4 = {"6": "tcp", "17": "udp"}.get(o[pre + "l4_proto"]) if ol3 else None
    if ol3 != st.l3:
        diffs.add(pre + "l3")
    elif ol3:
        ttl = at(t, "ip.ttl" if ol3 == "ip" else "ipv6.hlim", st.l3_i)
        if o[pre + "ttl"] != ttl:
            diffs.add(pre + "ttl")
        if (norm_addr(o[pre + "src"]) != norm_addr(at(t, ol3 + ".src", st.l3_i))
                or norm_addr(o[pre + "dst"]) != norm_addr(at(t, ol3 + ".dst", st.l3_i))):
            diffs.add(pre + "addr")
    # IPv4: the protocol field itself; IPv6: the L4 after the extension
    # headers (tshark has no single field for it).
    if st.l3 == "ip" and ol3 == "ip":
        if o[pre + "l4_proto"] != at(t, "ip.proto", st.l3_i):
            diffs.add(pre + "l4_proto")
    elif ol4 != st.l4 and not (st.l4 is None and o[pre + "fragment"] == "later"):
        diffs.add(pre + "l4_proto")
    tsport = at(t, st.l4 + ".srcport", st.l4_i) if st.l4 else ""
    tdport = at(t, st.l4 + ".dstport", st.l4_i) if st.l4 else ""
    if o[pre + "sport"] != tsport or o[pre + "dport"] != tdport:
        diffs.add(pre + "ports")


def compare(o: dict[str, str], t: dict[str, list[str]]) -> tuple[set[str] | None, bool]:
    """(fields that differ, or None when the packet is out of scope;
    whether tunnels were compared)."""
    # The first ip.version is the first IP layer's (tshark's IPv6 adds
    # one too, hidden).
    first_version = t["ip.version"][0] if t["ip.version"] else ""
    stacks, tunnels = tshark_stacks(t["frame.protocols"][0], first_version not in ("", "4"))
    outer = stacks[0]
    ol4 = ({"6": "tcp", "17": "udp"}.get(o["l4_proto"])
           if o["l3"] in ("ipv4", "ipv6") else None)
    in_scope = outer.l4 is not None or ol4 is not None
    tunnel_scope = bool(tunnels) or bool(o["tunnel"])
    if not in_scope and not tunnel_scope:
        return None, False
    diffs: set[str] = set()
    compare_stack(o, "", t, outer, diffs)
    if tunnel_scope:
        chain = o["tunnel"].split(".") if o["tunnel"] else []
        if chain != tunnels:
            diffs.add("tunnel")
        else:
            f = TUNNEL_ID_FIELDS.get(tunnels[-1])
            theirs = t[f][-1] if f and t[f] else ""
            if (int(theirs, 0) if theirs else "") != (int(o["tunnel_id"]) if o["tunnel_id"] else ""):
                diffs.add("tunnel_id")
            compare_stack(o, "inner_", t, stacks[-1], diffs)
    return diffs, tunnel_scope


@dataclass
class Found:
    compared: int = 0
    tunnels_compared: int = 0
    disagreements: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    records: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)


def compare_file(name: str, ours: list[dict[str, str]], theirs: dict[int, dict[str, list[str]]],
                 found: Found) -> None:
    assert len(ours) == len(theirs), (
        f"{name}: an-pcap-decode read {len(ours)} frames, tshark {len(theirs)}")
    for o in ours:
        frame = int(o["frame"])
        d, tun = compare(o, theirs[frame])
        if d is None:
            continue
        found.compared += 1
        found.tunnels_compared += tun
        if d:
            found.disagreements[(name, frame)] = d
            found.records[(name, frame)] = o


@pytest.mark.offline  # an-pcap-decode and tshark on files: it runs beside the DPDK tests
def test_decoder_agrees_with_tshark(build_dir: Path, shared_dir: Path, tmp_path: Path) -> None:
    assert shutil.which("tshark"), "tshark is not installed (Debian package tshark)"
    tool = build_dir / "apps" / "analyzer" / "an-pcap-decode"
    assert tool.exists(), f"{tool} not built"
    pcaps = sorted(p for p in (shared_dir / "data/pcaps/tcpdump-tests").iterdir()
                   if p.suffix in (".pcap", ".pcapng"))
    assert len(pcaps) > 400
    built = tunnel_frames()
    wrong_version = wrong_ipv4_version_frames()
    built_pcap = tmp_path / "tunnels.pcap"
    write_pcap(built_pcap, [*built.values(), *wrong_version.values()])
    pcaps.append(built_pcap)
    with ThreadPoolExecutor(3) as ex:
        results = list(ex.map(lambda p: (p, *decode_file(tool, p)), pcaps))

    ethernet_files = 0
    found = Found()
    for pcap, ours, theirs in results:
        if ours is None:
            continue
        ethernet_files += 1
        compare_file(str(pcap), ours, theirs, found)

    # Guards against a vacuous pass (e.g. every file read as non-Ethernet):
    # the shared captures, and every built tunnel frame compared.
    assert ethernet_files >= 200, ethernet_files
    assert found.compared >= 1000, found.compared
    built_tunnels = [i + 1 for i, n in enumerate(built) if not n.startswith("ipv4_total")]
    built_seen = [o for p, ours, _t in results if p == built_pcap for o in ours]
    assert [int(o["frame"]) for o in built_seen if o["tunnel"]] == built_tunnels

    # Every disagreement explained by a rule, every rule used.
    frames: dict[str, list[bytes]] = {}
    used: Counter[str] = Counter()
    unexplained = {}
    for (name, frame), d in sorted(found.disagreements.items()):
        if name not in frames:
            frames[name] = read_pcap(Path(name))
        o = found.records[(name, frame)]
        rule = next((r for r in RULES if r.applies(frames[name][frame - 1], o)), None)
        if rule is None or frozenset(d) not in rule.diffs:
            unexplained[(Path(name).name, frame)] = sorted(d)
        else:
            used[rule.name] += 1
    assert not unexplained, f"disagreements with tshark no rule explains: {unexplained}"
    print(f"compared {found.compared} packets, {found.tunnels_compared} with tunnels; "
          f"disagreements explained: {dict(used)}")
    unused = [r.name for r in RULES if used[r.name] == 0]
    assert not unused, f"allowlist rules that explain no disagreement: {unused}"
