"""Running a TCP-terminating app (netdedup, netstreamcluster: R on
runtime/stack) end to end on one machine: two network namespaces joined
by a veth pair (net_af_packet on the server's end) or net_tap, loss on the
wire (tc netem, or nftables on a bridge where the kernel has no netem), the
app with a placement in one namespace, its clients in the other, the app's
statistics read back, and everything removed on the way out, also when
something fails (and what a killed run left, by its pid).

Each app has its own Layout (name prefix, addresses from 198.18.0.0/15,
TCP port), so two apps' runs never meet.  apps/netdedup/run_netdedup.py and
apps/netstreamcluster/run_netstreamcluster.py are the users; the client
helpers at the end are their clients'.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from cpu_busy import BusySampler  # beside this file, on the same path

class RunError(Exception):
    """A failure the result reports (with what was learnt before it)."""


def sh(*args: str, check: bool = True, ns: str | None = None,
       timeout: float = 30) -> subprocess.CompletedProcess[str]:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RunError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def remove_stale(prefix: str) -> None:
    """Namespaces of earlier runs whose process is gone (killed hard)."""
    for line in sh("ip", "netns", "list", check=False).stdout.splitlines():
        m = re.match(rf"^({prefix}-([0-9a-f]{{6}})-[scmp])\b", line)
        if m and not Path(f"/proc/{int(m.group(2), 16)}").exists():
            sh("ip", "netns", "del", m.group(1), check=False)


@dataclass(frozen=True)
class Layout:
    """An app's corner of 198.18.0.0/15: its name prefix, addresses and TCP port."""
    prefix: str
    server_ip: str
    client_ip: str
    prefix_len: int
    port: int


@dataclass
class Net:
    layout: Layout
    port: str  # af_packet | tap | kernel (veth, server address in the server's namespace)
    middle: bool = False  # a bridge namespace between the two (the loss fallback)
    tag: str = field(default_factory=lambda: f"{os.getpid():06x}")
    loss: dict[str, Any] | None = None

    @property
    def ns_s(self) -> str:
        return f"{self.layout.prefix}-{self.tag}-s"

    @property
    def ns_c(self) -> str:
        return f"{self.layout.prefix}-{self.tag}-c"

    @property
    def ns_m(self) -> str:
        return f"{self.layout.prefix}-{self.tag}-m"

    def if_m(self, side: str) -> str:
        """The middle namespace's ends: "s" towards the server, "c" the client, "b" the bridge."""
        return f"{self.layout.prefix}{self.tag}{dict(s='m', c='n', b='b')[side]}"

    @property
    def if_s(self) -> str:
        return f"{self.layout.prefix}{self.tag}s"

    @property
    def if_c(self) -> str:
        """The client's interface: its veth end, or the tap."""
        return f"{self.layout.prefix}{self.tag}{'t' if self.port == 'tap' else 'c'}"


def _quiet_ns(ns: str) -> None:
    sh("ip", "link", "set", "lo", "up", ns=ns)
    # IPv6 off: no router or neighbour solicitations on the wire
    sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=ns, check=False)
    sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=ns, check=False)


def _no_offloads(ns: str, ifname: str) -> None:
    """The frames must be on the wire as they are: lwIP checks every
    checksum and takes frames of at most the MTU (no TSO/GSO/GRO)."""
    p = sh("ethtool", "-K", ifname, "tx", "off", "rx", "off", "tso", "off", "gso", "off",
           "gro", "off", ns=ns, check=False)
    if p.returncode not in (0, 1):  # 1: some feature cannot change (tap): fine
        raise RunError(f"ethtool -K {ifname}: {p.stderr.strip()}")


def netem_available(prefix: str) -> bool:
    """Whether this kernel has tc's netem (some VMs' kernels lack sch_netem):
    tried on the loopback of a namespace of our own, not the host's."""
    ns = f"{prefix}-{os.getpid():06x}-p"
    sh("ip", "netns", "add", ns)
    try:
        return sh("tc", "qdisc", "add", "dev", "lo", "root", "netem", "loss", "0%", ns=ns,
                  check=False).returncode == 0
    finally:
        sh("ip", "netns", "del", ns, check=False)


