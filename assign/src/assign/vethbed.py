"""A test bed of real kernel interfaces: three network namespaces joined by
veth pairs, built and always removed by the tooling.

    gen  [g0] ---veth--- [d0]  dut  [d1] ---veth--- [s0]  sink
    198.18.0.1/24   198.18.0.2/24    198.19.0.2/24   198.19.0.1/24

The device under test forwards what arrives on d0 out of d1: Linux itself
(`ip_forward=1`, the route 198.19.1.0/24 via 198.19.0.1, a permanent
neighbour entry for the sink's address) or a DPDK app attached to d0 and d1
(`--attach`, with the kernel's forwarding off).  Traffic goes to
198.19.1.0/24 (ROUTE), so both forward it by the same route.  IPv6 is off on
every interface so that nothing but the test's traffic crosses the bed
(no router solicitations, no MLD).  Addresses come from 198.18.0.0/15
(RFC 2544's benchmarking range); nothing is routed out.

Names share a prefix unique to the bed (a given tag plus random hex), so
beds of concurrent runs never meet.  `with VethBed(...) as bed:` removes the
namespaces on the way out, whatever happened inside, and kills what still
runs in them; `sweep(prefix)` removes what a killed run left behind.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

NETNS_DIR = Path("/run/netns")
ROUTE = "198.19.1.0/24"        # where the traffic goes: the one route both forwarders use
SINK_HOP = "198.19.0.1"        # the sink's address: the route's next hop
ADDR = {"g0": "198.18.0.1/24", "d0": "198.18.0.2/24", "d1": "198.19.0.2/24", "s0": "198.19.0.1/24"}
ROLES = ("gen", "dut", "sink")


class VethBedError(RuntimeError):
    """A command that builds or changes the bed failed."""


def _run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise VethBedError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def namespaces() -> list[str]:
    """The names `ip netns` knows now."""
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _kill_members(ns: str) -> None:
    """Kills what still runs inside ns (only this bed's processes can be there)."""
    for pid in _run(["ip", "netns", "pids", ns], check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ValueError, ProcessLookupError, PermissionError):
            pass


def sweep(prefix: str) -> list[str]:
    """Removes every namespace whose name starts with prefix (their veths go
    with them); returns the names removed."""
    gone = []
    for ns in namespaces():
        if ns.startswith(prefix):
            _kill_members(ns)
            _run(["ip", "netns", "del", ns], check=False)
            gone.append(ns)
    return gone


@dataclass
class VethBed:
    """tag: the start of every name (a branch or tool tag, e.g. "ppv");
    the bed adds random hex of its own."""

    tag: str = "ppv"
    prefix: str = ""
    ns: dict[str, str] = field(default_factory=dict)      # role -> namespace name
    ifname: dict[str, str] = field(default_factory=dict)  # g0, d0, d1, s0 -> interface name
    mac: dict[str, str] = field(default_factory=dict)
    up: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9]{0,5}", self.tag):
            raise ValueError(f"VethBed tag {self.tag!r}: 1-6 lower-case letters and digits, a letter first")
        self.prefix = self.tag + uuid.uuid4().hex[:6]
        self.ns = {r: f"{self.prefix}-{r}" for r in ROLES}
        self.ifname = {k: f"{self.prefix}{k}" for k in ADDR}  # at most 14 characters (IFNAMSIZ 16)

    # -- life cycle ---------------------------------------------------------
    def __enter__(self) -> "VethBed":
        try:
            self.build()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def nsexec(self, role: str, *cmd: str) -> list[str]:
        """A command line that runs cmd inside role's namespace."""
        return ["ip", "netns", "exec", self.ns[role], *cmd]

    def _in(self, role: str, *cmd: str) -> str:
        return _run(self.nsexec(role, *cmd)).stdout

    def build(self) -> None:
        for r in ROLES:
            _run(["ip", "netns", "add", self.ns[r]])
        self.up = True
        i = self.ifname
        for a, b, ra, rb in (("g0", "d0", "gen", "dut"), ("d1", "s0", "dut", "sink")):
            # one queue each: an AF_XDP socket binds one queue, and traffic
            # must not reach a queue nobody reads
            _run(["ip", "link", "add", i[a], "netns", self.ns[ra], "numtxqueues", "1", "numrxqueues", "1",
                  "type", "veth", "peer", "name", i[b], "netns", self.ns[rb], "numtxqueues", "1",
                  "numrxqueues", "1"])
        for r in ROLES:
            self._in(r, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
            self._in(r, "ip", "link", "set", "lo", "up")
        for k, role in (("g0", "gen"), ("d0", "dut"), ("d1", "dut"), ("s0", "sink")):
            self._in(role, "ip", "link", "set", i[k], "up")
            self._in(role, "ip", "addr", "add", ADDR[k], "dev", i[k])
            out = self._in(role, "cat", f"/sys/class/net/{i[k]}/address")
            self.mac[k] = out.strip()
        self._in("dut", "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0")
        self._in("dut", "ip", "route", "replace", ROUTE, "via", SINK_HOP, "dev", i["d1"])
        self._in("dut", "ip", "neigh", "replace", SINK_HOP, "lladdr", self.mac["s0"], "dev", i["d1"],
                 "nud", "permanent")
        self.kernel_forwarding(False)

    def kernel_forwarding(self, on: bool) -> None:
        """Linux forwards d0 -> d1 (the anchor) or not (a DPDK app does)."""
        self._in("dut", "sysctl", "-qw", f"net.ipv4.ip_forward={1 if on else 0}")

    def steer_rx(self, end: str, contexts: list[int]) -> str:
        """Moves the kernel's receive work of one veth end (its IP input, and
        so Linux's forwarding of what arrives there) to contexts, through
        RPS; returns the rps_cpus mask written.  Unsteered it runs inside
        the peer's transmit, on the sender's context.  An empty list puts it
        back there."""
        bits = format(sum(1 << c for c in contexts), "x")
        # sysfs's cpumask: 32-bit words in hex, commas between them
        mask = ",".join(reversed([bits[max(0, k - 8):k] for k in range(len(bits), 0, -8)]))
        role = {"g0": "gen", "d0": "dut", "d1": "dut", "s0": "sink"}[end]
        path = f"/sys/class/net/{self.ifname[end]}/queues/rx-0/rps_cpus"
        _run(self.nsexec(role, "sh", "-c", f"echo {mask} > {path}"))
        return mask

    def remove(self) -> None:
        """Kills what runs in the namespaces and deletes them (their veths go
        with them); safe to call twice or on a half-built bed."""
        for r in ROLES:
            ns = self.ns.get(r)
            if ns and (NETNS_DIR / ns).exists():
                _kill_members(ns)
                _run(["ip", "netns", "del", ns], check=False)
        self.up = False

    # -- what the tools attach to --------------------------------------------
    def attach(self, end: str) -> str:
        """The `--attach NETNS/IFACE` value of one veth end (g0, d0, d1, s0)."""
        role = {"g0": "gen", "d0": "dut", "d1": "dut", "s0": "sink"}[end]
        return f"{self.ns[role]}/{self.ifname[end]}"

    def routes_file(self, path: Path) -> Path:
        """The same route for ipfwd --lookup lpm (l3fwd's rule format); next
        hop 0 (ipfwd rewrites MACs by next hop; the sink takes any)."""
        path.write_text(f"# the route the kernel has in {self.ns['dut']}\nR{ROUTE} 0\n")
        return path

    def tgen_fields(self) -> list[str]:
        """pp-tgen flags for traffic the dut forwards by ROUTE: to the dut's
        MAC on d0, from the generator's, 256 destinations in the route."""
        base = ROUTE.split("/")[0].rsplit(".", 1)[0]
        return ["--dst-mac", self.mac["d0"], "--src-mac", self.mac["g0"],
                "--src-ip", ADDR["g0"].split("/")[0], "--dst-ip", f"{base}.0-{base}.255",
                "--proto", "udp", "--ttl", "64"]
