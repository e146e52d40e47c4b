"""ipfwd --lookup lpm: longest-prefix match in rte_fib (IPv4) and rte_fib6
(IPv6) against a Python reference (lpm_reference.py) on random tables, on
both families in one process, and on full-size generated Internet tables;
output packets (MACs from the next hop) compared byte by byte with
ipfwd_reference.py; route file errors."""
from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from harness import read_pcap  # noqa: E402
from ipfwd_harness import (assert_like_reference, instance, ipfwd_binary, placement,  # noqa: E402
                           run_ipfwd, sanitizer_env)
from ipfwd_reference import forward  # noqa: E402
from lpm_reference import LongestPrefixTable, load_rules  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import routegen  # noqa: E402

DROP_REASONS = ("not_ip", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired",
                "no_route", "ipv6_bad_version", "hop_limit_expired", "ipv6_ext_truncated",
                "ipv6_hop_by_hop_not_first")
V4_ONLY = ("bad_version_or_ihl", "bad_checksum", "ttl_expired")
V6_ONLY = ("ipv6_bad_version", "hop_limit_expired", "ipv6_ext_truncated", "ipv6_hop_by_hop_not_first")


# Added last to the table with a default route: in DPDK 22.11's DIR24_8
# this order sent 191.201.38.206 to the default route unless routes are
# added shortest first (ipfwd_lpm.c).
DEFAULT_ROUTE_CASE = ["R0.0.0.0/1 234", "R191.192.0.0/12 241", "R128.0.0.0/1 180", "R0.0.0.0/0 80"]


def random_table(path: Path, rng: np.random.Generator, n: int, default_route: bool) -> None:
    """Routes of depths 1-32 (a few shorter than 8), many nested (drawn near earlier
    ones), some at the top of the address space, some prefixes repeated with
    another next hop (the later line wins)."""
    lines = ["# random test table", ""]
    bases = rng.integers(0, 2 ** 32, size=n, dtype=np.uint64)
    for i in range(n):
        depth = int(rng.integers(1, 8)) if rng.random() < 0.002 else int(rng.integers(8, 33))
        base = int(bases[i]) if i % 3 else int(bases[int(rng.integers(0, i + 1))])
        if i % 97 == 0:
            base = 0xFFFFFFFF - int(rng.integers(0, 2 ** 12))  # up to 255.255.255.255
        mask = (0xFFFFFFFF << (32 - depth)) & 0xFFFFFFFF
        net = f"{(base & mask) >> 24}.{(base & mask) >> 16 & 255}.{(base & mask) >> 8 & 255}.{base & mask & 255}"
        lines.append(f"R{net}/{depth} {int(rng.integers(0, 256))}")
        if i % 50 == 0:
            lines.append(f"R{net}/{depth}\t{int(rng.integers(0, 256))}  ")
    if default_route:
        lines += DEFAULT_ROUTE_CASE
    path.write_text("\n".join(lines) + "\n")


def rand128(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2 ** 64, dtype=np.uint64)) << 64 | int(rng.integers(0, 2 ** 64, dtype=np.uint64))


def random_table6(path: Path, rng: np.random.Generator, n: int, default_route: bool) -> None:
    """IPv6 routes of depths 4-128 (mostly 16-64, as tables are), a third
    nested in earlier ones, some at the top of the space, some repeated with
    another next hop; every address form inet_pton reads (compressed, full
    with leading zeros)."""
    lines = ["# random IPv6 test table"]
    nets: list[ipaddress.IPv6Network] = []
    for i in range(n):
        r = rng.random()
        depth = (int(rng.integers(4, 16)) if r < 0.004 else int(rng.integers(65, 129)) if r < 0.15
                 else int(rng.integers(16, 65)))
        if i % 3 == 0 and nets:
            parent = nets[int(rng.integers(0, len(nets)))]
            depth = max(depth, parent.prefixlen)
            base = int(parent.network_address) | rand128(rng) >> parent.prefixlen
        else:
            base = rand128(rng)
        if i % 97 == 0:
            base = (1 << 128) - 1 - int(rng.integers(0, 2 ** 20))  # up to ffff:...:ffff
        net = ipaddress.IPv6Network((base & ~((1 << (128 - depth)) - 1) & ((1 << 128) - 1), depth))
        nets.append(net)
        text = net.exploded if i % 2 else str(net)  # l3fwd's full form, and compressed
        lines.append(f"R{text} {int(rng.integers(0, 256))}")
        if i % 50 == 0:
            lines.append(f"R{net}\t{int(rng.integers(0, 256))}  ")
    if default_route:
        lines.append("R::/0 77")
    path.write_text("\n".join(lines) + "\n")


