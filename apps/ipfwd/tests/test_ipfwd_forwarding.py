"""ipfwd end to end: generated captures through net_pcap, output captures
compared packet by packet with the Python reference."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from harness import json_documents, read_pcap, wait_catches_signal  # noqa: E402
from ipfwd_harness import instance, ipfwd_binary, placement, run_ipfwd, sanitizer_env  # noqa: E402
from ipfwd_reference import forward  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402




def make_capture(tmp: Path, name: str, variant: str, packets: int, invalid: float, seed: int) -> Path:
    path = tmp / name
    ipfwd_traffic.write_pcap(path, ipfwd_traffic.generate(variant, packets, 16, 64 + seed * 10, invalid, seed))
    return path


def expected(inp: list[bytes], n_entries: int) -> tuple[list[bytes], Counter[str]]:
    out, drops = [], Counter()
    for p in inp:
        r = forward(p, n_entries)
        if isinstance(r, str):
            drops[r] += 1
        else:
            out.append(r)
    return out, drops


def check_against_reference(stats: dict, inst: int, inp: list[bytes], outp: list[bytes],
                            repeat: int = 1) -> None:
    n_entries = stats["app_stats"]["table_entries"]
    want, drops = expected(inp, n_entries)
    assert len(outp) == len(want) * repeat
    for i, (got, exp) in enumerate(zip(outp, want * repeat)):
        assert got == exp, f"packet {i}: ipfwd sent {got.hex()}, reference {exp.hex()}"
    st = stats["instances"][inst]
    assert st["rx_packets"] == len(inp) * repeat
    assert st["tx_packets"] == len(want) * repeat
    for reason in ("not_ip", "truncated", "bad_version_or_ihl", "bad_checksum", "ttl_expired"):
        assert st["dropped_by_reason"][reason] == drops[reason] * repeat, reason
    assert st["accounting_ok"] is True


def test_l1_forwards_like_reference(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = make_capture(tmp_path, "in.pcap", "l1", 3000, 0.25, 1)
    inp = read_pcap(cap)
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap}", f"net_pcap1,tx_pcap={tmp_path / 'out.pcap'}"],
                    placement([instance(0, 0, 1, 0)], "l1"), ["--packets", str(len(inp))])
    res.assert_clean()
    s = res.stats
    assert s["kind"] == "measured" and s["variant"] == "l1" and s["accounting_ok"] is True
    # l1: the table takes half the L1 data cache hwloc reports.
    assert s["app_stats"]["l1d_bytes"] > 0
    assert s["app_stats"]["table_bytes"] == s["app_stats"]["l1d_bytes"] // 2
    drops = s["total"]["dropped_by_reason"]
    assert all(drops[r] > 0 for r in ("not_ip", "truncated", "bad_version_or_ihl",
                                      "bad_checksum", "ttl_expired")), drops
    check_against_reference(s, 0, inp, read_pcap(tmp_path / "out.pcap"))


def test_mem_variant_forwards_like_reference(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = make_capture(tmp_path, "in.pcap", "mem", 2000, 0.1, 2)
    inp = read_pcap(cap)
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap}", f"net_pcap1,tx_pcap={tmp_path / 'out.pcap'}"],
                    placement([instance(0, 0, 1, 0)], "mem"), ["--packets", str(len(inp))])
    res.assert_clean()
    a = res.stats["app_stats"]
    assert a["llc_bytes"] > 0 and a["table_bytes"] >= 4 * a["llc_bytes"]
    check_against_reference(res.stats, 0, inp, read_pcap(tmp_path / "out.pcap"))


def test_table_entries_override_and_infinite_replay(build_dir: Path, file_prefix: str,
                                                    tmp_path: Path) -> None:
    cap = make_capture(tmp_path, "in.pcap", "mem", 500, 0.2, 3)
    inp = read_pcap(cap)
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap},infinite_rx=1", f"net_pcap1,tx_pcap={tmp_path / 'out.pcap'}"],
                    placement([instance(0, 0, 1, 0)], "mem"),
                    ["--packets", str(3 * len(inp)), "--table-entries", "1000003"])
    res.assert_clean()
    assert res.stats["app_stats"]["table_entries"] == 1000003
    check_against_reference(res.stats, 0, inp, read_pcap(tmp_path / "out.pcap"), repeat=3)


def test_two_instances_each_own_queue(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    caps = [make_capture(tmp_path, f"in{i}.pcap", "l1", 800 + 100 * i, 0.2, 4 + i) for i in range(2)]
    outs = [tmp_path / f"out{i}.pcap" for i in range(2)]
    inps = [read_pcap(c) for c in caps]
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={caps[0]},rx_pcap={caps[1]}",
                     f"net_pcap1,tx_pcap={outs[0]},tx_pcap={outs[1]}"],
                    placement([instance(0, 0, 1, 0), instance(0, 1, 1, 1, r=1, p=0, t=1)], "l1"),
                    ["--duration", "1"])
    res.assert_clean()
    for i in range(2):
        check_against_reference(res.stats, i, inps[i], read_pcap(outs[i]))
    t = res.stats["total"]
    assert t["rx_packets"] == sum(map(len, inps))
    assert t["rx_packets"] == t["tx_packets"] + t["dropped_packets"] + t["queued_packets"]
    roles = {(x["instance"], x["role"]): x for x in res.stats["tasks"]}
    assert roles[(1, "P")]["context"] == 0 and roles[(1, "P")]["packets"] == len(inps[1])
    # Each task ran on the context its placement gave (the lcore pinned itself).
    assert all(t["observed_cpu"] == t["context"] for t in res.stats["tasks"]), res.stats["tasks"]


def test_duration_warmup_and_rates(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = make_capture(tmp_path, "in.pcap", "l1", 256, 0.0, 6)
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap},infinite_rx=1", "net_null0"],
                    placement([instance(0, 0, 1, 0)], "l1"),
                    ["--duration", "1", "--warmup", "0.5"])
    res.assert_clean()
    s = res.stats
    # The window ends when the main lcore sees the time is up: on a loaded
    # 2-core machine it may be descheduled then, so only a loose upper bound.
    assert 0.9 < s["duration_s"] < 3.0
    t = s["total"]
    # Packets of the warm-up are counted but are not in the window.
    assert 0 < t["window_tx_packets"] < t["tx_packets"]
    assert abs(t["pps"] - t["window_tx_packets"] / s["duration_s"]) <= 1e-6 * t["pps"] + 1
    size = len(read_pcap(cap)[0])  # every packet of this capture has this size
    assert abs(t["bps"] - 8 * size * t["pps"]) < 1e-3 * t["bps"] + 1
    assert t["rx_packets"] == t["tx_packets"] + t["dropped_packets"] + t["queued_packets"]
    assert s["accounting_ok"] is True


def test_sigusr1_snapshot_then_sigint_stops_cleanly(build_dir: Path, file_prefix: str,
                                                    tmp_path: Path) -> None:
    cap = make_capture(tmp_path, "in.pcap", "l1", 256, 0.0, 7)
    pfile = tmp_path / "p.json"
    pfile.write_text(json.dumps(placement([instance(0, 0, 1, 0)], "l1")))
    cmd = [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", "net_null0",
           "--", "--placement", str(pfile)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sanitizer_env())
    chunks: list[str] = []
    errs: list[str] = []
    assert p.stdout is not None and p.stderr is not None
    stdout, stderr = p.stdout, p.stderr
    readers = [threading.Thread(target=lambda: chunks.extend(iter(stdout.readline, "")), daemon=True),
               threading.Thread(target=lambda: errs.append(stderr.read()), daemon=True)]
    for t in readers:
        t.start()

    def snapshots() -> list[dict]:
        try:
            return json_documents("".join(chunks))
        except json.JSONDecodeError:  # a document still being written
            return []

    # No fixed sleeps (a loaded machine takes seconds to start EAL): signal
    # only once the handler is installed, then ask for snapshots until one
    # shows packets forwarded (a request before the run starts gives an
    # empty one), then stop.
    wait_catches_signal(p, signal.SIGUSR1)
    end = time.monotonic() + 120
    while not any(d["total"]["tx_packets"] > 0 for d in snapshots()):
        assert p.poll() is None and time.monotonic() < end, "no snapshot with packets forwarded"
        p.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    for t in readers:
        t.join(timeout=60)
    assert p.returncode == 0, "".join(errs)
    docs = json_documents("".join(chunks))
    assert len(docs) >= 2, "".join(chunks)[:2000]
    *snaps, final = docs
    assert all(d["in_progress"] is True and d["accounting_ok"] is None for d in snaps)
    assert final["in_progress"] is False and final["accounting_ok"] is True
    tx = [d["total"]["tx_packets"] for d in docs]
    assert tx == sorted(tx) and tx[-2] > 0


def test_falls_back_to_no_huge_when_hugepages_are_short(build_dir: Path, file_prefix: str,
                                                         tmp_path: Path) -> None:
    # A pool of big mbufs larger than the free hugepages (few objects, so
    # cheap to create): the runtime must add --no-huge -m itself, say so
    # once, and run.
    # (more than the whole pool: hugepage files that ended processes left count as free)
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    pool = int(info["HugePages_Total"].split()[0]) * int(info["Hugepagesize"].split()[0]) * 1024
    mbufs = max(4096, (pool + (256 << 20)) // 65000)
    cap = make_capture(tmp_path, "in.pcap", "l1", 100, 0.0, 8)
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap}", "net_null0"], placement([instance(0, 0, 1, 0)], "l1"),
                    ["--packets", "100", "--mbufs", str(mbufs), "--mbuf-size", "65000"])
    res.assert_clean()
    assert res.stderr.count("running with --no-huge -m") == 1, res.stderr
    assert res.stats["total"]["rx_packets"] == 100 and res.stats["accounting_ok"] is True
    # and the statistics say the figures come from 4 KiB pages
    assert res.stats["hugepages"] is False


def test_stuck_tx_port_ends_with_tx_failed(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    # net_ring0 loops its tx ring to its own rx queue, which nobody reads:
    # after 1023 packets it refuses everything.  Backpressure stops R; at the
    # stop T gives up after 1 s and counts what it could not send.
    cap = make_capture(tmp_path, "in.pcap", "l1", 256, 0.0, 9)
    res = run_ipfwd(build_dir, file_prefix, tmp_path,
                    [f"net_pcap0,rx_pcap={cap},infinite_rx=1", "net_ring0"],
                    placement([instance(0, 0, 1, 0)], "l1"), ["--duration", "1"])
    res.assert_clean()
    t = res.stats["total"]
    assert t["tx_packets"] == 1023  # the ring's capacity
    assert t["dropped_by_reason"]["tx_failed"] > 0
    assert t["dropped_packets"] == t["dropped_by_reason"]["tx_failed"]
    assert t["rx_packets"] == t["tx_packets"] + t["dropped_packets"] + t["queued_packets"]
    assert res.stats["accounting_ok"] is True
    # R received no more than the rings and T's burst could hold.
    assert t["rx_packets"] <= 1023 + 2 * 1023 + 2 * 32
