#!/usr/bin/env python3
"""Runs netdedup end to end and prints one JSON result: makes the input
(a tier, or a file), two network namespaces (the server's and the
client's) joined by a veth pair or a net_tap interface, starts netdedup
with a placement in the server's namespace, runs the clients in the
other, restores every stream with the decoder, compares it with the input
byte for byte, and removes everything it made, also when something fails.

    python3 apps/netdedup/run_netdedup.py --tier test --json
    python3 apps/netdedup/run_netdedup.py --tier simsmall --port tap --clients 2
    python3 apps/netdedup/run_netdedup.py --tier test --loss 1      # 1% loss each way
    python3 apps/netdedup/run_netdedup.py --tier test --stack kernel
    python3 apps/netdedup/run_netdedup.py --check OUT --client-json c.json --input in.bin

--check only does the last part, for a harness that ran server and client
itself (pipeplace's workload file): restores every stream the client's
JSON line has a receipt for from the directory netdedup wrote (--out),
compares each with --input, and prints restored_identical, input_bytes and
mb_per_s; exit 1 when a stream is not identical.

Layout (names start with pp41s-<pid> / pp41s<pid>; addresses from
198.18.0.0/15, nothing routed):

    [ns ...-s]  netdedup (R on lwIP: net_af_packet on the veth, or net_tap)
       veth ...s  <---->  veth ...c   (or the tap, moved into ns ...-c)
    [ns ...-c]  198.18.41.2: the clients, on the kernel's stack

--stack kernel runs the same pipeline on kernel sockets (the veth's server
end then has 198.18.41.1), the anchor bench/netdedup.py compares with.
The result says whether each figure is measured; mb_per_s is the input's
bytes (10^6) over the clients' wall time, from the first byte sent to the
last receipt read.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import netdedup_decode  # noqa: E402
import netdedup_input  # noqa: E402

PREFIX = "pp41s"  # this branch's namespaces and interfaces
SERVER_IP, CLIENT_IP, PREFIX_LEN, PORT = "198.18.41.1", "198.18.41.2", 24, 9041


class RunError(Exception):
    """A failure the result reports (with what was learnt before it)."""


def sh(*args: str, check: bool = True, ns: str | None = None,
       timeout: float = 30) -> subprocess.CompletedProcess[str]:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RunError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def remove_stale() -> None:
    """Namespaces of earlier runs whose process is gone (killed hard)."""
    for line in sh("ip", "netns", "list", check=False).stdout.splitlines():
        m = re.match(rf"^({PREFIX}-([0-9a-f]{{6}})-[scmp])\b", line)
        if m and not Path(f"/proc/{int(m.group(2), 16)}").exists():
            sh("ip", "netns", "del", m.group(1), check=False)


@dataclass
class Net:
    port: str  # af_packet | tap | kernel (veth, server address in the server's namespace)
    middle: bool = False  # a bridge namespace between the two (the loss fallback)
    tag: str = field(default_factory=lambda: f"{os.getpid():06x}")
    loss: dict[str, Any] | None = None

    @property
    def ns_s(self) -> str:
        return f"{PREFIX}-{self.tag}-s"

    @property
    def ns_c(self) -> str:
        return f"{PREFIX}-{self.tag}-c"

    @property
    def ns_m(self) -> str:
        return f"{PREFIX}-{self.tag}-m"

    def if_m(self, side: str) -> str:
        """The middle namespace's ends: "s" towards the server, "c" the client, "b" the bridge."""
        return f"{PREFIX}{self.tag}{dict(s='m', c='n', b='b')[side]}"

    @property
    def if_s(self) -> str:
        return f"{PREFIX}{self.tag}s"

    @property
    def if_c(self) -> str:
        """The client's interface: its veth end, or the tap."""
        return f"{PREFIX}{self.tag}{'t' if self.port == 'tap' else 'c'}"


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


def netem_available() -> bool:
    """Whether this kernel has tc's netem (some VMs' kernels lack sch_netem):
    tried on the loopback of a namespace of our own, not the host's."""
    ns = f"{PREFIX}-{os.getpid():06x}-p"
    sh("ip", "netns", "add", ns)
    try:
        return sh("tc", "qdisc", "add", "dev", "lo", "root", "netem", "loss", "0%", ns=ns,
                  check=False).returncode == 0
    finally:
        sh("ip", "netns", "del", ns, check=False)