def packets_to(dsts: list[int] | np.ndarray, rng: np.random.Generator, invalid: float,
               six: bool = False) -> list[bytes]:
    out = []
    kinds = ipfwd_traffic.INVALID_KINDS6 if six else ipfwd_traffic.INVALID_KINDS
    for i, d in enumerate(dsts):
        if six:
            p = ipfwd_traffic.packet6(int(d), 0x20010DB8 << 96 | i, 64, int(rng.integers(2, 65)),
                                      1024 + i % 60000)
        else:
            p = ipfwd_traffic.packet(int(d), 0x0B000001 + i % 65000, 64, int(rng.integers(2, 65)),
                                     1024 + i % 60000)
        if rng.random() < invalid:
            p = ipfwd_traffic.break_packet(p, kinds[i % len(kinds)], rng)
        out.append(p)
    return out


def check_lpm_run(build_dir: Path, file_prefix: str, tmp: Path, rules: list[Path],
                  table: LongestPrefixTable, table6: LongestPrefixTable,
                  pkts: list[bytes]) -> Counter[str]:
    cap, out = tmp / "in.pcap", tmp / "out.pcap"
    ipfwd_traffic.write_pcap(cap, pkts)
    res = run_ipfwd(build_dir, file_prefix, tmp, [f"net_pcap0,rx_pcap={cap}", f"net_pcap1,tx_pcap={out}"],
                    placement([instance(0, 0, 1, 0)], "l1"),
                    ["--packets", str(len(pkts)), "--lookup", "lpm",
                     *[x for r in rules for x in ("--routes", str(r))]],
                    timeout=300)
    res.assert_clean()
    a = res.stats["app_stats"]
    lines = [ln for r in rules for ln in r.read_text().splitlines() if ln.startswith("R")]
    assert a["lookup"] == "lpm" and a["routes"] == len(lines)
    assert a["routes_ipv6"] == sum(":" in ln for ln in lines) and a["routes_files"] == list(map(str, rules))
    return assert_like_reference(res.stats, read_pcap(out), pkts,
                                 lambda p: forward(p, 0, lpm=table.lookup, lpm6=table6.lookup), DROP_REASONS)


@pytest.mark.parametrize("default_route", [False, True])
def test_lpm_random_table_matches_reference(build_dir: Path, file_prefix: str, tmp_path: Path,
                                            default_route: bool) -> None:
    rng = np.random.default_rng(11 + default_route)
    rules = tmp_path / "random.rules"
    random_table(rules, rng, 3000, default_route)
    table, table6 = load_rules(rules)
    assert len(table6) == 0
    # Addresses: uniform, and near the table's prefixes (inside or just past
    # them), so that every depth decides some lookups.
    nets = [(p, n) for d, m in table.by_len.items() for p in m for n in [d]]
    near = [p + int(rng.integers(0, 2 ** (32 - d))) if d < 32 else p for p, d in
            (nets[int(i)] for i in rng.integers(0, len(nets), size=2500))]
    dsts = np.concatenate([rng.integers(0, 2 ** 32, size=1500, dtype=np.uint64),
                           np.array(near + [0xBFC926CE], dtype=np.uint64)]).astype(np.uint32)
    rng.shuffle(dsts)
    pkts = packets_to(dsts, rng, 0.1)
    depths = Counter()
    for d in dsts:
        for length in sorted(table.by_len, reverse=True):
            mask = (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
            if int(d) & mask in table.by_len[length]:
                depths[length] += 1
                break
    assert len(depths) >= 25, depths  # most depths decide some packet
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, [rules], table, table6, pkts)
    assert all(drops[r] > 0 for r in DROP_REASONS if r != "no_route" and r not in V6_ONLY), drops
    assert (drops["no_route"] == 0) if default_route else (drops["no_route"] > 100), drops