@contextlib.contextmanager
def network(layout: Layout, port: str, middle: bool = False) -> Iterator[Net]:
    """The namespaces (and the veths); removed on the way out.  middle: the
    two ends are joined through a bridge in a third namespace, where loss
    can be injected on the forwarding path (unseen by either end's stack)."""
    if os.geteuid() != 0:
        raise RunError("this needs root (network namespaces, DPDK)")
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise RunError(f"{tool} not found (tools/setup.sh installs it)")
    remove_stale(layout.prefix)
    if middle and port == "tap":
        raise RunError("the bridge namespace (loss without netem) is made for veth ports only")
    net = Net(layout, port, middle)
    spaces = [net.ns_s, net.ns_c] + ([net.ns_m] if middle else [])
    try:
        for ns in spaces:
            sh("ip", "netns", "add", ns)
            _quiet_ns(ns)
        if middle:
            pairs = [(net.if_s, net.ns_s, net.if_m("s")), (net.if_c, net.ns_c, net.if_m("c"))]
            sh("ip", "link", "add", net.if_m("b"), "type", "bridge", ns=net.ns_m)
            for end, ns, mid in pairs:
                sh("ip", "link", "add", end, "type", "veth", "peer", "name", mid)
                sh("ip", "link", "set", end, "netns", ns)
                sh("ip", "link", "set", mid, "netns", net.ns_m)
                sh("ip", "link", "set", mid, "master", net.if_m("b"), ns=net.ns_m)
                sh("ip", "link", "set", mid, "up", ns=net.ns_m)
                _no_offloads(net.ns_m, mid)
            sh("ip", "link", "set", net.if_m("b"), "up", ns=net.ns_m)
        if port != "tap":
            if not middle:
                sh("ip", "link", "add", net.if_s, "type", "veth", "peer", "name", net.if_c)
                sh("ip", "link", "set", net.if_s, "netns", net.ns_s)
                sh("ip", "link", "set", net.if_c, "netns", net.ns_c)
            if port == "kernel":
                sh("ip", "addr", "add", f"{layout.server_ip}/{layout.prefix_len}", "dev", net.if_s,
                   ns=net.ns_s)
            sh("ip", "link", "set", net.if_s, "up", ns=net.ns_s)
            _no_offloads(net.ns_s, net.if_s)
            if port == "af_packet":
                _kernel_ignores(net)
            client_up(net)
        yield net
    finally:
        for ns in reversed(spaces):  # removing a namespace removes its interfaces
            sh("ip", "netns", "del", ns, check=False)