@contextlib.contextmanager
def network(port: str, middle: bool = False) -> Iterator[Net]:
    """The namespaces (and the veths); removed on the way out.  middle: the
    two ends are joined through a bridge in a third namespace, where loss
    can be injected on the forwarding path (unseen by either end's stack)."""
    if os.geteuid() != 0:
        raise RunError("run_netdedup needs root (network namespaces, DPDK)")
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise RunError(f"{tool} not found (tools/setup.sh installs it)")
    remove_stale()
    if middle and port == "tap":
        raise RunError("the bridge namespace (loss without netem) is made for veth ports only")
    net = Net(port, middle)
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
                sh("ip", "addr", "add", f"{SERVER_IP}/{PREFIX_LEN}", "dev", net.if_s, ns=net.ns_s)
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
    rules = (f"table netdev {PREFIX}dpdk {{\n chain in {{ type filter hook ingress device "
             f"\"{net.if_s}\" priority 0; policy drop; }}\n}}\n")
    r = subprocess.run(["ip", "netns", "exec", net.ns_s, "nft", "-f", "-"], input=rules,
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RunError(f"nft (the server end's ingress drop): {r.stderr.strip()}")


def client_up(net: Net) -> None:
    sh("ip", "addr", "add", f"{CLIENT_IP}/{PREFIX_LEN}", "dev", net.if_c, ns=net.ns_c)
    sh("ip", "link", "set", net.if_c, "up", ns=net.ns_c)
    _no_offloads(net.ns_c, net.if_c)


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
    rules = f"table netdev {PREFIX}loss {{\n{chains}}}\n"
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
    out = sh("nft", "-j", "list", "table", "netdev", f"{PREFIX}loss", ns=net.ns_m, check=False).stdout
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


def default_placement(instances: int) -> dict[str, Any]:
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
    return {"app": "netdedup", "allow_colocate": 3 * instances > len(ctx), "instances": insts}


def app_command(build: Path, net: Net, placement: Path, instances: int, out_dir: Path | None,
                streams: int, stats: Path, extra: list[str], loss: bool = False) -> list[str]:
    exe = build / "apps" / "netdedup" / "netdedup"
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
    cmd = [str(exe), "--no-pci", "--file-prefix", f"{PREFIX}-{net.tag}", "--vdev", vdev,
           "--log-level", "lib.eal:warning", "--",
           "--placement", str(placement), "--stats", str(stats), "--streams", str(streams),
           "--ip", f"{SERVER_IP}/{PREFIX_LEN}", "--listen-port", str(PORT)]
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
            raise RunError(f"netdedup exited ({app.returncode}) before its tap came up")
        p = sh("ip", "-o", "link", "show", net.if_c, ns=net.ns_s, check=False)
        if p.returncode == 0 and re.search(r"<[^>]*\bUP\b", p.stdout):
            sh("ip", "link", "set", net.if_c, "netns", net.ns_c, ns=net.ns_s)
            client_up(net)
            return
        time.sleep(0.05)
    raise RunError(f"the tap {net.if_c} did not come up in {net.ns_s}")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def stop(p: subprocess.Popen[str], grace: float = 10) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run(input_path: Path, tier: str | None, *, stack: str = "lwip", port: str = "af_packet",
        clients: int = 1, instances: int = 1, placement: Path | None = None,
        loss: float = 0.0, build: Path = REPO / "build", keep: Path | None = None,
        write: bool = True, timeout: float = 300, extra: list[str] | None = None,
        client_specs: list[tuple[Path, list[str]]] | None = None, streams: int | None = None,
        check: bool = True, app_env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run; returns the result object (see the module text).
    client_specs: instead of `clients` clients sending the input at once,
    one client per (file, netdedup_client.py options), one after another
    (the bad clients of the tests); streams: what the server waits for
    (--streams), by default one per client."""
    if client_specs and keep is None:
        raise RunError("client_specs: pass keep=DIR to read the streams afterwards")
    if stack == "kernel":
        port = "kernel"
    result: dict[str, Any] = {"kind": "measured", "stack": stack, "port": port,
                              "clients": clients, "instances": instances,
                              "input": str(input_path), "input_bytes": 0,
                              "restored_identical": False}
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-run-", dir=keep))
    procs: list[subprocess.Popen[str]] = []
    try:
        middle = loss > 0 and not netem_available()
        with network(port, middle) as net:
            place = json.loads(placement.read_text()) if placement else default_placement(instances)
            instances = len(place["instances"])
            result["instances"] = instances
            (work / "placement.json").write_text(json.dumps(place))
            out_dir = work / "out" if write else None
            if out_dir:
                out_dir.mkdir()
            stats = work / "stats.json"
            cmd = app_command(build, net, work / "placement.json", instances, out_dir,
                              streams or (len(client_specs) if client_specs else clients),
                              stats, extra or [], loss=loss > 0)
            app = subprocess.Popen(["ip", "netns", "exec", net.ns_s, *cmd], text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env={**os.environ, **(app_env or {})})
            procs.append(app)
            deadline = time.monotonic() + timeout
            if port == "tap":
                wait_tap_up(net, app, deadline)
            if loss > 0:
                net.loss = inject_loss(net, loss)
                result["loss"] = net.loss
            def client(path: Path, args: list[str]) -> subprocess.Popen[str]:
                cmd = [sys.executable, str(HERE / "netdedup_client.py"), "--server",
                       f"{SERVER_IP}:{PORT}", "--file", str(path), "--timeout", str(timeout), *args]
                p = subprocess.Popen(["ip", "netns", "exec", net.ns_c, *cmd], text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                procs.append(p)
                return p

            def collect(c: subprocess.Popen[str]) -> dict[str, Any]:
                # A client still there 2 s after the server ended (one that
                # never reads) is told to stop.
                while c.poll() is None and time.monotonic() < deadline:
                    if app.poll() is not None:
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

            if client_specs:
                outs = [collect(client(path, args)) for path, args in client_specs]
            else:
                outs = [collect(c) for c in [client(input_path, []) for _ in range(clients)]]
            try:
                a_out, a_err = app.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                stop(app)
                a_out, a_err = app.communicate()
            result["app_exit"] = app.returncode
            if app.returncode != 0:
                result["app_stderr"] = a_err.strip()[-4000:]
            if net.loss:
                result["loss"]["dropped_frames"] = loss_counts(net, net.loss)
        # The network is gone; what is left is reading the results.
        result["client"] = outs
        st = json.loads(stats.read_text()) if stats.is_file() else None
        if st is not None:
            a = st.get("app_stats", {})
            result["app_stats"] = a
            result["tasks"] = st.get("tasks")
            result["accounting_ok"] = st.get("accounting_ok")
            result["duration_s"] = st.get("duration_s")
        t0 = min(o["t0"] for o in outs if "t0" in o) if outs else 0
        t1 = max(o["t1"] for o in outs if "t1" in o) if outs else 0
        sent = sum(o.get("bytes_sent", 0) for o in outs)
        result["input_bytes"] = sent
        result["seconds"] = t1 - t0
        result["mb_per_s"] = sent / 1e6 / (t1 - t0) if t1 > t0 else None
        receipts = [r for o in outs for r in o.get("receipts", [])]
        result["receipts"] = receipts
        if write and check and not client_specs:
            result["streams"] = verify(out_dir, receipts, input_path)
            result["restored_identical"] = bool(receipts) and all(
                s["identical"] for s in result["streams"]) and len(receipts) == clients
        return result
    finally:
        for p in procs:
            stop(p, grace=5)
        # EAL's runtime directory of this run's --file-prefix (its
        # hugepage files EAL removes itself)
        shutil.rmtree(f"/var/run/dpdk/{PREFIX}-{os.getpid():06x}", ignore_errors=True)
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
        else:
            result["kept"] = str(work)


def verify(out_dir: Path | None, receipts: list[dict[str, Any]], input_path: Path) -> list[dict[str, Any]]:
    """Every receipted stream restored and compared with the input."""
    assert out_dir is not None
    want = sha256_file(input_path)
    index = netdedup_decode.scan(out_dir)
    res = []
    for r in receipts:
        if "stream" not in r:
            res.append({"receipt": r, "identical": False})
            continue
        h = hashlib.sha256()

        class Sink:
            def write(self, b: bytes) -> None:
                h.update(b)
        try:
            d = netdedup_decode.decode(out_dir, r["stream"], Sink(), index)  # type: ignore[arg-type]
            d["identical"] = h.hexdigest() == want and d["status"] == "complete"
        except netdedup_decode.DecodeError as e:
            d = {"stream": r["stream"], "error": str(e), "identical": False}
        res.append(d)
    return res


def check(out_dir: Path, client_json: Path, input_path: Path) -> dict[str, Any]:
    """--check: the figures of a run someone else made."""
    lines = [ln for ln in client_json.read_text().splitlines() if ln.strip()]
    if not lines:
        raise RunError(f"{client_json}: empty (no client JSON line)")
    outs = [json.loads(ln) for ln in lines]
    receipts = [r for o in outs for r in o.get("receipts", [])]
    streams = verify(out_dir, receipts, input_path)
    sent = sum(o.get("bytes_sent", 0) for o in outs)
    t0, t1 = min(o["t0"] for o in outs), max(o["t1"] for o in outs)
    return {"kind": "measured", "input_bytes": sent, "seconds": t1 - t0,
            "mb_per_s": sent / 1e6 / (t1 - t0) if t1 > t0 else None,
            "restored_identical": bool(receipts) and all(x["identical"] for x in streams),
            "streams": streams}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--tier", choices=list(netdedup_input.TIERS))
    g.add_argument("--check", type=Path, metavar="DIR",
                   help="only restore and compare what netdedup wrote to DIR (needs --input "
                        "and --client-json)")
    ap.add_argument("--input", type=Path, help="a file to send instead of a tier")
    ap.add_argument("--client-json", type=Path, help="--check: the client's JSON line(s)")
    ap.add_argument("--seed", type=int, default=0, help="the tier's seed (0)")
    ap.add_argument("--stack", choices=["lwip", "kernel"], default="lwip")
    ap.add_argument("--port", choices=["af_packet", "tap"], default="af_packet",
                    help="lwip's DPDK port: net_af_packet on a veth, or net_tap")
    ap.add_argument("--clients", type=int, default=1, help="clients at once, each sends the input")
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--placement", type=Path, help="placement JSON (default: contexts in turn)")
    ap.add_argument("--loss", type=float, default=0.0, help="percent random loss each way")
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--cache", type=Path, default=REPO / "results" / "inputs",
                    help="where tier inputs are made once")
    ap.add_argument("--keep", type=Path, help="keep the run's files (output, stats) under here")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", action="store_true", help="print only the JSON object")
    a, extra = ap.parse_known_args(argv)
    # SIGTERM unwinds like SIGINT: the namespaces are removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if extra and extra[0] == "--":
        extra = extra[1:]
    if a.clients < 1 or a.instances < 1 or not 0 <= a.loss < 100:
        print("run_netdedup: --clients and --instances are >= 1, --loss 0..100", file=sys.stderr)
        return 2
    if (a.tier is None) == (a.input is None) and a.check is None:
        print("run_netdedup: give --tier or --input (see --help)", file=sys.stderr)
        return 2
    if a.input is not None and not a.input.is_file():
        print(f"run_netdedup: --input {a.input}: no such file", file=sys.stderr)
        return 2
    if a.check is not None:
        if a.input is None or a.client_json is None or not a.check.is_dir():
            print("run_netdedup: --check DIR needs an existing DIR, --input FILE and "
                  "--client-json FILE", file=sys.stderr)
            return 2
        try:
            res = check(a.check, a.client_json, a.input)
        except (RunError, OSError, ValueError, KeyError) as e:
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
            return 1
        print(json.dumps(res))
        return 0 if res["restored_identical"] else 1
    path = a.input or netdedup_input.input_file(a.tier, a.seed, a.cache)
    try:
        res = run(path, a.tier, stack=a.stack, port=a.port, clients=a.clients,
                  instances=a.instances, placement=a.placement, loss=a.loss, build=a.build,
                  keep=a.keep, timeout=a.timeout, extra=extra)
        rc = 0 if res["restored_identical"] else 1
    except (RunError, subprocess.TimeoutExpired, OSError) as e:
        res, rc = {"error": str(e)}, 1
    doc = {"app": "netdedup", "tier": a.tier or str(a.input), "result": res}
    if a.json:
        print(json.dumps(doc))
    else:
        r = doc["result"]
        print(json.dumps(doc, indent=1) if "error" in r else
              f"netdedup {doc['tier']}: {r['input_bytes']} bytes, restored identical: "
              f"{r['restored_identical']}, {r['mb_per_s'] or 0:.1f} MB/s (measured), "
              f"stack {r['stack']} port {r['port']}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