def addresses6_near(table6: LongestPrefixTable, rng: np.random.Generator, n_near: int,
                    n_uniform: int) -> list[int]:
    """Addresses inside (or just past) the table's prefixes, and uniform ones."""
    nets = [(p, d) for d, m in table6.by_len.items() for p in m]
    out = []
    for i in rng.integers(0, len(nets), size=n_near).tolist():
        p, d = nets[i]
        out.append(p | (rand128(rng) & ((1 << (128 - d)) - 1)))
        if i % 7 == 0:
            out[-1] = (p + (1 << (128 - d))) & ((1 << 128) - 1)  # just past the prefix
    out += [rand128(rng) for _ in range(n_uniform)]
    return out


def deciding_depths(table: LongestPrefixTable, addrs: list[int]) -> Counter[int]:
    depths: Counter[int] = Counter()
    full = (1 << table.bits) - 1
    for a in addrs:
        for length in sorted(table.by_len, reverse=True):
            if int(a) & ((full << (table.bits - length)) & full) in table.by_len[length]:
                depths[length] += 1
                break
    return depths


def test_lpm6_random_table_matches_reference(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """IPv6 alone: rte_fib6 against the reference on a random table of every
    depth, no default route, with every IPv6 drop reason in the capture;
    the IPv4 packets beside them have no FIB at all (no_route)."""
    rng = np.random.default_rng(21)
    rules = tmp_path / "random6.rules"
    random_table6(rules, rng, 2000, default_route=False)
    table, table6 = load_rules(rules)
    assert len(table) == 0
    dsts = addresses6_near(table6, rng, 2500, 500)
    assert len(deciding_depths(table6, dsts)) >= 60  # most depths decide some packet
    # and valid IPv4 packets, which a file without IPv4 routes drops as no_route
    pkts = packets_to(dsts, rng, 0.12, six=True) + packets_to([0x0A000001 + i for i in range(50)], rng, 0.0)
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, [rules], table, table6, pkts)
    assert all(drops[r] > 0 for r in DROP_REASONS if r not in V4_ONLY), drops
    assert drops["no_route"] > 100, drops


def test_lpm_both_families_in_one_process(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """l3fwd's two rule files (--rule_ipv4, --rule_ipv6) given as two
    --routes, a third file holding both families; IPv4 and IPv6 packets
    interleaved in one capture, each looked up in its own FIB."""
    rng = np.random.default_rng(22)
    r4, r6, mixed = tmp_path / "v4.rules", tmp_path / "v6.rules", tmp_path / "mixed.rules"
    random_table(r4, rng, 800, default_route=True)
    random_table6(r6, rng, 800, default_route=True)
    mixed.write_text("R198.18.0.0/15 201\nR2001:db8:ffff::/48 202\n# both families\nR2001:db8::/32 203\n")
    table, table6 = load_rules(r4, r6, mixed)
    v4 = [int(x) for x in rng.integers(0, 2 ** 32, size=800)] + [0xC6120001, 0xC6130101]
    v6 = addresses6_near(table6, rng, 700, 100) + [0x20010DB8FFFF << 80 | 5, 0x20010DB8 << 96 | 7]
    pkts = packets_to(v4, rng, 0.05) + packets_to(v6, rng, 0.05, six=True)
    order = rng.permutation(len(pkts))
    pkts = [pkts[i] for i in order]
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, [r4, r6, mixed], table, table6, pkts)
    assert drops["no_route"] == 0, drops  # both default routes
    assert drops["ttl_expired"] > 0 and drops["hop_limit_expired"] > 0, drops


FullTable = tuple[Path, np.ndarray, np.ndarray, np.ndarray]


@pytest.fixture(scope="session")
def full_table(tmp_path_factory: pytest.TempPathFactory) -> FullTable:
    """The full-size generated table (tools/routegen.py defaults), once."""
    path = tmp_path_factory.mktemp("routes") / "full.rules"
    prefix, depth, hop = routegen.generate(1_000_000, 16, 1)
    routegen.write_rules(path, prefix, depth, hop)
    return path, prefix, depth, hop