def _kernel_ignores(net: Net) -> None:
    """The server's veth end belongs to DPDK: net_af_packet reads every
    frame before the netdev ingress hook, where nftables then drops it, so
    the server namespace's own IP stack does not process each frame a
    second time (to drop it as not its own)."""
    rules = (f"table netdev {net.layout.prefix}dpdk {{\n chain in {{ type filter hook ingress device "
             f"\"{net.if_s}\" priority 0; policy drop; }}\n}}\n")
    r = subprocess.run(["ip", "netns", "exec", net.ns_s, "nft", "-f", "-"], input=rules,
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RunError(f"nft (the server end's ingress drop): {r.stderr.strip()}")


def client_up(net: Net) -> None:
    sh("ip", "addr", "add", f"{net.layout.client_ip}/{net.layout.prefix_len}", "dev", net.if_c,
       ns=net.ns_c)
    sh("ip", "link", "set", net.if_c, "up", ns=net.ns_c)
    _no_offloads(net.ns_c, net.if_c)


def steer_client_rx(net: Net, place: dict[str, Any]) -> dict[str, Any]:
    """The client (its processes, pinned by serve) and the kernel work of
    its end (its TCP, woken by each frame the server sends) run on the
    contexts the app's placement leaves free: the latter through RPS on the
    client's interface, as a NIC's interrupt affinity would put it.
    Unsteered, that work runs inside the sender's transmit: for ours, in
    R's own send on R's context (apps/netdedup/MEASURED.md).  The same for
    both stacks; nothing to steer to when the placement uses every
    context."""
    used = {c for inst in place["instances"] for c in inst["tasks"].values()}
    free = sorted(set(os.sched_getaffinity(0)) - used)
    if not free:
        return {"contexts": [], "why": "the placement uses every context: the client's "
                                       "kernel work runs where the kernel puts it"}
    bits = format(sum(1 << c for c in free), "x")
    # sysfs's cpumask: 32-bit words in hex, commas between them
    mask = ",".join(reversed([bits[max(0, k - 8):k] for k in range(len(bits), 0, -8)]))
    path = f"/sys/class/net/{net.if_c}/queues/rx-0/rps_cpus"
    p = sh("sh", "-c", f"echo {mask} > {path}", ns=net.ns_c, check=False)
    if p.returncode != 0:
        return {"contexts": [], "why": f"RPS refused ({path}: {p.stderr.strip()})"}
    return {"contexts": free, "how": f"the client pinned there, RPS on {net.if_c} "
                                     f"(rps_cpus {mask})"}


def inject_loss(net: Net, percent: float) -> dict[str, Any]:
    """percent% random loss in each direction: tc netem on the egress of
    both veth ends (the tap: the client's end only); where the kernel has
    no netem (network() was asked for the middle namespace), nftables drops
    at random on the bridge's ingress ports, on the forwarding path where
    neither end's stack sees it (a drop at a local interface's egress would
    be a send error the client's TCP sees and retries at once)."""
    if not net.middle:
        ways = []
        for ifname, ns, what in ((net.if_c, net.ns_c, "client->server"),
                                 (net.if_s, net.ns_s, "server->client")):
            if what == "server->client" and net.port == "tap":
                continue
            sh("tc", "qdisc", "add", "dev", ifname, "root", "netem", "loss", f"{percent}%", ns=ns)
            ways.append(f"{what} (tc netem on {ifname})")
        return {"percent": percent, "method": "tc netem", "directions": ways}
    if shutil.which("nft") is None:
        raise RunError("this kernel has no tc netem, and nft (the fallback) is not installed")
    every = max(1, round(100 / percent))
    chains = "".join(
        f" chain {name} {{ type filter hook ingress device \"{net.if_m(side)}\" priority 0; "
        f"numgen inc mod {every} == {every - 1} counter drop; }}\n"
        for name, side in (("to_server", "c"), ("to_client", "s")))
    rules = f"table netdev {net.layout.prefix}loss {{\n{chains}}}\n"
    r = subprocess.run(["ip", "netns", "exec", net.ns_m, "nft", "-f", "-"], input=rules,
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RunError(f"nft (loss without netem): {r.stderr.strip()}")
    return {"percent": 100 / every,
            "method": f"nftables on a bridge between the ends, every {every}th frame each way "
                      "(this kernel has no tc netem; a count, so a run cannot draw no loss)",
            "directions": ["client->server", "server->client"]}


def loss_counts(net: Net, loss: dict[str, Any]) -> dict[str, int]:
    """Frames the loss rules dropped, each way."""
    if loss["method"] == "tc netem":
        got = {}
        for ifname, ns, what in ((net.if_c, net.ns_c, "client_to_server"),
                                 (net.if_s, net.ns_s, "server_to_client")):
            p = sh("tc", "-s", "qdisc", "show", "dev", ifname, ns=ns, check=False)
            m = re.search(r"dropped (\d+)", p.stdout)
            if m:
                got[what] = int(m.group(1))
        return got
    out = sh("nft", "-j", "list", "table", "netdev", f"{net.layout.prefix}loss", ns=net.ns_m, check=False).stdout
    counts: dict[str, int] = {}
    with contextlib.suppress(ValueError):
        for item in json.loads(out).get("nftables", []):
            rule = item.get("rule")
            if rule:
                for e in rule.get("expr", []):
                    if "counter" in e:
                        counts[rule["chain"]] = e["counter"]["packets"]
    return {"client_to_server": counts.get("to_server", 0),
            "server_to_client": counts.get("to_client", 0)}


def default_placement(instances: int, app: str = "netdedup") -> dict[str, Any]:
    """R, P and T of each instance on the contexts this process may use, in
    turn (sharing them when there are fewer than 3 per instance)."""
    ctx = sorted(os.sched_getaffinity(0))
    insts = []
    for i in range(instances):
        r, p, t = (ctx[(3 * i + k) % len(ctx)] for k in range(3))
        if instances == 1 and len(ctx) == 2:
            r, p, t = ctx[0], ctx[1], ctx[0]  # R and T share: P is the heavy one
        insts.append({"rx": {"port": 0, "queue": i}, "tx": {"port": 0, "queue": i},
                      "tasks": {"R": r, "P": p, "T": t}})
    return {"app": app, "allow_colocate": 3 * instances > len(ctx), "instances": insts}


def app_command(exe: Path, net: Net, placement: Path, instances: int, out_dir: Path | None,
                streams: int, stats: Path, extra: list[str], loss: bool = False) -> list[str]:
    if not exe.is_file():
        raise RunError(f"{exe} not built (tools/setup.sh)")
    if net.port == "af_packet":
        vdev = f"net_af_packet0,iface={net.if_s},qpairs={instances}"
        if loss and not net.middle:
            # net_af_packet bypasses the qdisc by default: netem on the
            # server's end would never see what DPDK sends
            vdev += ",qdisc_bypass=0"
    elif net.port == "tap":
        vdev = f"net_tap0,iface={net.if_c}"
    else:
        vdev = "net_null0"  # the kernel stack needs no DPDK port; the placement names one
    cmd = [str(exe), "--no-pci", "--file-prefix", f"{net.layout.prefix}-{net.tag}", "--vdev", vdev,
           "--log-level", "lib.eal:warning", "--",
           "--placement", str(placement), "--stats", str(stats), "--streams", str(streams),
           "--ip", f"{net.layout.server_ip}/{net.layout.prefix_len}",
           "--listen-port", str(net.layout.port)]
    if net.port == "kernel":
        cmd += ["--stack", "kernel"]
    if out_dir is not None:
        cmd += ["--out", str(out_dir)]
    return cmd + extra


def wait_tap_up(net: Net, app: subprocess.Popen[str], deadline: float) -> None:
    """net_tap makes its interface in the server's namespace and sets it up
    when the port starts; then it moves to the client's namespace (before
    any traffic) and is configured there."""
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise RunError(f"the app exited ({app.returncode}) before its tap came up")
        p = sh("ip", "-o", "link", "show", net.if_c, ns=net.ns_s, check=False)
        if p.returncode == 0 and re.search(r"<[^>]*\bUP\b", p.stdout):
            sh("ip", "link", "set", net.if_c, "netns", net.ns_c, ns=net.ns_s)
            client_up(net)
            return
        time.sleep(0.05)
    raise RunError(f"the tap {net.if_c} did not come up in {net.ns_s}")


def stop(p: subprocess.Popen[str], grace: float = 10) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()




def serve(layout: Layout, exe: Path, *, app: str, clients: list[list[str]], sequential: bool = False,
          stack: str = "lwip", port: str = "af_packet", instances: int = 1,
          placement: Path | None = None, loss: float = 0.0, keep: Path | None = None,
          write: bool = True, timeout: float = 300, extra: list[str] | None = None,
          streams: int | None = None, app_env: dict[str, str] | None = None,
          after: Callable[[dict[str, Any], Path | None], None] | None = None) -> dict[str, Any]:
    """One run of the app `exe` (its R on runtime/stack): each client is an
    argv run in the client's namespace (all at once, or one after another
    with sequential), each printing one JSON object (bytes_sent, t0, t1,
    receipts).  The server ends after `streams` streams (default: one per
    client).  after(result, out_dir) reads the app's output before the
    run's files go (unless keep).  Returns the result: the clients' objects,
    the app's statistics and counters, input_bytes, seconds and mb_per_s
    (measured: bytes sent, 10^6, over the clients' wall time from the first
    byte sent to the last receipt read)."""
    if stack == "kernel":
        port = "kernel"
    if not exe.is_file():
        raise RunError(f"{exe} not built (tools/setup.sh)")
    result: dict[str, Any] = {"kind": "measured", "stack": stack, "port": port,
                              "clients": len(clients), "instances": instances, "input_bytes": 0}
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{layout.prefix}-run-", dir=keep))
    procs: list[subprocess.Popen[str]] = []
    try:
        middle = loss > 0 and not netem_available(layout.prefix)
        with network(layout, port, middle) as net:
            place = json.loads(placement.read_text()) if placement else default_placement(instances, app)
            instances = len(place["instances"])
            result["instances"] = instances
            (work / "placement.json").write_text(json.dumps(place))
            result["client_rx_steering"] = steer_client_rx(net, place)
            out_dir = work / "out" if write else None
            if out_dir:
                out_dir.mkdir()
            stats = work / "stats.json"
            cmd = app_command(exe, net, work / "placement.json", instances, out_dir,
                              streams or len(clients), stats, extra or [], loss=loss > 0)
            srv = subprocess.Popen(["ip", "netns", "exec", net.ns_s, *cmd], text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env={**os.environ, **(app_env or {})})
            procs.append(srv)
            deadline = time.monotonic() + timeout
            if port == "tap":
                wait_tap_up(net, srv, deadline)
            if loss > 0:
                net.loss = inject_loss(net, loss)
                result["loss"] = net.loss

            client_ctx = result["client_rx_steering"]["contexts"]
            pin = ["taskset", "-c", ",".join(map(str, client_ctx))] if client_ctx else []

            def client(argv: list[str]) -> subprocess.Popen[str]:
                p = subprocess.Popen(["ip", "netns", "exec", net.ns_c, *pin, *argv], text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                procs.append(p)
                return p

            def collect(c: subprocess.Popen[str]) -> dict[str, Any]:
                # A client still there 2 s after the server ended (one that
                # never reads) is told to stop.
                while c.poll() is None and time.monotonic() < deadline:
                    if srv.poll() is not None:
                        try:
                            c.wait(2)
                        except subprocess.TimeoutExpired:
                            c.terminate()
                        break
                    time.sleep(0.05)
                o, e = c.communicate(timeout=max(1.0, deadline - time.monotonic()))
                try:
                    return json.loads(o)
                except ValueError:
                    raise RunError(f"client exited {c.returncode}: {e.strip()[-2000:]}")

            with BusySampler() as busy:
                if sequential:
                    outs = [collect(client(argv)) for argv in clients]
                else:
                    outs = [collect(c) for c in [client(argv) for argv in clients]]
            try:
                a_out, a_err = srv.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                stop(srv)
                a_out, a_err = srv.communicate()
            result["app_exit"] = srv.returncode
            if srv.returncode != 0:
                result["app_stderr"] = a_err.strip()[-4000:]
            if net.loss:
                result["loss"]["dropped_frames"] = loss_counts(net, net.loss)
        # The network is gone; what is left is reading the results.
        result["client"] = outs
        st = json.loads(stats.read_text()) if stats.is_file() else None
        if st is not None:
            result["app_stats"] = st.get("app_stats", {})
            result["tasks"] = st.get("tasks")
            result["accounting_ok"] = st.get("accounting_ok")
            result["duration_s"] = st.get("duration_s")
        result.update(client_figures(outs))
        if result["seconds"] > 0:
            t0 = min(o["t0"] for o in outs if "t0" in o)
            result["cpu"] = busy.window(t0, t0 + result["seconds"],
                                        sorted(os.sched_getaffinity(0)))
        if after is not None:
            after(result, out_dir)
        return result
    finally:
        for p in procs:
            stop(p, grace=5)
        # EAL's runtime directory of this run's --file-prefix (its
        # hugepage files EAL removes itself)
        shutil.rmtree(f"/var/run/dpdk/{layout.prefix}-{os.getpid():06x}", ignore_errors=True)
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
        else:
            result["kept"] = str(work)


def client_figures(outs: list[dict[str, Any]]) -> dict[str, Any]:
    """input_bytes, seconds, mb_per_s and the receipts of the clients' JSON objects."""
    t0 = min((o["t0"] for o in outs if "t0" in o), default=0)
    t1 = max((o["t1"] for o in outs if "t1" in o), default=0)
    sent = sum(o.get("bytes_sent", 0) for o in outs)
    return {"input_bytes": sent, "seconds": t1 - t0,
            "mb_per_s": sent / 1e6 / (t1 - t0) if t1 > t0 else None,
            "receipts": [r for o in outs for r in o.get("receipts", [])]}


# --- the clients' side (kernel sockets, in the client namespace) -------------

TCPI_BYTES_ACKED = 120  # offset of tcpi_bytes_acked in Linux's struct tcp_info


def connect(host: str, port: int, deadline: float, rcvbuf: int | None = None) -> socket.socket:
    """Connects, retrying until deadline (the server may still be starting)."""
    last: Exception | None = None
    while time.monotonic() < deadline:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(1.0)
        try:
            s.connect((host, port))
            s.settimeout(None)
            return s
        except OSError as e:
            last = e
            s.close()
            time.sleep(0.1)
    raise TimeoutError(f"cannot connect to {host}:{port}: {last}")


def read_exact(s: socket.socket, n: int, timeout: float) -> bytes:
    s.settimeout(timeout)
    b = b""
    while len(b) < n:
        k = s.recv(n - len(b))
        if not k:
            break
        b += k
    return b


def send_file(s: socket.socket, path: Path, length: int, offset: int = 0) -> None:
    with open(path, "rb") as f:
        sent = 0
        while sent < length:
            sent += s.sendfile(f, offset=offset + sent, count=length - sent)


def reset_after(s: socket.socket, settle: float) -> int | None:
    """Waits settle seconds, resets the connection (RST); returns how many
    bytes its TCP had seen acknowledged (tcp_info; the SYN counts one)."""
    time.sleep(settle)
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    acked = None
    if len(info) >= TCPI_BYTES_ACKED + 8:
        acked = int.from_bytes(info[TCPI_BYTES_ACKED:TCPI_BYTES_ACKED + 8], "little")
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, (1).to_bytes(4, "little") + bytes(4))
    s.close()
    return acked


def end_cut_stream(s: socket.socket, reset: bool, settle: float, out: dict[str, Any],
                   read_receipt: Callable[[], dict[str, Any]]) -> None:
    """A bad client's stream cut short: reset the connection after settle
    seconds (out gets bytes_acked), or close its sending side (FIN) and
    read the receipt the server answers."""
    if reset:
        acked = reset_after(s, settle)
        if acked is not None:
            out["bytes_acked"] = acked
    else:
        s.shutdown(socket.SHUT_WR)
        out["receipts"].append(read_receipt())


def client_end(out: dict[str, Any], s: socket.socket, t0: float, reset: bool) -> int:
    """The client's one JSON line (with t0, t1 and seconds in
    CLOCK_MONOTONIC: one clock for every namespace) and its exit status."""
    t1 = time.monotonic()
    out["t0"], out["t1"], out["seconds"] = t0, t1, t1 - t0
    if not reset:  # a reset socket is closed already
        s.close()
    print(json.dumps(out))
    return 0 if "error" not in out else 1
