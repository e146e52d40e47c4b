"""pp-tgen feeding a program we did not write (value.from = "tgen",
assign/WORKLOADS.md): a second DPDK process, the memif server of one link
whose client is the program's `{tgen}` vdev; it sends the file's traffic
(tgen.args) on its port 0 and receives there what the program sends back.
The value is its receive counter (/ethdev/stats,0 over its own telemetry
socket) over the window, so it counts only what came back through the
program.

One generator per start of the program, started first (a memif client
that connects before the server's port is started is refused and does
not retry: backends/dpdk/tgen.py).  The end is ordered as there, because
DPDK 22.11's memif PMD unmaps the shared region when the peer leaves,
under an lcore that may still poll: SIGINT first (pp-tgen stops its
workers and, with --peer-wait, keeps its port open), then the program
stops, then the generator sees the link down and leaves by itself.
"""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from ..dpdk.runners import cleanup_prefix, describe_exit, die_with_assign, kill_group, port_started, stderr_tail
from ..dpdk.tgen import MEMIF_DIR, MEMIF_LOG2_RING, generator_binary

START_WAIT_S = 60.0   # EAL start of pp-tgen on a loaded machine
STOP_WAIT_S = 10.0    # SIGINT until its figures are written
EXIT_WAIT_S = 20.0    # the program gone (link down) until it has left
PEER_WAIT_S = 3600    # after SIGINT it waits for the program to leave, however long that takes


class ProgramTgen:
    """One pp-tgen process for one start of the program."""

    def __init__(self, build_dir: Path, args: tuple[str, ...], contexts: list[int], prefix: str, workdir: Path):
        self.binary = generator_binary(build_dir)
        self.args = list(args)
        self.contexts = contexts
        self.prefix = prefix
        self.sock = MEMIF_DIR / f"{prefix}.sock"
        memif = f"socket={self.sock},socket-abstract=no,rsize={MEMIF_LOG2_RING}"
        self.client_vdev = f"net_memif0,role=client,{memif}"
        self.server_vdev = f"net_memif0,role=server,{memif}"
        self.errfile = workdir / f"{prefix}-stderr.txt"
        self.statsfile = workdir / f"{prefix}-stats.json"
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        # its main lcore and one worker (tx and rx of its port) on its context(s)
        lcores = ",".join(f"{lc}@{self.contexts[lc % len(self.contexts)]}" for lc in range(2))
        return [str(self.binary), "--lcores", lcores, "--no-pci", "--file-prefix", self.prefix, "--no-huge",
                "-m", "256", "--log-level", "lib.eal:warning", "--vdev", self.server_vdev, "--",
                *self.args, "--tx-port", "0", "--rx-port", "0", "--link-wait", "120", "--start-after", "0",
                "--drain", "0", "--peer-wait", str(PEER_WAIT_S), "--stats", str(self.statsfile)]

    def start(self) -> str | None:
        """Started, its memif port up for the program to connect: None, else why not."""
        if not self.binary.is_file():
            return f"pp-tgen is not built: {self.binary} does not exist (ninja -C {self.binary.parent.parent})"
        MEMIF_DIR.mkdir(parents=True, exist_ok=True)
        self.sock.unlink(missing_ok=True)
        with self.errfile.open("w") as err:
            try:
                self.proc = subprocess.Popen(die_with_assign(self.command()), stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            except OSError as e:
                return f"cannot start pp-tgen {self.binary}: {e.strerror}"
        end = time.monotonic() + START_WAIT_S
        while not (self.sock.exists() and port_started(self.prefix, 0)):
            if self.proc.poll() is not None:
                return self.ended()
            if time.monotonic() > end:
                return f"pp-tgen: its memif port was not started {START_WAIT_S:g} s after its start"
            time.sleep(0.01)
        return None

    def ended(self) -> str | None:
        """None while it runs, else how it ended and its last words."""
        if self.proc is None or self.proc.poll() is None:
            return None
        return (f"pp-tgen (PID {self.proc.pid}) ended: {describe_exit(self.proc.returncode)}; its stderr: "
                f"{stderr_tail(self.errfile) or '(empty)'}")

    def stop_sending(self) -> None:
        """Before the program stops: its workers stop polling; its port stays open until the program left."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        end = time.monotonic() + STOP_WAIT_S
        while not self.statsfile.exists() and self.proc.poll() is None and time.monotonic() < end:
            time.sleep(0.005)

    def finish(self) -> None:
        """After the program stopped (its link is down): it leaves by itself, else it is killed; its files
        go (runtime directory, socket)."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=EXIT_WAIT_S if self.statsfile.exists() else 0.5)
            except subprocess.TimeoutExpired:
                kill_group(self.proc)
            self.proc = None
        cleanup_prefix(self.prefix)
        self.sock.unlink(missing_ok=True)