def test_routegen_table_shape(full_table: FullTable) -> None:
    path, prefix, depth, hop = full_table
    assert prefix.size == 1_000_000
    key = prefix.astype(np.uint64) << np.uint64(6) | depth.astype(np.uint64)
    assert np.unique(key).size == prefix.size  # all distinct
    share = np.bincount(depth, minlength=33) / prefix.size
    assert 0.55 < share[24] < 0.65 and share[22] > share[23] > share[21] > share[16] > 0
    assert share[25:].sum() == 0 and share[:8].sum() == 0
    first = prefix >> 24
    assert not np.isin(first, [0, 10, 127]).any() and first.max() < 224
    assert set(np.unique(hop).tolist()) == set(range(16))
    # The file says the same as the arrays (read back independently).
    head = [ln for ln in path.read_text().splitlines()[:5000] if ln.startswith("R")]
    for ln, p, d, h in zip(head, prefix.tolist(), depth.tolist(), hop.tolist()):
        net, nh = ln[1:].split()
        assert ipaddress.IPv4Network(net) == ipaddress.IPv4Network((p, d)) and int(nh) == h
    # Deterministic from the seed, different for another seed.
    again = routegen.generate(1000, 16, 1)
    assert (again[0] == routegen.generate(1000, 16, 1)[0]).all()
    assert not np.array_equal(again[0], routegen.generate(1000, 16, 2)[0])


def test_lpm_full_table_matches_reference(build_dir: Path, file_prefix: str, tmp_path: Path,
                                          full_table: FullTable) -> None:
    path, prefix, depth, hop = full_table
    table = LongestPrefixTable()  # from the arrays: parsing a million lines in Python is slow
    for p, d, h in zip(prefix.tolist(), depth.tolist(), hop.tolist()):
        table.by_len.setdefault(d, {})[p] = h
    assert len(table) == 1_000_000
    rng = np.random.default_rng(12)
    dsts = np.concatenate([routegen.destinations_in(prefix, depth, 12000, rng),
                           rng.integers(0, 2 ** 32, size=4000, dtype=np.uint64).astype(np.uint32)])
    pkts = packets_to(dsts, rng, 0.0)
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, [path], table, LongestPrefixTable(128), pkts)
    assert 0 < drops["no_route"] < 4000, drops


@pytest.fixture(scope="session")
def full_table6(tmp_path_factory: pytest.TempPathFactory) -> FullTable:
    """The full-size generated IPv6 table (tools/routegen.py --family ipv6 defaults), once."""
    path = tmp_path_factory.mktemp("routes6") / "full6.rules"
    prefix, depth, hop = routegen.generate6(routegen.ROUTES6_DEFAULT, 16, 1)
    routegen.write_rules(path, prefix, depth, hop, family="ipv6")
    return path, prefix, depth, hop


def test_routegen_ipv6_table_shape(full_table6: FullTable) -> None:
    """About 200,000 distinct prefixes, mostly /48 and /32-/44, about half of
    them more-specifics of another route, none longer than /64 or outside
    the registries' blocks; the file says the same as the arrays."""
    path, prefix, depth, hop = full_table6
    assert prefix.size == 200_000
    assert np.unique(np.stack([prefix, depth.astype(np.uint64)]), axis=1).shape[1] == prefix.size
    share = np.bincount(depth, minlength=129) / prefix.size
    assert 0.44 < share[48] < 0.52 and share[32] > share[44] > share[40] > share[36] > 0
    assert 0.3 < share[32:45].sum() < 0.45 and share[48] + share[32:45].sum() > 0.85
    assert 0.002 < share[49:].sum() < 0.015 and share[65:].sum() == 0 and share[:16].sum() == 0
    assert 42 < float((depth * 1.0).mean()) < 43.5
    assert 0.5 < routegen.nested_share6(prefix, depth) < 0.62
    top16 = (prefix >> np.uint64(48)).astype(np.int64)
    assert np.isin(top16 & 0xFFF0, [0x2000, 0x2400, 0x2600, 0x2800, 0x2A00, 0x2C00]).all()
    assert not ((prefix >> np.uint64(32)) == 0x20010DB8).any()
    assert set(np.unique(hop).tolist()) == set(range(16))
    head = [ln for ln in path.read_text().splitlines()[:3000] if ln.startswith("R")]
    for ln, p, d, h in zip(head, prefix.tolist(), depth.tolist(), hop.tolist()):
        net, nh = ln[1:].split()
        assert ipaddress.IPv6Network(net) == ipaddress.IPv6Network((p << 64, d)) and int(nh) == h
    again = routegen.generate6(5000, 16, 1)
    assert (again[0] == routegen.generate6(5000, 16, 1)[0]).all()
    assert not np.array_equal(again[0], routegen.generate6(5000, 16, 2)[0])


