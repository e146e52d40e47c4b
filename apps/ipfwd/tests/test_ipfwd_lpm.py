"""ipfwd --lookup lpm: longest-prefix match in rte_fib against a Python
reference (lpm_reference.py) on a random table and on a full-size generated
Internet table; output packets (MACs from the next hop) compared byte by byte
with ipfwd_reference.py; route file errors."""
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
from ipfwd_harness import instance, ipfwd_binary, placement, run_ipfwd, sanitizer_env  # noqa: E402
from ipfwd_reference import forward  # noqa: E402
from lpm_reference import LongestPrefixTable, load_rules  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import routegen  # noqa: E402

DROP_REASONS = ("not_ipv4", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired",
                "no_route")


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


def packets_to(dsts: np.ndarray, rng: np.random.Generator, invalid: float) -> list[bytes]:
    out = []
    for i, d in enumerate(dsts):
        p = ipfwd_traffic.packet(int(d), 0x0B000001 + i % 65000, 64, int(rng.integers(2, 65)),
                                 1024 + i % 60000)
        if rng.random() < invalid:
            p = ipfwd_traffic.break_packet(p, ipfwd_traffic.INVALID_KINDS[i % 5], rng)
        out.append(p)
    return out


def check_lpm_run(build_dir: Path, file_prefix: str, tmp: Path, rules: Path,
                  table: LongestPrefixTable, pkts: list[bytes]) -> Counter[str]:
    cap, out = tmp / "in.pcap", tmp / "out.pcap"
    ipfwd_traffic.write_pcap(cap, pkts)
    res = run_ipfwd(build_dir, file_prefix, tmp, [f"net_pcap0,rx_pcap={cap}", f"net_pcap1,tx_pcap={out}"],
                    placement([instance(0, 0, 1, 0)], "l1"),
                    ["--packets", str(len(pkts)), "--lookup", "lpm", "--routes", str(rules)],
                    timeout=300)
    res.assert_clean()
    a = res.stats["app_stats"]
    assert a["lookup"] == "lpm" and a["routes"] == sum(
        1 for ln in rules.read_text().splitlines() if ln.startswith("R"))
    want, drops = [], Counter()
    for p in pkts:
        r = forward(p, 0, lpm=table.lookup)
        if isinstance(r, str):
            drops[r] += 1
        else:
            want.append(r)
    got = read_pcap(out)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"packet {i}: ipfwd sent {g.hex()}, reference {w.hex()}"
    st = res.stats["instances"][0]
    assert st["rx_packets"] == len(pkts) and st["tx_packets"] == len(want)
    for reason in DROP_REASONS:
        assert st["dropped_by_reason"][reason] == drops[reason], reason
    assert st["accounting_ok"] is True
    return drops


@pytest.mark.parametrize("default_route", [False, True])
def test_lpm_random_table_matches_reference(build_dir: Path, file_prefix: str, tmp_path: Path,
                                            default_route: bool) -> None:
    rng = np.random.default_rng(11 + default_route)
    rules = tmp_path / "random.rules"
    random_table(rules, rng, 3000, default_route)
    table = load_rules(rules)
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
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, rules, table, pkts)
    assert all(drops[r] > 0 for r in DROP_REASONS if r != "no_route"), drops
    assert (drops["no_route"] == 0) if default_route else (drops["no_route"] > 100), drops


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
    drops = check_lpm_run(build_dir, file_prefix, tmp_path, path, table, pkts)
    assert 0 < drops["no_route"] < 4000, drops


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


@pytest.mark.parametrize("args,what", [(["--ports", "300"], "--ports 300"),
                                       (["--routes", "0"], "--routes 0")])
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
