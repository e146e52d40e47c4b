"""Traffic from the generator (`--traffic tgen`): pp-tgen as a second DPDK
process, memif server, sending IPv4 the app can forward at --rate max on
contexts of its own, one memif queue per app instance.  The app is the
memif client (its rx port 0) and transmits into net_null (port 1), as with
the embedded pcap replay, so the value is still the app's forwarded packets
per second.

One generator per sample, not per assignment: it is started before the
first assignment and sends at --rate max with back-pressure (--tx-retry,
nothing is lost at the link) until the end of the sample.  The app's serve
process keeps its ports up between placements (runtime/README.md), so the
memif link stays connected for the whole sample and each assignment's
warm-up and window are delimited by the app's own counters, as with the
pcap replay.  Between placements the memif ring fills and the generator
waits; the next placement receives that backlog first (in its warm-up).

DPDK 22.11's memif PMD unmaps the shared region when the peer leaves, under
an lcore that may be inside rx/tx burst, so neither side may poll while the
other leaves.  The end of a sample is therefore ordered: the generator is
told to stop sending (SIGINT: its workers stop, it writes its figures and
keeps its port open, --peer-wait); then the app gets end of input, reads
what the link still holds (counted: "serve end" on its stderr), stops its
ports and exits; then the generator sees the link down and leaves.  That
closes the link's accounting exactly: the generator's tx.packets = the rx
of every placement the app answered + what it drained at the end
(`sessions`).  After a failed attempt both processes are killed and the
next attempt starts both afresh (that generator's accounting is not closed
and says so).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .runners import cleanup_prefix, describe_exit, die_with_assign, kill_group, port_started, stderr_tail
from .traffic import PACKET_SIZE, PP_BURST, PP_RING_SIZE, TrafficError, build_traffic
from ...workloads import Workload

# Any line naming a sanitizer is a report (the same strict list as tests/harness:
# a crash report starts "AddressSanitizer:DEADLYSIGNAL", not "ERROR: ...").
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                   "ThreadSanitizer", "MemorySanitizer", "runtime error:")
MEMIF_DIR = Path("/run/pipeplace")  # memif sockets live outside /tmp (COMMON.md)
MEMIF_LOG2_RING = 13                # 8192 slots: the app may connect well before it polls
LINK_WAIT_S = 120                   # pp-tgen waits this long for the app to connect
SOCKET_WAIT_S = 60.0                # EAL start of a sanitizer build on a loaded box takes seconds
EXIT_WAIT_S = 20.0                  # the generator leaves once the app's link is down
STOP_WAIT_S = 30.0
PEER_WAIT_S = 3600                  # after SIGINT: the app leaves first (end of the sample), however long it takes

def generator_binary(build_dir: Path) -> Path:
    return build_dir / "traffic-gen" / "pp-tgen"


def default_tgen_contexts() -> list[int]:
    """The highest context this process may run on: the generator's by default."""
    return [max(os.sched_getaffinity(0))]