def test_lpm6_full_table_matches_reference(build_dir: Path, file_prefix: str, tmp_path: Path,
                                           full_table6: FullTable) -> None:
    path, prefix, depth, hop = full_table6
    table6 = LongestPrefixTable(128)  # from the arrays, as for IPv4
    for p, d, h in zip(prefix.tolist(), depth.tolist(), hop.tolist()):
        table6.by_len.setdefault(d, {})[p << 64] = h
    rng = np.random.default_rng(13)
    dsts = routegen.destinations_in6(prefix, depth, 9000, rng)
    dsts += [0x2 << 124 | int(rng.integers(0, 2 ** 62)) << 62 | int(rng.integers(0, 2 ** 62))
             for _ in range(3000)]  # anywhere in 2000::/3: mostly no route
    pkts = packets_to(dsts, rng, 0.0, six=True)
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, [path], LongestPrefixTable(32), table6, pkts)
    assert 1000 < drops["no_route"] < 3000, drops


BAD_FILES = [
    ("R10.0.0.0/8 1\nX10.0.0.0/8 1\n", "line 2", "X10.0.0.0/8 1"),
    ("R10.0.0.0/8 1\n\n# c\nR10.0.0.300/8 1\n", "line 4", "10.0.0.300"),
    ("R10.0.0.0/33 1\n", "line 1", "depth '33'"),
    ("R10.0.0.0/x 1\n", "line 1", "depth 'x'"),
    ("R10.0.0.0/8 256\n", "line 1", "next hop '256'"),
    ("R10.0.0.0/8 -1\n", "line 1", "next hop '-1'"),
    ("R10.0.0.0/8\n", "line 1", "next hop ''"),
    ("R10.0.0.0/8 1 7\n", "line 1", "'7' after the next hop"),
    ("R10.0.0.0 1\n", "line 1", "R10.0.0.0 1"),
    ("R10.1.0.0/8 1\n", "line 1", "10.1.0.0/8 has address bits set"),
    ("# only a comment\n\n", "", "no routes"),
    ("R1.0.0.0/8 1\nR" + "1" * 300 + "\n", "line 2", "longer than"),
    ("R2001:db8::/32 1\nR2001:db8::g/48 2\n", "line 2", "'2001:db8::g' is not an IPv6 address"),
    ("R2001:db8::/129 1\n", "line 1", "depth '129' is not a number from 0 to 128"),
    ("R2001:db8::1/64 1\n", "line 1", "2001:db8::1/64 has address bits set beyond the depth "
                                       "(the prefix is 2001:db8::/64)"),
    ("R2001:db8::/32 1 2\n", "line 1", "'2' after the next hop"),
    ("R1.2.3.4:5/8 1\n", "line 1", "not an IPv6 address"),
]


