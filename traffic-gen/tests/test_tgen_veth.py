"""pp-tgen and ipfwd over real kernel interfaces (assign.vethbed): three
network namespaces joined by veth pairs, made and removed by each test.

Each packet's way: pp-tgen (gen end, --attach) -> veth -> ipfwd (d0, d1,
--attach) -> veth -> pp-tgen (sink end).  Every packet is accounted for on
both attach modes; the bed leaves no namespace behind, also when the code
inside it fails."""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from assign.vethbed import VethBed, namespaces
from harness import SANITIZER_MARKS, sanitizer_env
from tgen_harness import tgen_binary

PACKETS = 2000
TAG = "ppvt"  # the tests' beds: ppvt + random hex


def xdp_env(tmp: Path) -> dict[str, str]:
    """sanitizer_env, less one leak that is not ours: DPDK 22.11's af_xdp
    close leaves the 80-byte umem struct libxdp's xsk_umem__create made
    (xsk_umem__delete refuses while it counts a socket), once per port per
    process.  Suppressed by that frame only; libxdp has no frame pointers,
    hence the slow unwinder."""
    env = sanitizer_env()
    supp = tmp / "lsan-libxdp.supp"
    supp.write_text("leak:xsk_umem__create\n")
    env["LSAN_OPTIONS"] = f"suppressions={supp}"
    env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"] + ":fast_unwind_on_malloc=0"
    return env


@pytest.fixture
def bed():
    b = VethBed(TAG)
    with b:
        yield b
    assert not [n for n in namespaces() if n.startswith(b.prefix)], "the bed left namespaces behind"


def start_ipfwd(build: Path, bed: VethBed, tmp: Path, mode: str, prefix: str,
                env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    placement = tmp / "placement.json"
    placement.write_text(json.dumps({"app": "ipfwd", "variant": "l1", "allow_colocate": True, "instances": [
        {"rx": {"port": 0, "queue": 0}, "tx": {"port": 1, "queue": 0}, "tasks": {"R": 0, "P": 0, "T": 0}}]}))
    stats, err = tmp / "ipfwd.json", tmp / "ipfwd.err"
    cmd = [str(build / "apps" / "ipfwd" / "ipfwd"), "--no-pci", "--file-prefix", prefix + "f",
           "--log-level", "lib.eal:warning", "--", "--attach", bed.attach("d0"), "--attach", bed.attach("d1"),
           "--attach-mode", mode, "--placement", str(placement), "--lookup", "lpm",
           "--routes", str(bed.routes_file(tmp / "routes.txt")), "--stats", str(stats)]
    with err.open("w") as f:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=f, env=env)
    end = time.monotonic() + 120
    while "attached with" not in err.read_text():
        if p.poll() is not None or time.monotonic() > end:
            p.kill()
            pytest.fail(f"ipfwd did not set its ports up: {err.read_text()[-2000:]}")
        time.sleep(0.05)
    return p, stats


@pytest.mark.parametrize("mode", ["af_xdp", "af_packet"])
def test_veth_round_trip_accounts_for_every_packet(build_dir, bed, tmp_path, file_prefix, mode):
    env = xdp_env(tmp_path)
    fw, fw_stats = start_ipfwd(build_dir, bed, tmp_path, mode, file_prefix, env)
    try:
        stats = tmp_path / "tgen.json"
        cmd = [str(tgen_binary(build_dir)), "-l", "0,1", "--no-pci", "--file-prefix", file_prefix + "g",
               "--log-level", "lib.eal:warning", "--", "--attach", bed.attach("g0"), "--attach", bed.attach("s0"),
               "--attach-mode", mode, "--tx-port", "0", "--rx-port", "1", "--packets", str(PACKETS),
               "--rate", "4k", "--start-after", "0.5", "--drain", "2", "--stats", str(stats), *bed.tgen_fields()]
        g = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    finally:
        fw.send_signal(signal.SIGINT)
        fw.wait(timeout=60)
    fw_log = (tmp_path / "ipfwd.err").read_text()
    assert g.returncode == 0, g.stderr[-2000:]
    assert fw.returncode == 0, fw_log[-2000:]
    assert not any(m in g.stderr + fw_log for m in SANITIZER_MARKS)
    gen, app = json.loads(stats.read_text()), json.loads(fw_stats.read_text())
    # each side says how it attached, and got what was asked
    assert {a["attach"] for a in gen["config"]["attached"]} == {mode}
    assert {a["attach"] for a in app["attached"]} == {mode}
    assert f"attached with {mode}" in g.stderr and f"attached with {mode}" in fw_log
    # every packet: sent = forwarded + dropped + queued = received at the sink
    assert gen["tx"]["packets"] == PACKETS and gen["tx"]["link_full"] == 0
    assert app["accounting_ok"] is True
    tot = app["total"]
    assert tot["rx_packets"] == PACKETS, tot
    assert tot["tx_packets"] == PACKETS and tot["dropped_packets"] == 0 and tot["queued_packets"] == 0, tot
    rx = gen["rx"]
    assert rx["unique_packets"] == PACKETS and rx["lost"] == 0 and rx["duplicates"] == 0, rx
    assert rx["foreign_packets"] == 0, rx  # nothing but the test's traffic crossed the bed
    assert rx["latency_ns"]["samples"] == PACKETS
    # both processes took their XDP programs off the interfaces as they ended
    # (one left on would take the next program's place and the kernel's traffic)
    for end in ("g0", "d0", "d1", "s0"):
        ns, iface = bed.attach(end).split("/")
        link = subprocess.run(["ip", "-n", ns, "-d", "link", "show", iface], capture_output=True,
                              text=True, check=True).stdout
        assert "prog/xdp" not in link, (end, link)


def test_bed_is_removed_when_the_code_inside_fails():
    b = VethBed(TAG)
    with pytest.raises(RuntimeError, match="inside the bed"):
        with b:
            assert len([n for n in namespaces() if n.startswith(b.prefix)]) == 3
            raise RuntimeError("inside the bed")
    assert not [n for n in namespaces() if n.startswith(b.prefix)]
    b.remove()  # twice is harmless


def test_attach_refusals_name_the_value(build_dir, bed, tmp_path, file_prefix):
    base = [str(tgen_binary(build_dir)), "-l", "0,1", "--no-pci", "--file-prefix", file_prefix,
            "--log-level", "lib.eal:warning", "--"]
    p = subprocess.run(base + ["--attach", "a/b/c"], capture_output=True, text=True, timeout=60, env=sanitizer_env())
    assert p.returncode == 2 and "'a/b/c' is not [NETNS/]IFACE" in p.stderr, p.stderr
    p = subprocess.run(base + ["--attach-mode", "xdp"], capture_output=True, text=True, timeout=60,
                       env=sanitizer_env())
    assert p.returncode == 2 and "'xdp' is not an attach mode" in p.stderr, p.stderr
    gone = f"{bed.prefix}-nosuch/{bed.ifname['g0']}"
    p = subprocess.run(base + ["--attach", gone], capture_output=True, text=True, timeout=60, env=sanitizer_env())
    assert p.returncode == 1 and f"/run/netns/{bed.prefix}-nosuch" in p.stderr, p.stderr
    wrong = f"{bed.ns['gen']}/{bed.ifname['s0']}"  # the sink's end is not in gen
    p = subprocess.run(base + ["--attach", wrong], capture_output=True, text=True, timeout=60, env=sanitizer_env())
    assert p.returncode == 1 and f"no interface {bed.ifname['s0']} in network namespace {bed.ns['gen']}" in p.stderr
