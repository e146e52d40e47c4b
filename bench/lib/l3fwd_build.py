"""DPDK's l3fwd, built at benchmark time from Debian's dpdk-doc examples into
a temporary directory (never committed), for the benchmarks that put ipfwd
beside it (bench/ipfwd.py, bench/ipfwd-lpm.py).

What is changed in the copy, and why: net_pcap and net_null have no Rx
checksum offload, which l3fwd asks for and otherwise refuses to start
without (l3fwd then checks no IPv4 checksum; ipfwd does in software);
optionally the route limits (IPv4, and the IPv6 FIB's routes and tbl8
groups) and the pool, for a full-size table, and a
software IPv4 header checksum check in its RFC 1812 step (what the Rx
offload did for it: a wrong checksum goes to BAD_PORT, dropped), for a
comparison at equal work.

A test bed with no DPDK development packages (no compiler, no dpdk-doc)
gets the two copies bench/ipfwd.py runs built here beforehand, by
tools/testbed-bundle.sh --peers, which runs this file:

  python3 bench/lib/l3fwd_build.py DIR    # DIR/l3fwd and DIR/l3fwd-sw-cksum

and names DIR in PIPEPLACE_L3FWD_DIR (bench/ipfwd.py --l3fwd-dir)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

L3FWD_SRC = Path("/usr/share/dpdk/examples")


def patch(path: Path, old: str, new: str, who: str) -> None:
    text = path.read_text()
    if old not in text:
        raise SystemExit(f"{who}: {path}: '{old}' not found: another l3fwd version?")
    path.write_text(text.replace(old, new))


def build_l3fwd(tmp: Path, who: str, max_rules: int | None = None, extra_mbufs: int = 0,
                sw_ipv4_cksum: bool = False, fib6_routes: int | None = None,
                fib6_tbl8: int | None = None) -> Path:
    """Copy the l3fwd example (and the shared headers it includes) into tmp,
    patch it (module docstring), build it shared with pkg-config libdpdk (the
    static link fails on -lsystemd); the binary's path.  max_rules raises the
    IPv4 LPM and FIB route limits; fib6_routes and fib6_tbl8 set the IPv6
    FIB's route limit and tbl8 groups (rte_fib6 TRIE: a full IPv6 table
    needs far more than its 2^15); extra_mbufs adds to its pool (a replayed
    capture stays in mbufs); sw_ipv4_cksum adds the software checksum check
    (built in its own directory beside the plain copy)."""
    if not (L3FWD_SRC / "l3fwd" / "Makefile").is_file():
        raise SystemExit(f"{who}: no l3fwd example at {L3FWD_SRC / 'l3fwd'}: "
                         "install Debian's dpdk-doc (tools/setup.sh does)")
    dst = tmp / ("examples-sw-cksum" if sw_ipv4_cksum else "examples")
    shutil.copytree(L3FWD_SRC / "l3fwd", dst / "l3fwd")
    if (L3FWD_SRC / "common").is_dir():
        shutil.copytree(L3FWD_SRC / "common", dst / "common")
    src = dst / "l3fwd"
    if max_rules is not None:
        patch(src / "l3fwd_lpm.c", "#define IPV4_L3FWD_LPM_MAX_RULES         1024",
              f"#define IPV4_L3FWD_LPM_MAX_RULES {max_rules}", who)
        patch(src / "l3fwd_fib.c", "config_ipv4.max_routes = (1 << 16);",
              f"config_ipv4.max_routes = {max_rules};", who)
    if fib6_routes is not None:
        patch(src / "l3fwd_fib.c", "config.max_routes = (1 << 16) - 1;",
              f"config.max_routes = {fib6_routes};", who)
    if fib6_tbl8 is not None:
        patch(src / "l3fwd_fib.c", "config.trie.num_tbl8 = (1 << 15);",
              f"config.trie.num_tbl8 = {fib6_tbl8};", who)
    if extra_mbufs:
        patch(src / "main.c", "nb_lcores*MEMPOOL_CACHE_SIZE),",
              f"nb_lcores*MEMPOOL_CACHE_SIZE + {extra_mbufs}),", who)
    patch(src / "main.c", "\t\t.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,", "\t\t.offloads = 0,", who)
    if sw_ipv4_cksum:
        # before the TTL and checksum updates: l3fwd's SSE/AVX LPM path runs every IPv4 packet through here
        patch(src / "l3fwd_common.h", "\t\tihl = ipv4_hdr->version_ihl - IPV4_MIN_VER_IHL;\n",
              "\t\tihl = ipv4_hdr->version_ihl - IPV4_MIN_VER_IHL;\n"
              "\t\tif (ihl <= IPV4_MAX_VER_IHL_DIFF &&\n"
              "\t\t\t\trte_raw_cksum(ipv4_hdr, (ihl + 5) * 4) != 0xffff)\n"
              "\t\t\tdp[0] = BAD_PORT;\n", who)
    r = subprocess.run(["make", "-C", str(src), "shared"], capture_output=True, text=True)
    exe = src / "build" / "l3fwd"
    if r.returncode != 0 or not exe.exists():
        raise SystemExit(f"{who}: building l3fwd failed (exit {r.returncode}):\n"
                         f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return exe


PREBUILT = ("l3fwd", "l3fwd-sw-cksum")  # as shipped (offload patch only); with the software checksum check


def prebuilt_l3fwd(where: Path, who: str) -> tuple[Path, Path]:
    """The two copies `main` built into `where`, or an error naming it."""
    exes = tuple(where / name for name in PREBUILT)
    for exe in exes:
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            raise SystemExit(f"{who}: --l3fwd-dir {where}: no executable {exe.name} there (make it with "
                             "python3 bench/lib/l3fwd_build.py DIR, or tools/testbed-bundle.sh --peers)")
    return exes[0], exes[1]


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="l3fwd_build_") as td:
        for name, ck in zip(PREBUILT, (False, True)):
            shutil.copy2(build_l3fwd(Path(td), "bench/lib/l3fwd_build.py", sw_ipv4_cksum=ck), out / name)
    print(f"bench/lib/l3fwd_build.py: {', '.join(str(out / n) for n in PREBUILT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