@pytest.mark.parametrize("text,where,what", BAD_FILES)
def test_route_file_errors(build_dir: Path, tmp_path: Path, text: str, where: str, what: str) -> None:
    rules = tmp_path / "bad.rules"
    rules.write_text(text)
    r = subprocess.run([str(ipfwd_binary(build_dir)), "--", "--lookup", "lpm", "--routes",
                        str(rules)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    msg = r.stderr.strip().splitlines()[-1]
    assert str(rules) in msg and where in msg and what in msg, r.stderr


@pytest.mark.parametrize("args,what", [
    (["--lookup", "lpm"], "--lookup lpm: give the route file with --routes"),
    (["--routes", "{rules}"], "only used with --lookup lpm"),
    (["--lookup", "trie", "--routes", "{rules}"], "--lookup trie: expected hash or lpm"),
    (["--lookup", "lpm", "--routes", "{rules}", "--table-entries", "64"], "--table-entries"),
    (["--lookup", "lpm", "--routes", "{missing}"], "cannot open"),
])
def test_lookup_option_errors(build_dir: Path, tmp_path: Path, args: list[str], what: str) -> None:
    rules = tmp_path / "ok.rules"
    rules.write_text("R10.0.0.0/8 1\n")
    args = [a.format(rules=rules, missing=tmp_path / "missing.rules") for a in args]
    r = subprocess.run([str(ipfwd_binary(build_dir)), "--", *args], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and what in r.stderr, r.stderr


def test_help_documents_lpm(build_dir: Path) -> None:
    r = subprocess.run([str(ipfwd_binary(build_dir)), "--", "--help"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0
    assert "--lookup hash|lpm" in r.stdout and "--routes FILE" in r.stdout
    assert "rte_fib6" in r.stdout and "extension headers are walked" in r.stdout.replace("\n  ", " ")


def test_routes_given_twice_or_too_often(build_dir: Path, tmp_path: Path) -> None:
    files = []
    for i in range(9):
        files.append(tmp_path / f"r{i}.rules")
        files[-1].write_text(f"R10.{i}.0.0/16 1\n")
    cmd = [str(ipfwd_binary(build_dir)), "--", "--lookup", "lpm"]
    r = subprocess.run(cmd + ["--routes", str(files[0]), "--routes", str(files[0])],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and f"--routes {files[0]}: given twice" in r.stderr, r.stderr
    r = subprocess.run(cmd + [x for f in files for x in ("--routes", str(f))],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and f"--routes {files[8]}: more than 8 route files" in r.stderr, r.stderr


@pytest.mark.parametrize("args,what", [(["--ports", "300"], "--ports 300"),
                                       (["--routes", "0"], "--routes 0"),
                                       (["--family", "ipv6", "--routes", "-3"], "--routes -3"),
                                       (["--family", "ipx"], "--family")])
def test_routegen_bad_values(tmp_path: Path, args: list[str], what: str) -> None:
    r = subprocess.run([sys.executable, str(Path(routegen.__file__)), str(tmp_path / "r.txt"), *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and what in r.stderr, r.stderr
    assert not (tmp_path / "r.txt").exists()


def test_serve_builds_the_fib_for_every_placement(build_dir: Path, file_prefix: str,
                                                  tmp_path: Path) -> None:
    """--serve with --lookup lpm: each placement sets up its own FIB from the
    route file read once; routed packets go out, the others drop as no_route."""
    rules = tmp_path / "r.rules"
    rules.write_text("R10.0.0.0/8 1\nR10.1.0.0/16 2\n")
    cap = tmp_path / "in.pcap"
    dsts = [0x0A000001, 0x0A010001, 0x0B000001, 0x0A020304] * 64  # 3 routed of 4
    ipfwd_traffic.write_pcap(cap, [ipfwd_traffic.packet(d, 0x0C000001, 64, 64, 1000) for d in dsts])
    places = [json.dumps(placement([instance(0, 0, 1, 0, r=r, p=p, t=r)], "l1"))
              for r, p in ((0, 1), (1, 0), (0, 1))]
    cmd = [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", "net_null0",
           "--", "--serve", "--duration", "0.3", "--warmup", "0.1", "--lookup", "lpm",
           "--routes", str(rules)]
    p = subprocess.run(cmd, input="\n".join(places) + "\n", capture_output=True, text=True,
                       timeout=120, env=sanitizer_env())
    assert p.returncode == 0, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(out) == 3
    for o in out:
        assert o["accounting_ok"] is True and o["app_stats"]["lookup"] == "lpm"
        assert o["app_stats"]["routes"] == 2
        t = o["total"]
        # Every fourth packet of the replay has no route.  P processed a
        # prefix of the replayed stream: no_route is a quarter of it (+-1),
        # at most a quarter of what R received, and at least a third of what
        # T sent (the routed three quarters of it, some still between P and T).
        nr = t["dropped_by_reason"]["no_route"]
        assert t["tx_packets"] > 0 and nr * 4 <= t["rx_packets"] + 4 and nr * 3 >= t["tx_packets"] - 3, t
