"""--serve: one DPDK process runs placement after placement from stdin,
re-pinning its workers, and answers each line with one statistics line (or
an error line naming the input line)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from ipfwd_harness import instance, ipfwd_binary, placement, sanitizer_env  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ipfwd_traffic  # noqa: E402
import harness  # noqa: E402  (tests/harness, on the path through conftest)


def serve(build_dir: Path, file_prefix: str, cap: Path, lines: list[str]) -> tuple[int, list[dict], str]:
    cmd = [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", "net_null0",
           "--", "--serve", "--duration", "0.5", "--warmup", "0.2"]
    p = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True,
                       timeout=120, env=sanitizer_env())
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines()], p.stderr


def test_serve_runs_each_line(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = tmp_path / "in.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 512, 16, 64, 0.1, 1))
    first = placement([instance(0, 0, 1, 0, r=0, p=1, t=0)], "l1")
    bad = placement([instance(0, 0, 1, 0, r=0, p=99, t=0)], "l1")
    swapped = placement([instance(0, 0, 1, 0, r=1, p=0, t=1)], "mem")
    rc, out, err = serve(build_dir, file_prefix, cap,
                         [json.dumps(first), json.dumps(bad), "", "{not json", json.dumps(swapped)])
    assert rc == 1, err  # two lines failed
    assert [o["line"] for o in out] == [1, 2, 4, 5]
    assert "error" not in out[0] and out[0]["accounting_ok"] is True and out[0]["variant"] == "l1"
    assert "stdin line 2: instance 0 task P: context 99 does not exist" in out[1]["error"]
    assert "stdin line 4: line 1 column" in out[2]["error"] and "malformed JSON" in out[2]["error"]
    last = out[3]
    assert "error" not in last and last["accounting_ok"] is True and last["variant"] == "mem"
    assert last["app_stats"]["table_bytes"] >= 4 * last["app_stats"]["llc_bytes"]
    # Workers re-pinned themselves: the tasks ran where each placement said.
    for o in (out[0], last):
        for t in o["tasks"]:
            assert t["observed_cpu"] == t["context"], t
        assert o["total"]["rx_packets"] > 0 and 0.4 < o["duration_s"] < 2.5  # loose above: a loaded box may deschedule the main lcore
    assert {t["role"]: t["context"] for t in last["tasks"]} == {"R": 1, "P": 0, "T": 1}


def test_serve_all_good_exits_zero(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = tmp_path / "in.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 256, 16, 64, 0.0, 2))
    p = json.dumps(placement([instance(0, 0, 1, 0)], "l1"))
    rc, out, err = serve(build_dir, file_prefix, cap, [p, p, p])
    assert rc == 0, err
    assert len(out) == 3 and all(o["accounting_ok"] is True for o in out)


def test_serve_keeps_ports_up_through_many_placements(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    """50 placements (the 1,000-placement version is apps/ipfwd/tests/soak_serve.py):
    the ports are started once, for the first placement, and every later one
    finds them up; the workers are re-pinned each time; every packet is
    accounted for in each placement (rx = tx + dropped, nothing left queued:
    what was in flight at the stop was drained); at the end what the rx
    queues still held is counted on stderr."""
    cap = tmp_path / "in.pcap"
    ipfwd_traffic.write_pcap(cap, ipfwd_traffic.generate("l1", 256, 16, 64, 0.1, 3))
    ctx = list(harness.two_contexts())
    lines = [json.dumps(placement([instance(0, 0, 1, 0, r=ctx[k % 2], p=ctx[(k // 2) % 2], t=ctx[(k // 4) % 2])],
                                  "l1"))
             for k in range(50)]
    cmd = [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--vdev", f"net_pcap0,rx_pcap={cap},infinite_rx=1", "--vdev", "net_null0",
           "--", "--serve", "--packets", "3000"]
    p = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True,
                       timeout=300, env=sanitizer_env())
    assert p.returncode == 0, p.stderr[-3000:]
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(out) == 50
    assert out[0]["ports"] == {"kept_up": False, "started": 2, "reconfigured": 2}
    for k, o in enumerate(out[1:], 1):
        assert o["ports"] == {"kept_up": True, "started": 0, "reconfigured": 0}, (k, o["ports"])
    for k, o in enumerate(out):
        t = o["total"]
        assert o["accounting_ok"] is True and t["rx_packets"] == 3000, (k, t)
        assert t["queued_packets"] == 0 and t["rx_packets"] == t["tx_packets"] + t["dropped_packets"], (k, t)
        want = json.loads(lines[k])["instances"][0]["tasks"]
        for task in o["tasks"]:
            assert task["observed_cpu"] == want[task["role"]], (k, task)
    end = [ln for ln in p.stderr.splitlines() if ln.startswith("pipeplace: serve end: ")]
    assert len(end) == 1, p.stderr[-3000:]
    rep = json.loads(end[0][len("pipeplace: serve end: "):])
    # net_pcap infinite_rx never runs dry: the drain stops at its cap and says so
    assert rep["kind"] == "measured" and rep["lines"] == 50
    assert [(q["port"], q["queue"], q["capped"]) for q in rep["queues"]] == [(0, 0, True)]
    # the ports' own counters over all 50 placements: every packet the rx port handed out is in some
    # placement's rx or in the final drain, every packet the placements sent reached the tx port
    rx_port, tx_port = rep["ports"]
    assert rx_port["ipackets"] == sum(o["total"]["rx_packets"] for o in out) + rep["drained_packets"], rep
    assert tx_port["opackets"] == sum(o["total"]["tx_packets"] for o in out), rep


def test_serve_reconfigures_a_port_for_more_queues(build_dir: Path, file_prefix: str) -> None:
    """A placement that needs more queues than the ports have: reconfigured
    (stopped, set up with more queues, started); the next one with fewer
    queues finds them up."""
    a, b = harness.two_contexts()
    one = placement([instance(0, 0, 1, 0, r=a, p=a, t=a)], "l1")
    two = placement([instance(0, 0, 1, 0, r=a, p=a, t=a), instance(0, 1, 1, 1, r=b, p=b, t=b)], "l1")
    cmd = [str(ipfwd_binary(build_dir)), "--no-pci", "--file-prefix", file_prefix,
           "--vdev", "net_null0", "--vdev", "net_null1", "--", "--serve", "--packets", "2000"]
    p = subprocess.run(cmd, input="\n".join(json.dumps(x) for x in (one, two, one)) + "\n",
                       capture_output=True, text=True, timeout=120, env=sanitizer_env())
    assert p.returncode == 0, p.stderr[-3000:]
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert [o["ports"] for o in out] == [{"kept_up": False, "started": 2, "reconfigured": 2},
                                         {"kept_up": False, "started": 2, "reconfigured": 2},
                                         {"kept_up": True, "started": 0, "reconfigured": 0}]
    for o in out:  # net_null's frames are not IPv4: ipfwd drops them, each one counted
        t = o["total"]
        assert o["accounting_ok"] is True and t["rx_packets"] == 2000 * len(o["instances"]), t
