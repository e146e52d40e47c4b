"""pp-tgen's teardown against DPDK's interrupt thread.  When the app leaves,
DPDK 22.11's memif PMD handles it on that thread: it marks the link down
first and unmaps the shared region after, then the thread rebuilds its wait
list, reading every registered handle, net_memif's listener socket's among
them (never unregistered, in DPDK memory).  pp-tgen, waiting for the link to
go down (--peer-wait), must neither stop the port (which unmaps the region
again) before that thread is done, nor let rte_eal_cleanup unmap DPDK memory
under it: the second crashed pp-tgen in CI (a SEGV in rte_intr_fd_get on the
interrupt thread, under ASan, 1 run in about 30).  An LD_PRELOAD shim
(slow_intr_thread.c) holds the thread 300 ms in each munmap and each rebuild,
which turns both races into certainties.  The second test leaves with the
peer still connected (its --peer-wait runs out): pp-tgen's own stop then
makes the thread rebuild, and pp_eal_stop must wait for it (it parks the
thread) before rte_eal_cleanup."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tgen_harness import finish, memif_socket, wait_written
from test_tgen_memif import gen_and_ipfwd, start_memif_ipfwd, start_memif_tgen, wait_for


def shim(tmp: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (cc) is needed to build the LD_PRELOAD shim"
    so = tmp / "slow_intr_thread.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so),
                    str(Path(__file__).with_name("slow_intr_thread.c")), "-ldl"], check=True)
    return so


def slowed(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every DPDK program this test starts gets the shim."""
    monkeypatch.setenv("LD_PRELOAD", str(shim(tmp)))
    # The shim comes before the ASan runtime in the library order: allowed here.
    asan = os.environ.get("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:halt_on_error=1")
    monkeypatch.setenv("ASAN_OPTIONS", asan + ":verify_asan_link_order=0")


def test_tgen_waits_for_the_pmd_to_finish_the_peers_disconnect(
        build_dir: Path, file_prefix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slowed(tmp_path, monkeypatch)
    g, app = gen_and_ipfwd(build_dir, file_prefix, tmp_path,
                           ["--rate", "10k", "--packets", "2000", "--drain", "1"], 120)
    assert app["total"]["rx_packets"] == g.stats["tx"]["packets"] == 2000
    # gen_and_ipfwd found both programs clean: exit 0, no sanitizer report.
    lines = [line for line in g.stderr.splitlines() if line.startswith("slow-intr-thread:")]
    # The race was there to lose: the interrupt thread unmapped the region...
    assert any(" intr-unmapped " in line for line in lines), g.stderr[-3000:]
    # ...and no other thread unmapped it while it did.
    assert not [line for line in lines if " OVERLAP " in line], g.stderr[-3000:]


def test_tgen_leaving_a_peer_that_stays_exits_cleanly(
        build_dir: Path, file_prefix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slowed(tmp_path, monkeypatch)
    sock = memif_socket()
    gen_stats = tmp_path / "gen.json"
    gen = start_memif_tgen(build_dir, file_prefix, sock,
                           ["--peer-wait", "1", "--rate", "10k", "--packets", "1000",
                            "--drain", "0.5"], gen_stats)
    app = None
    try:
        wait_for(sock)
        app = start_memif_ipfwd(build_dir, file_prefix, sock, tmp_path, 120)
        wait_written(gen_stats, gen, timeout=120)
        # The app neither polls nor leaves from now on: the link stays up
        # through pp-tgen's --peer-wait, and pp-tgen leaves with it up.
        app.send_signal(signal.SIGSTOP)
        g = finish(gen, gen_stats, timeout=120)
    finally:
        for p in (gen, app):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        sock.unlink(missing_ok=True)
    g.assert_clean()
    assert g.stats["tx"]["packets"] == 1000
