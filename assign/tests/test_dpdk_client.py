"""A workload whose traffic is a client command in a network namespace
(assign/WORKLOADS.md, traffic.source = "client"): the backend makes the
namespace and the veth, runs the client there once the app's port is up,
runs the check once the app has ended, reads the value where the file
says, and removes everything afterwards, also when the client fails.  The
app is stateful on net_af_packet, dumping its flow table into {workdir};
the client sends a bounded count of UDP datagrams through the veth; the
check reads the dump."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions
from assign.backends.dpdk.client import NET_STATE
from assign.topology import get_machine
from assign.workloads import Workload, load_workload_file

PREFIX = "pp41m"  # this branch's namespaces and veths (names: pp41m + 6 hex digits, h/c)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("nft") is None,
                                reason="network namespaces need root, iproute2 and nftables (tools/setup.sh)")

CLIENT = """\
import json, socket, sys, time
n, fail = int(sys.argv[1]), sys.argv[2] == "fail"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(b"pipeplace" * 2, ("10.0.0.%d" % (1 + i % 16), 9))  # 16 flows
    if i % 32 == 31:
        time.sleep(0.001)  # a burst at a time: the af_packet ring is never the limit
print("a line that is not the result")
print(json.dumps({"sent": n}))
sys.exit(3 if fail else 0)
"""

CHECK = """\
import json, sys
flows = json.load(open(sys.argv[1]))["flows"]
print(json.dumps({"flows": len(flows), "packets": sum(f["packets"] for f in flows)}))
"""

WORKLOAD = """\
name = "{name}"
default_tier = "test"
[app]
name = "stateful"
options = ["--dump-flows", "{{workdir}}/flows.json"]
[value]
from = "stats"
path = "total.tx_packets"
unit = "packets"
about = "datagrams of the client that stateful forwarded"
[traffic]
source = "client"
[traffic.client]
vdevs = ["net_af_packet0,iface={{veth_host}},qpairs={{instances}}", "net_null0"]
address = "198.18.41.2/24"
setup = [["ip", "-n", "{{netns}}", "neigh", "add", "198.18.41.1", "lladdr", "02:00:00:00:41:01", "dev", "{{veth_ns}}"],
         ["ip", "-n", "{{netns}}", "route", "add", "10.0.0.0/24", "via", "198.18.41.1"]]
command = ["{{python}}", "{{here}}/client.py", "{{count}}", "{mode}"]
check = ["{{python}}", "{{here}}/check.py", "{{workdir}}/flows.json"]
timeout_s = 60
[tiers.test]
count = 300
[result]
sent = "client.sent"
forwarded = "stats.total.tx_packets"
flows = "check.flows"
flow_packets = "check.packets"
"""


def leftovers() -> list[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = os.listdir("/sys/class/net")
    state = os.listdir(NET_STATE) if NET_STATE.is_dir() else []
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout.split()
    return [n for n in ns + links + state + tables if n.startswith(PREFIX)]


@pytest.fixture
def net_prefix(monkeypatch):
    monkeypatch.setenv("PIPEPLACE_NET_PREFIX", PREFIX)
    assert leftovers() == [], "namespaces of an earlier run of this test are still there"
    yield
    left = leftovers()
    for name in {n[:len(PREFIX) + 6] for n in left}:  # never leave them, even when the test failed
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", name + "h"], capture_output=True)
        subprocess.run(["nft", "delete", "table", "netdev", name], capture_output=True)
        (NET_STATE / f"{name}.pid").unlink(missing_ok=True)
    assert left == [], f"left behind: {left}"


def workload(tmp_path: Path, name: str, mode: str) -> Workload:
    (tmp_path / "client.py").write_text(CLIENT)
    (tmp_path / "check.py").write_text(CHECK)
    f = tmp_path / f"{name}.toml"
    f.write_text(WORKLOAD.format(name=name, mode=mode))
    load_workload_file(f)
    return Workload(name, 1)


def test_the_clients_datagrams_are_forwarded_and_the_namespace_goes(build_dir: Path, tmp_path: Path,
                                                                     net_prefix) -> None:
    wl = workload(tmp_path, "pp41m-veth-ok", "ok")
    opts = DpdkOptions(build_dir=build_dir, cache_dir=tmp_path / "cache")
    with DpdkBackend(get_machine("local"), wl, opts, allow_colocate=True) as be:
        name = be.client.name
        assert name.startswith(PREFIX) and Path(f"/run/netns/{name}").exists()
        assert (NET_STATE / f"{name}.pid").read_text().strip() == str(os.getpid())
        r = be.measure_one([0, 0, 0])
        d = be.describe()
    assert r.status == "ok", r.reason
    # every datagram crossed the veth into the app and out of it: no loss on this path, no strays; the
    # check read the flow table the app dumped when it ended
    assert r.value == 300 and r.extra["result"] == {"sent": 300, "forwarded": 300, "flows": 16,
                                                    "flow_packets": 300}, r.extra
    assert r.extra["client"] == {"client": {"sent": 300}, "check": {"flows": 16, "packets": 300}}
    assert r.extra["runner"] == "client"
    assert d["traffic"]["host_stack"].startswith("never sees")
    assert d["window"] == {"until": "the client command ends"} and d["workload"]["client"]["address"] == \
        "198.18.41.2/24" and d["traffic"]["tier"] == "test" and d["value"].startswith("total.tx_packets")
    assert leftovers() == []


def test_a_client_that_fails_is_a_failure_with_its_reason_and_nothing_is_left(build_dir: Path, tmp_path: Path,
                                                                             net_prefix) -> None:
    wl = workload(tmp_path, "pp41m-veth-fail", "fail")
    opts = DpdkOptions(build_dir=build_dir, cache_dir=tmp_path / "cache")
    with DpdkBackend(get_machine("local"), wl, opts, allow_colocate=True) as be:
        r = be.measure_one([0, 0, 0])
    assert r.status == "failed" and r.value is None
    assert r.reason.count("client: exit status 3") == 2, r.reason  # tried twice, as any failed attempt
    assert leftovers() == []
