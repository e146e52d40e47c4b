"""Traffic through real kernel interfaces (`--traffic veth`): the veth test
bed of assign.vethbed, built for the sample and removed at its end.  pp-tgen
sends from the gen namespace at --rate max (back-pressure) and receives what
the app forwards in the sink namespace; the app attaches to the dut's two
veth ends (`--attach`, af_xdp or af_packet where the kernel refuses XDP:
the app's statistics say which), so its R receives from a kernel device.
One instance (a veth end here has one queue); the value is still the app's
forwarded packets per second of its window.  Linux's forwarding is off in
the dut namespace: only the app forwards.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from ...vethbed import VethBed, VethBedError
from ...workloads import Workload
from .runners import cleanup_prefix, die_with_assign, kill_group, stderr_tail
from .traffic import PACKET_SIZE, TrafficError

START_WAIT_S = 60.0  # EAL start and both attachments on a loaded box
STOP_WAIT_S = 30.0


@dataclass
class VethTraffic:
    build_dir: Path
    workload: Workload
    contexts: list[int]                  # the generator's contexts
    workdir: Path
    vdevs: tuple[str, ...] = ()
    mbufs: int = 16383                   # the app's pool: AF_XDP fill rings take thousands
    mbuf_size: int = 2048                # AF_XDP: one frame per mbuf
    bed: VethBed | None = None
    proc: subprocess.Popen | None = None
    prefix: str = ""
    generator_tx: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.workload.app != "ipfwd":
            raise TrafficError(f"--traffic veth: workload {self.workload.name}: only ipfwd for now "
                               f"(pp-tgen's IPv4 template through the bed's route)")
        if self.workload.instances != 1:
            raise TrafficError(f"--traffic veth: {self.workload.instances} instances: a veth end here has one "
                               f"queue, so one instance (--instances 1)")
        self.binary = self.build_dir / "traffic-gen" / "pp-tgen"
        if not self.binary.is_file():
            raise TrafficError(f"--traffic veth: pp-tgen is not built: {self.binary} does not exist")
        self.prefix = "asgvt" + uuid.uuid4().hex[:10]
        try:
            self.bed = VethBed("asgv")
            self.bed.__enter__()
            self._bed_gone = weakref.finalize(self, self.bed.remove)
        except (VethBedError, OSError) as e:
            raise TrafficError(f"--traffic veth: cannot build the veth bed (root needed): {e}") from None
        self.errfile = self.workdir / "veth-tgen-stderr.txt"
        self.statsfile = self.workdir / "veth-tgen-stats.json"

    def app_args(self) -> list[str]:
        """The app's runtime options: the dut's two ends as its ports 0 (rx) and 1 (tx)."""
        return ["--attach", self.bed.attach("d0"), "--attach", self.bed.attach("d1")]

    def describe(self) -> dict:
        return {"source": "pp-tgen over a veth pair from another network namespace (--rate max, back-pressure); "
                          "the app attached to the dut's veth ends (af_xdp, af_packet where XDP is refused)",
                "sink": "pp-tgen in the sink namespace", "packet_bytes": PACKET_SIZE,
                "generator_contexts": list(self.contexts)}

    def label(self) -> str:
        return f"veth: pp-tgen -> veth -> app (--attach) -> veth -> pp-tgen, generator on {self.contexts}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure(self) -> str | None:
        """The sample's generator, started if it is not running; None when up, else why not."""
        if self.alive():
            return None
        ctx = self.contexts
        cmd = [str(self.binary), "--lcores", f"0@{ctx[0]},1@{ctx[-1]}", "--no-pci", "--file-prefix", self.prefix,
               "--no-huge", "-m", "256", "--log-level", "lib.eal:warning", "--log-level", "pmd.net.af_xdp:error",
               "--", "--attach", self.bed.attach("g0"), "--attach", self.bed.attach("s0"),
               "--tx-port", "0", "--rx-port", "1", "--rate", "max", "--tx-retry",
               "--size", str(PACKET_SIZE + 4), *self.bed.tgen_fields(), "--drain", "0",
               "--stats", str(self.statsfile)]
        self.statsfile.unlink(missing_ok=True)
        with self.errfile.open("w") as err:
            try:
                self.proc = subprocess.Popen(die_with_assign(cmd), stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            except OSError as e:
                return f"cannot start the traffic generator {self.binary}: {e.strerror}"
        end = time.monotonic() + START_WAIT_S
        while "attached with" not in self.errfile.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > end:
                why = f"traffic generator did not attach: {stderr_tail(self.errfile) or '(empty)'}"
                self.abort()
                return why
            time.sleep(0.05)
        return None

    def abort(self) -> str | None:
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None
        cleanup_prefix(self.prefix)
        return None

    def stop(self) -> None:
        """At the end, before the app leaves: the generator stops (its figures kept in generator_tx)."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        self.abort()
        try:
            s = json.loads(self.statsfile.read_text())
            self.generator_tx = {"kind": "measured", "tx_packets": s["tx"]["packets"],
                                 "sink_rx_packets": s["rx"]["packets"], "attached": s["config"]["attached"]}
        except (OSError, ValueError, KeyError):
            pass

    def remove(self) -> None:
        """After the app has left: the namespaces go (also at exit, whatever happened)."""
        self._bed_gone()