@dataclass
class TgenTraffic:
    """pp-tgen over net_memif into the app: the app's vdevs and pool, and the
    generator process (a fresh one per assignment)."""

    build_dir: Path
    workload: Workload
    contexts: list[int]                 # the generator's contexts (its -l / --lcores)
    workdir: Path
    vdevs: tuple[str, ...] = ()
    mbufs: int = 0
    mbuf_size: int = 128
    prefix: str = ""
    sock_path: Path = Path()
    proc: subprocess.Popen | None = None
    starts: int = 0
    app_rx: int = 0                     # packets the app received from this generator (its answered placements)
    placements: int = 0                 # placements this generator fed
    sessions: list[dict] = field(default_factory=list)  # link accounting of each generator that ended
    exits: list[int | None] = field(default_factory=list)  # exit status of each generator that left (None: killed)
    stderr_at_exit: str = ""            # the last one's stderr (sanitizer reports land there)
    start_s: float = 0.0                # measured: start of the last generator until its port was started
    exit_s: float = 0.0                 # measured: the app's exit until the last generator had left
    cache_dir: Path | None = None       # where the default captures live (apps other than ipfwd)
    capture: Path | None = None         # the capture pp-tgen replays (apps other than ipfwd)
    capture_packets: int = 0            # its packets
    rules: tuple[Path, str] | None = None  # ahocorasick: the rule file and digest its capture plants keywords from

    wanted_packets: int | None = None   # --capture-packets (None: the generator's default)

    def __post_init__(self) -> None:
        # the workload file's pp-tgen templates (traffic.tgen: ipfwd's UDP, l1's 16 destinations in
        # one /24 as ipfwd_traffic.py l1, mem's uniform over the unicast space), else its capture
        spec = self.workload.spec
        if spec.capture is None:
            raise TrafficError(f"--traffic tgen: workload {spec.name} makes its traffic with a client "
                               f"(traffic.source {spec.source!r}), pp-tgen does not feed it")
        if spec.tgen is not None and self.wanted_packets is not None:
            raise TrafficError(f"--capture-packets {self.wanted_packets} with --traffic tgen: pp-tgen makes "
                               f"{self.workload.app}'s packets from templates and replays no capture (use "
                               f"--traffic pcap)")
        if spec.tgen is None:
            # pp-tgen replays the app's default capture (the one --traffic pcap uses) on every queue
            if self.cache_dir is None:
                raise TrafficError(f"--traffic tgen: workload {self.workload.name} replays its default capture, "
                                   f"and no cache directory was given for it")
            one = build_traffic(self.build_dir, Workload(self.workload.name, 1), self.cache_dir,
                                self.wanted_packets, rules=self.rules)
            self.capture = one.captures[0]
            self.capture_packets = one.capture_packets
            self.mbuf_size = one.mbuf_size
        usable = os.sched_getaffinity(0)
        if not self.contexts or not set(self.contexts) <= usable:
            raise TrafficError(f"--tgen-contexts {','.join(map(str, self.contexts))}: not context(s) this process "
                               f"may run on ({','.join(map(str, sorted(usable)))})")
        self.binary = generator_binary(self.build_dir)
        if not self.binary.is_file():
            raise TrafficError(f"--traffic tgen: pp-tgen is not built: {self.binary} does not exist "
                               f"(meson setup with -Dparts=...,traffic-gen; ninja -C {self.build_dir})")
        self.prefix = "asgtg" + uuid.uuid4().hex[:10]
        self.sock_path = MEMIF_DIR / f"{self.prefix}.sock"
        memif = f"socket={self.sock_path},socket-abstract=no,rsize={MEMIF_LOG2_RING}"
        self.server_vdev = f"net_memif0,role=server,{memif}"
        self.vdevs = (f"net_memif0,role=client,{memif}", "net_null0")
        n = self.workload.instances
        # memif rx copies each packet into an mbuf of the app's pool: the
        # runtime's rings and bursts, plus a full memif ring per queue
        self.mbufs = max(8191, n * (2 * PP_RING_SIZE + 3 * PP_BURST + (1 << MEMIF_LOG2_RING)) + 4096)
        self.errfile = self.workdir / "tgen-stderr.txt"
        self.statsfile = self.workdir / "tgen-stats.json"

    def describe(self) -> dict:
        d = {"source": "pp-tgen over net_memif (a second DPDK process per sample, memif server, the link "
                       "up for the whole sample), --rate max with back-pressure (--tx-retry), "
                       "one memif queue per instance; windows delimited by the app's counters",
             "sink": "net_null", "packet_bytes": self.workload.spec.tgen_frame_bytes or PACKET_SIZE,
             "generator_contexts": list(self.contexts)}
        if self.capture is not None:
            del d["packet_bytes"]
            d["replays"] = f"the default {self.workload.app} capture ({self.capture.name})"
        return d

    def label(self) -> str:
        ctx = ",".join(map(str, self.contexts))
        return (f"tgen: pp-tgen --rate max --tx-retry over net_memif on context(s) {ctx}, one generator "
                f"per sample, app tx into net_null")

    # the generator process -------------------------------------------------
    def command(self, packets_per_instance: int | None = None) -> list[str]:
        n = self.workload.instances
        ctx = self.contexts
        # main lcore and one worker per memif queue, spread over the generator's contexts
        lcores = ",".join(f"{lc}@{ctx[lc % len(ctx)]}" for lc in range(n + 1))
        return [str(self.binary), "--lcores", lcores, "--no-pci", "--file-prefix", self.prefix,
                "--no-huge", "-m", str(128 + 32 * n + self._capture_mb()),  # hugepages are shared here
                "--log-level", "lib.eal:warning", "--vdev", self.server_vdev, "--",
                "--tx-port", "0", "--tx-queues", str(n), "--rate", "max", "--tx-retry",
                *self._source_args(),
                # no --packets, no --duration: until told to stop (SIGINT); a count: one assignment's window
                *([] if packets_per_instance is None else ["--packets", str(packets_per_instance * n)]),
                "--link-wait", str(LINK_WAIT_S), "--start-after", "0", "--drain", "0",
                "--peer-wait", str(PEER_WAIT_S), "--stats", str(self.statsfile)]

    def _capture_mb(self) -> int:
        """Memory for a replayed capture: pp-tgen holds all of it in mbufs
        (up to 2 KiB of data room plus the mbuf header each), with slack."""
        if self.capture is None:
            return 0
        return int(self.capture_packets * 2560 * 1.5) // (1 << 20) + 64

    def _source_args(self) -> list[str]:
        if self.capture is not None:
            return ["--pcap", str(self.capture), "--loops", "0"]
        return list(self.workload.spec.tgen)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure(self) -> str | None:
        """The sample's generator, started if it is not running; None when
        it is up, else why not."""
        if self.alive():
            return None
        return self.start()

    def start(self, packets_per_instance: int | None = None) -> str | None:
        """A fresh generator, its socket ready for the app; None when it is
        up, else why not.  The app must connect afresh too (a new process).
        With a packet count it sends exactly that per instance and leaves
        after the app (the process runner: one app process and one generator
        per assignment, the app's link going down after every placement)."""
        if self.proc is not None:  # the previous one ended or was left behind by a failed attempt
            self.abort()
        MEMIF_DIR.mkdir(parents=True, exist_ok=True)
        self.sock_path.unlink(missing_ok=True)
        self.statsfile.unlink(missing_ok=True)
        t0 = time.perf_counter()
        err = self.errfile.open("w")
        try:
            self.proc = subprocess.Popen(die_with_assign(self.command(packets_per_instance)),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                         start_new_session=True)
        except OSError as e:
            self.proc = None
            return f"cannot start the traffic generator {self.binary}: {e.strerror}"
        finally:
            err.close()
        self.starts += 1
        self.app_rx = self.placements = 0
        # The memif socket exists from the vdev probe on, but a client that
        # connects before the server's port is started is refused ("ID 0 not
        # found") and does not retry: wait for the port to be started, as
        # DPDK's telemetry socket reports it.
        end = time.monotonic() + SOCKET_WAIT_S
        while not self._port_started():
            if self.proc.poll() is not None:
                why = self._ended()
                self._kill()
                return why
            if time.monotonic() > end:
                self._kill()
                return (f"traffic generator: its memif port was not started {SOCKET_WAIT_S:g} s after start "
                        f"(killed); stderr: {stderr_tail(self.errfile) or '(empty)'}")
            time.sleep(0.01)
        self.start_s = time.perf_counter() - t0
        return None

    def fed(self, app_rx_packets: int) -> None:
        """An answered placement received this many packets from the link."""
        self.app_rx += app_rx_packets
        self.placements += 1

    def _port_started(self) -> bool:
        """Whether pp-tgen's memif port is started (telemetry /ethdev/info,0)."""
        return self.sock_path.exists() and port_started(self.prefix, 0)

    def stop_sending(self) -> str | None:
        """End of the sample, before the app leaves: SIGINT; the generator's
        workers stop and it writes its figures, keeping its port open until
        the app has left.  None when its figures are written, else why not."""
        if not self.alive():
            return self._ended() if self.proc is not None else "traffic generator was not running"
        self.proc.send_signal(signal.SIGINT)
        end = time.monotonic() + STOP_WAIT_S
        while not self.statsfile.exists():  # written through a rename: complete once it exists
            if self.proc.poll() is not None:
                return self._ended()
            if time.monotonic() > end:
                return f"traffic generator wrote no figures {STOP_WAIT_S:g} s after SIGINT"
            time.sleep(0.005)
        return None

    def finish(self, app_drained: int | None, why: str | None = None) -> dict:
        """After the app has left (its link is down): the generator leaves by
        itself.  Records and returns the link's accounting for this generator:
        its tx.packets against the app's rx of the placements it fed plus what
        the app drained at its end (None: unknown); why: a reason known
        before (the app did not end cleanly)."""
        figures: dict = {}
        if self.proc is not None:
            t0 = time.perf_counter()
            try:
                rc = self.proc.wait(timeout=EXIT_WAIT_S)
                self.exit_s = time.perf_counter() - t0
                self.exits.append(rc)
            except subprocess.TimeoutExpired:
                rc = None
                self.exits.append(None)
                why = why or f"traffic generator did not leave {EXIT_WAIT_S:g} s after the app's link went down"
                kill_group(self.proc)
            try:
                self.stderr_at_exit = self.errfile.read_text(errors="replace")
            except OSError:
                self.stderr_at_exit = ""
            if rc != 0 or any(m in self.stderr_at_exit for m in SANITIZER_MARKS):
                why = why or self._ended()
            self.proc = None
        cleanup_prefix(self.prefix)
        self.sock_path.unlink(missing_ok=True)
        try:
            tx = json.loads(self.statsfile.read_text())["tx"]
            figures = {k: tx.get(k) for k in ("packets", "pps", "link_full", "alloc_fail")}
        except (OSError, ValueError, KeyError, TypeError):
            why = why or "the generator's figures are missing"
        s = {"kind": "measured", "placements": self.placements, "generator_tx": figures,
             "app_rx": self.app_rx, "app_drained_at_end": app_drained}
        if why is None and app_drained is not None and isinstance(figures.get("packets"), int):
            s["unaccounted"] = figures["packets"] - self.app_rx - app_drained
            s["closed"] = s["unaccounted"] == 0
        else:
            s["closed"] = False
        if why is not None:
            s["why_not_closed"] = why
        self.sessions.append(s)
        return s

    def _ended(self) -> str:

        rc = self.proc.poll() if self.proc is not None else None
        state = "still running" if rc is None else describe_exit(rc)
        return f"traffic generator (pp-tgen) {state}; stderr: {stderr_tail(self.errfile) or '(empty)'}"

    def abort(self) -> str | None:
        """After a failed attempt: why the generator ended, if it did; killed
        if not.  Its link accounting is recorded as not closed."""
        if self.proc is None:
            return None
        why = self._ended() if self.proc.poll() is not None else None
        self._kill()
        self.sessions.append({"kind": "measured", "placements": self.placements, "app_rx": self.app_rx,
                              "closed": False, "why_not_closed": why or "killed after a failed attempt"})
        return why

    def _kill(self) -> None:
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None
        cleanup_prefix(self.prefix)
        self.sock_path.unlink(missing_ok=True)

    def stop(self) -> None:
        """At the end, after the app has exited: a generator still there is
        told to stop (SIGINT), waited for, killed only if it does not leave."""
        if self.proc is not None and self.alive():
            try:
                self.proc.send_signal(signal.SIGINT)
                self.exits.append(self.proc.wait(timeout=STOP_WAIT_S))
            except subprocess.TimeoutExpired:
                self.exits.append(None)
                self._kill()
            try:
                self.stderr_at_exit = self.errfile.read_text(errors="replace")
            except OSError:
                self.stderr_at_exit = ""
        self.proc = None
        cleanup_prefix(self.prefix)
        self.sock_path.unlink(missing_ok=True)
