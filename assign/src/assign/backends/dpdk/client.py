"""Traffic from a client command in a network namespace (a workload whose
traffic.source is "client", assign/WORKLOADS.md): the way a TCP-terminating
app such as netdedup is fed, by a client on the kernel's stack.

Per backend (a sample): a network namespace and a veth pair, its host end
the app's DPDK port (net_af_packet or net_tap through the file's vdevs), its
other end in the namespace with the file's address (the host's own stack
kept off the host end: no forwarding, every frame dropped at its ingress
by nftables once the app's packet socket has it); then the file's set-up commands; the tier's input, made once and cached.  At the end, always (also
after a failure or an exception): the file's tear-down commands, then the
namespace and the veth are removed.  Names carry $PIPEPLACE_NET_PREFIX
(default "ppn") and 6 random hex digits; /run/pipeplace/net/<name>.pid
names the process that made them, so `pipeplace clean` removes what a
killed run left and nothing else.

Per placement (ClientRunner): the app starts with the placement and no
window, its port 0 is up (DPDK telemetry says so), the client runs in the
namespace to its end (bounded by traffic.client.timeout_s), the app gets
SIGINT and writes its statistics.  The window is the app's run; the value
is where the file's [value] says (the app's statistics, or the JSON object
the client prints last)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from ...workloads import Workload
from .runners import (Outcome, RunSpec, cleanup_prefix, describe_exit, die_with_assign, kill_group, port_started,
                      stderr_tail)
from .traffic import TrafficError, expand, source_dir

NET_STATE = Path("/run/pipeplace/net")
START_WAIT_S = 60.0   # EAL start of a sanitizer build on a loaded box takes seconds
STOP_WAIT_S = 30.0
OUTPUT_TAIL = 1500


def net_prefix() -> str:
    p = os.environ.get("PIPEPLACE_NET_PREFIX", "ppn")
    if not (p.isalnum() and p.isascii() and 1 <= len(p) <= 6):
        raise TrafficError(f"PIPEPLACE_NET_PREFIX={p!r} (from the environment): expected 1 to 6 letters or digits "
                           f"(interface names have at most 15 characters)")
    return p


def _run(cmd: list[str], what: str, timeout: float = 30.0) -> None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TrafficError(f"{what}: {' '.join(cmd)}: {e}") from None
    if p.returncode != 0:
        raise TrafficError(f"{what}: {' '.join(cmd)}: {describe_exit(p.returncode)}: "
                           f"{(p.stderr or p.stdout).strip()[-500:]}")


def remove_net(name: str) -> list[str]:
    """Remove namespace `name`, the veth `name`h (with its peer) and the nftables table `name`;
    what could not be removed."""
    left = []
    if Path(f"/run/netns/{name}").exists():
        p = subprocess.run(["ip", "netns", "del", name], capture_output=True, text=True)
        if p.returncode != 0:
            left.append(f"namespace {name}: {p.stderr.strip()}")
    if Path(f"/sys/class/net/{name}h").exists():  # the pair goes with either end
        p = subprocess.run(["ip", "link", "del", f"{name}h"], capture_output=True, text=True)
        if p.returncode != 0 and Path(f"/sys/class/net/{name}h").exists():
            left.append(f"veth {name}h: {p.stderr.strip()}")
    if shutil.which("nft"):  # the host end's ingress drop (ClientTraffic._host_stack_off)
        subprocess.run(["nft", "delete", "table", "netdev", name], capture_output=True, text=True)
    (NET_STATE / f"{name}.pid").unlink(missing_ok=True)
    return left


class ClientTraffic:
    """The namespace, veth, set-up and input of one sample, and the app's ports."""

    def __init__(self, build_dir: Path, workload: Workload, cache_dir: Path, tier: str | None = None,
                 workdir: Path | None = None):
        spec = workload.spec
        if spec.client is None:
            raise TrafficError(f"workload {spec.name}: no traffic.client")
        self.spec, self.client, self.workload = spec, spec.client, workload
        self.tier = spec.tier(tier or spec.default_tier) if (tier or spec.default_tier) else None
        self.name = net_prefix() + uuid.uuid4().hex[:6]
        self.values = {"python": sys.executable, "source": str(source_dir(build_dir)), "build": str(build_dir),
                       "netns": self.name, "veth_host": f"{self.name}h", "veth_ns": f"{self.name}c",
                       "address": self.client.address, "instances": str(workload.instances), "input": "",
                       "workdir": str(workdir or cache_dir),
                       **{k: str(v) for k, v in (self.tier.params if self.tier else {}).items()}}
        self.vdevs = tuple(expand(self.client.vdevs, **self.values))
        self.mbufs, self.mbuf_size = self.client.mbufs, self.client.mbuf_size
        self.cache_dir = cache_dir
        self.notes: list[str] = []
        self.up_s = 0.0
        self._up = False
        self.host_stack = "not set up yet"
        if self.client.input is not None:
            self.values["input"] = str(self._input())

    # --- the sample's network -------------------------------------------------------------------
    def up(self) -> None:
        """Make the namespace and the veth, then run the file's set-up; on any failure remove what was made."""
        if os.geteuid() != 0:
            raise TrafficError(f"workload {self.spec.name}: its client runs in a network namespace, which needs "
                               f"root (CAP_NET_ADMIN)")
        if shutil.which("ip") is None:
            raise TrafficError("the `ip` command (iproute2) is not installed")
        t0 = time.perf_counter()
        ns, host, peer = self.name, self.values["veth_host"], self.values["veth_ns"]
        NET_STATE.mkdir(parents=True, exist_ok=True)
        (NET_STATE / f"{ns}.pid").write_text(f"{os.getpid()}\n")
        self._up = True
        try:
            _run(["ip", "netns", "add", ns], "making the client's namespace")
            _run(["ip", "link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns],
                 "making the veth pair")
            # no IPv6 on either end: router and neighbour solicitations would reach the app as strays
            for cmd in (["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{peer}.disable_ipv6=1"],
                        ["sysctl", "-qw", f"net.ipv6.conf.{host}.disable_ipv6=1"],
                        ["ip", "-n", ns, "addr", "add", self.client.address, "dev", peer],
                        ["ip", "-n", ns, "link", "set", "lo", "up"],
                        ["ip", "-n", ns, "link", "set", peer, "up"],
                        # the host end belongs to the app: this host's stack must neither forward what
                        # the client sends (nothing routed out) nor answer it
                        ["sysctl", "-qw", f"net.ipv4.conf.{host}.forwarding=0"],
                        ["ip", "link", "set", host, "up"]):
                _run(cmd, "setting up the veth pair")
            self._host_stack_off(host)
            for i, cmd in enumerate(self.client.setup):
                _run(expand(cmd, **self.values), f"workload {self.spec.name}: traffic.client.setup[{i}]", 60.0)
        except BaseException:
            self.down()
            raise
        self.up_s = time.perf_counter() - t0

    def _host_stack_off(self, host: str) -> None:
        """Drop every frame at the host end's ingress (an nftables netdev chain), after the
        packet sockets (the app's net_af_packet) have had their copy and before the host's IP
        stack sees it."""
        chain = f'{{ type filter hook ingress device "{host}" priority 0; policy drop; }}'
        for cmd in (["nft", "add", "table", "netdev", self.name],
                    ["nft", "add", "chain", "netdev", self.name, "ingress", chain]):
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
                why = p.stderr.strip() if p.returncode != 0 else None
            except (OSError, subprocess.TimeoutExpired) as e:
                why = str(e)
            if why is not None:
                self.host_stack = f"sees the client's frames and does not forward them ({' '.join(cmd)}: {why})"
                return
        self.host_stack = "never sees the client's frames (nftables netdev ingress drop, after the packet sockets)"

    def down(self) -> list[str]:
        """The file's tear-down, then the namespace and veth go; what could not be done (also noted)."""
        if not self._up:
            return []
        self._up = False
        left = []
        for i, cmd in enumerate(self.client.teardown):
            try:
                _run(expand(cmd, **self.values), f"workload {self.spec.name}: traffic.client.teardown[{i}]", 60.0)
            except TrafficError as e:
                left.append(str(e))
        left += remove_net(self.name)
        self.notes += left
        return left

    # --- the tier's input -----------------------------------------------------------------------
    def _input(self) -> Path:
        """The tier's input, made by traffic.client.input once and kept in the cache (its
        command line and the tier's parameters name it)."""
        key = json.dumps([self.spec.name, self.client.input, self.tier.params if self.tier else {}])
        path = self.cache_dir / f"{self.spec.name}-input-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
        if path.exists():
            return path
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        cmd = expand(self.client.input, **{**self.values, "output": str(tmp)})
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise TrafficError(f"workload {self.spec.name}: traffic.client.input {' '.join(cmd)}: {e}") from None
        if p.returncode != 0 or not tmp.exists():
            tmp.unlink(missing_ok=True)
            raise TrafficError(f"workload {self.spec.name}: traffic.client.input {' '.join(cmd)}: "
                               f"{describe_exit(p.returncode)}: {p.stderr.strip()[-500:] or 'no input written'}")
        os.replace(tmp, path)
        return path

    # --- the client -----------------------------------------------------------------------------
    def command(self) -> list[str]:
        return ["ip", "netns", "exec", self.name, *expand(self.client.command, **self.values)]

    def check_command(self) -> list[str] | None:
        return expand(self.client.check, **self.values) if self.client.check else None

    def describe(self) -> dict:
        d = {"source": "a client command in a network namespace, through a veth pair into the app's port",
             "ports": "; ".join(self.client.vdevs), "client": " ".join(self.client.command),
             "namespace_address": self.client.address, "host_stack": self.host_stack}
        if self.tier is not None:
            d["tier"] = self.tier.name
            d["tier_params"] = self.tier.params
        return d


class ClientRunner:
    """One app process per placement, running until the client ends."""

    mode = "client"

    def __init__(self, spec: RunSpec, traffic: ClientTraffic):
        self.spec = spec
        self.traffic = traffic
        self.n = 0

    def run(self, doc: dict, timeout: float) -> Outcome:
        s, tr = self.spec, self.traffic
        self.n += 1
        pfile, sfile, efile = s.workdir / "placement.json", s.workdir / "stats.json", s.workdir / "stderr.txt"
        pfile.write_text(json.dumps(doc))
        sfile.unlink(missing_ok=True)
        cmd = [str(s.binary), *s.eal, "--file-prefix", s.file_prefix, "--", "--placement", str(pfile),
               "--stats", str(sfile), *s.app_args]
        t0 = time.perf_counter()
        notes: list[str] = []
        with efile.open("w") as err:
            try:
                proc = subprocess.Popen(die_with_assign(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=err, start_new_session=True)
            except OSError as e:
                return Outcome(None, time.perf_counter() - t0, f"cannot start {s.binary}: {e.strerror}")
            try:
                why = self._wait_port(proc, efile)
                client = None
                if why is None:
                    client, why, notes = self._json_of("client", tr.command())
                    # for the check: what the client said (its receipts, its times)
                    (s.workdir / "client.json").write_text(json.dumps(client))
            finally:
                rc, late = self._stop(proc, tr.client.stop == "exit" and why is None)
            if late and why is None:
                why = (f"app did not end by itself within traffic.client.timeout_s {tr.client.timeout_s:g} s "
                       f"after the client (stop = \"exit\"): stopped with SIGINT")
        wall = time.perf_counter() - t0
        cleanup_prefix(s.file_prefix)
        check = None
        if why is None and tr.check_command() is not None:  # the app has ended: its output is complete
            check, why, more = self._json_of("check", tr.check_command())
            notes += more
        if why is not None:
            return Outcome(None, wall, why, rc, notes=notes)
        stats = None
        if sfile.exists():
            try:
                stats = json.loads(sfile.read_text())
            except ValueError as e:
                return Outcome(None, wall, f"statistics file {sfile} is not JSON ({e}); {describe_exit(rc)}", rc)
        if rc not in (0, 2) or stats is None:
            return Outcome(None, wall, f"app: {describe_exit(rc)}" + ("" if stats is not None else
                           f", no statistics written; stderr: {stderr_tail(efile) or '(empty)'}"), rc)
        return Outcome(stats, wall, None, rc, notes=notes, client={"client": client, "check": check})

    def _wait_port(self, proc: subprocess.Popen, efile: Path) -> str | None:
        end = time.monotonic() + START_WAIT_S
        while not port_started(self.spec.file_prefix, 0):
            if proc.poll() is not None:
                return f"app ended before its port was up: {describe_exit(proc.returncode)}; stderr: " \
                       f"{stderr_tail(efile) or '(empty)'}"
            if time.monotonic() > end:
                return f"app: port 0 not started {START_WAIT_S:g} s after start; stderr: " \
                       f"{stderr_tail(efile) or '(empty)'}"
            time.sleep(0.01)
        return None

    def _json_of(self, what: str, cmd: list[str]) -> tuple[dict | None, str | None, list[str]]:
        """Run the client (or the check) to its end: its last line as a JSON object (or None),
        why it failed (or None), notes."""
        limit = self.traffic.client.timeout_s
        try:
            p = subprocess.run(die_with_assign(cmd), capture_output=True, text=True, timeout=limit,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            tail = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return None, (f"{what} did not end within traffic.client.timeout_s {limit:g} s (killed); stderr: "
                          f"{tail.strip()[-OUTPUT_TAIL:] or '(empty)'}"), []
        except OSError as e:
            return None, f"cannot start the {what} {' '.join(cmd)}: {e.strerror}", []
        if p.returncode != 0:
            return None, (f"{what}: {describe_exit(p.returncode)}; stderr: "
                          f"{p.stderr.strip()[-OUTPUT_TAIL:] or '(empty)'}"), []
        lines = [ln for ln in p.stdout.strip().splitlines() if ln.strip()]
        if lines:
            try:
                out = json.loads(lines[-1])
                if isinstance(out, dict):
                    return out, None, []
            except ValueError:
                pass
        return None, None, [f"{what} printed no JSON object last"]

    def _stop(self, proc: subprocess.Popen, by_itself: bool = False) -> tuple[int | None, bool]:
        """SIGINT: the app stops its tasks, drains, writes its statistics and exits.  by_itself
        (traffic.client.stop = "exit"): it ends on its own once the client is done (netdedup
        after its --streams), given traffic.client.timeout_s for it before the SIGINT."""
        late = False
        if by_itself:
            try:
                proc.wait(timeout=self.traffic.client.timeout_s)
            except subprocess.TimeoutExpired:
                late = True
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                return None, late
        return proc.returncode, late

    def close(self) -> None:
        cleanup_prefix(self.spec.file_prefix)
        shutil.rmtree(self.spec.workdir, ignore_errors=True)
