"""tools/testbed-bundle.sh: a machine without DPDK's packages runs the apps
from the bundle. Checked by hiding this machine's DPDK driver directory in
a mount namespace of the test's own (unshare -m, tmpfs over it): there the
app gets its drivers only through PIPEPLACE_DPDK_DRIVERS, and every DPDK
library and driver it loads comes from the bundle.  The bundle is made with
--peers, so the programs the benchmarks measure ours against (dpdk-testpmd,
DPDK's l3fwd) are checked the same way; and assign's ovs-dpdk workload runs
from the bundle's Open vSwitch with this machine's OVS hidden as well."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import app_binary, eal_args
from harness.placement import placement, two_contexts, write_placement
from harness.process import sanitizer_env

RUNTIME = re.compile(r"^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libutil|libgcc_s|"
                     r"libstdc\+\+)\.so")
DRIVERS = {"bus_vdev", "mempool_ring", "mempool_stack", "net_memif", "net_null", "net_pcap", "net_ring",
           "net_af_xdp", "net_af_packet", "net_tap"}
# Open vSwitch with DPDK as assign's ovs-dpdk workload runs it (tools/setup.sh installs it)
OVS_VSWITCHD = Path("/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
OVS_TOOLS = ("ovsdb-server", "ovsdb-tool", "ovs-vsctl", "ovs-appctl", "ovs-ofctl")
OVS_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")


@pytest.fixture(scope="module", autouse=True)
def no_runtime_directories_left() -> Iterator[None]:
    """The DPDK programs here run under prefixes named for this process (tb, tbl3, tbtp, tbx + pid):
    their runtime directories and hugepage files go when the module ends, whatever EAL left."""
    yield
    from assign.backends.dpdk.runners import cleanup_prefix

    pid = str(os.getpid())
    for d in (Path("/var/run/dpdk").iterdir() if Path("/var/run/dpdk").is_dir() else ()):
        if re.fullmatch(rf"(tb|tbx){pid}[01]|(tbl3|tbtp){pid}", d.name):
            cleanup_prefix(d.name)


def world_writable_above(d: Path) -> Path | None:
    """The first directory at or above d that anyone may write to (/tmp), or None."""
    for p in (d, *d.parents):
        if p.exists() and p.stat().st_mode & stat.S_IWOTH:
            return p
    return None


@pytest.fixture(scope="module")
def bundle(repo_dir: Path, build_dir: Path) -> Iterator[Path]:
    # EAL loads no driver from under a world-writable directory, and a checkout may sit under one
    # (a clone in /tmp): then the bundle goes to a private folder in the user's cache
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pipeplace-test"
    places = [build_dir.resolve(), cache.resolve()]
    base = next((p for p in places if world_writable_above(p) is None), None)
    if base is None:
        pytest.skip("no place for the test bundle outside a world-writable directory, where EAL loads no "
                    "driver: " + ", ".join(f"{p} (under {world_writable_above(p)})" for p in places))
    made = not base.exists()
    base.mkdir(parents=True, exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="testbed-test-", dir=base))  # mode 0700
    out = where / "testbed"
    try:
        p = subprocess.run([str(repo_dir / "tools" / "testbed-bundle.sh"), "--peers", str(out), str(build_dir)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert f"testbed-bundle: {out}:" in p.stdout
        yield out
    finally:
        shutil.rmtree(where, ignore_errors=True)
        if made:
            try:
                base.rmdir()  # only when empty: another checkout's test may be using it
            except OSError:
                pass


def test_a_world_writable_place_or_a_directory_of_something_else_is_refused(repo_dir: Path, build_dir: Path,
                                                                            tmp_path: Path) -> None:
    tool = str(repo_dir / "tools" / "testbed-bundle.sh")
    out = tmp_path / "testbed"
    p = subprocess.run([tool, str(out), str(build_dir)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "world-writable" in p.stderr and not out.exists(), p.stderr
    p = subprocess.run([tool, str(tmp_path), str(build_dir)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "is not a bundle" in p.stderr and tmp_path.is_dir(), p.stderr


def plugin_dir() -> Path:
    found = sorted(Path("/usr/lib").glob("*/dpdk/pmds-*"))
    assert found, "this machine's DPDK driver directory (/usr/lib/*/dpdk/pmds-*) is missing"
    return found[0]


def test_every_library_but_the_c_runtime_resolves_into_the_bundle(bundle: Path, build_dir: Path) -> None:
    lib = bundle / "lib"
    programs = [build_dir / "apps" / "ipfwd" / "ipfwd", build_dir / "apps" / "ahocorasick" / "ahocorasick",
                build_dir / "traffic-gen" / "pp-tgen", bundle / "bin" / "lstopo-no-graphics",
                bundle / "bin" / "dpdk-testpmd", bundle / "peers" / "l3fwd", bundle / "peers" / "l3fwd-sw-cksum"]
    # Open vSwitch with DPDK: the DPDK build of ovs-vswitchd (the file, not the package's default
    # alternative) and the tools and schema the ovs-dpdk workload runs
    assert OVS_VSWITCHD.is_file(), "openvswitch-switch-dpdk is missing here (tools/setup.sh installs it)"
    ovs = bundle / "ovs"
    assert {f.name for f in (ovs / "bin").iterdir()} == {"ovs-vswitchd-dpdk", *OVS_TOOLS}
    assert (ovs / "bin" / "ovs-vswitchd-dpdk").read_bytes() == OVS_VSWITCHD.read_bytes()
    assert (ovs / "share" / "vswitch.ovsschema").read_bytes() == OVS_SCHEMA.read_bytes()
    programs += sorted((ovs / "bin").iterdir())
    drivers = sorted((bundle / "drivers").iterdir())
    assert {d.name.removeprefix("librte_").removesuffix(".so") for d in drivers} == DRIVERS
    for d in drivers:  # one copy of each: a link into lib/, never a second file
        assert d.is_symlink() and d.resolve().parent == lib.resolve(), d
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib))
    for prog in programs + drivers:
        out = subprocess.run(["ldd", str(prog)], capture_output=True, text=True, env=env, check=True).stdout
        assert "not found" not in out, (prog, out)
        for name, path in re.findall(r"^\s*(\S+) => (/\S+)", out, re.M):
            if not RUNTIME.match(name):
                assert Path(path).resolve().parent == lib.resolve(), (prog, name, path)


def run_hidden(bundle: Path, build_dir: Path, tmp_path: Path, drivers: bool) -> subprocess.CompletedProcess:
    """ipfwd forwarding for 0.3 s with this machine's driver directory hidden, the bundle's
    libraries first; with `drivers`, after sourcing the bundle's env.sh.
    LD_DEBUG=files: the loader says which file it initialised (on stderr)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps" / "ipfwd"))
    try:
        import ipfwd_traffic
    finally:
        sys.path.pop(0)
    cap = tmp_path / "l1.pcap"
    if not cap.exists():
        ipfwd_traffic.main(["l1", str(cap), "--packets", "256"])
    c = two_contexts()[0]
    place = write_placement(tmp_path / "p.json", placement("ipfwd", 1, "l1", contexts=(c, c)))
    cmd = [str(app_binary(build_dir, "ipfwd")),
           *eal_args(f"tb{os.getpid()}{int(drivers)}",
                     [f"net_pcap0,rx_pcap={cap},infinite_rx=1", "net_null0,no-rx=1"], log_level=None),
           "--", "--placement", str(place), "--duration", "0.3", "--stats", str(tmp_path / "s.json")]
    return run_where_dpdk_is_not(bundle, cmd, drivers, dict(sanitizer_env(), LD_DEBUG="files"))


def run_where_dpdk_is_not(bundle: Path, cmd: list[str], drivers: bool, env: dict[str, str],
                          timeout: float = 120) -> subprocess.CompletedProcess:
    """cmd with this machine's DPDK driver directory hidden (a mount namespace
    of its own), the bundle's libraries first; with `drivers`, after sourcing
    the bundle's env.sh, which is what a user does there (it sets
    PIPEPLACE_DPDK_DRIVERS once the directory is gone).  Standard input is
    closed."""
    env = dict(env)
    env.pop("PIPEPLACE_DPDK_DRIVERS", None)
    setup = f'. "{bundle}/env.sh" 2>/dev/null' if drivers else f'export LD_LIBRARY_PATH="{bundle}/lib"'
    script = f'mount -t tmpfs none "{plugin_dir()}" && {setup} && exec "$@"'
    return subprocess.run(["unshare", "-m", "bash", "-c", script, "bash", *cmd], capture_output=True,
                          text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def test_an_app_runs_from_the_bundle_where_dpdk_is_not_installed(bundle: Path, build_dir: Path,
                                                                   tmp_path: Path) -> None:
    # without the variable, hiding the directory leaves EAL no pcap driver: the check can fail
    p = run_hidden(bundle, build_dir, tmp_path, drivers=False)
    assert p.returncode != 0 and "net_pcap0" in p.stderr, p.stderr[-2000:]
    p = run_hidden(bundle, build_dir, tmp_path, drivers=True)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "s.json").stat().st_size > 0
    inits = re.findall(r"calling init: (\S+)", p.stderr)
    dpdk = [Path(f) for f in inits if "librte_" in f]
    assert {f.name.split(".so")[0].removeprefix("librte_") for f in dpdk} >= DRIVERS | {"eal", "ethdev", "mbuf"}
    outside = [str(f) for f in dpdk if f.resolve().parent != (bundle / "lib").resolve()]
    assert outside == [], outside
    assert len({f.resolve() for f in dpdk}) == len(dpdk), "a DPDK library was loaded twice"


def test_a_drivers_variable_naming_no_directory_is_refused(build_dir: Path, tmp_path: Path) -> None:
    none = tmp_path / "no-such-dir"
    p = subprocess.run([str(app_binary(build_dir, "ipfwd")), *eal_args("tbnone", ["net_null0"]), "--",
                        "--placement", str(write_placement(tmp_path / "p.json", placement("ipfwd", 1, "l1"))),
                        "--duration", "0.1"],
                       capture_output=True, text=True, timeout=60,
                       env=dict(sanitizer_env(), PIPEPLACE_DPDK_DRIVERS=str(none)))
    assert p.returncode != 0 and f"PIPEPLACE_DPDK_DRIVERS={none}" in p.stderr and "not a directory" in p.stderr, \
        p.stderr


def test_env_sh_and_the_assign_it_puts_first(bundle: Path, repo_dir: Path) -> None:
    # python3 with the packages assign needs: the project's venv stands in for the test bed's
    env = dict(os.environ, PATH=f"{repo_dir / '.venv' / 'bin'}:{os.environ['PATH']}")
    env.pop("PIPEPLACE_DPDK_DRIVERS", None)
    env.pop("PIPEPLACE_RULES", None)
    env.pop("OVS_PKGDATADIR", None)
    script = (f'. "{bundle}/env.sh" && echo "LD=$LD_LIBRARY_PATH" && echo "DRV=${{PIPEPLACE_DPDK_DRIVERS-}}" '
              f'&& command -v assign && echo "RULES=${{PIPEPLACE_RULES-}}" '
              f'&& echo "OVSDATA=${{OVS_PKGDATADIR-}}" && echo "LASTPATH=${{PATH##*:}}" '
              f'&& assign count --machine ultrasparc-t2 --tasks 3')
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith(f"LD={bundle}/lib")
    assert lines[1] == "DRV=", "DPDK is installed here: EAL's own directory serves, no -d"
    assert lines[2] == str(bundle / "bin" / "assign")
    # ahocorasick's rules travel with the bundle (the app's built-in default is this machine's path)
    # and env.sh names them for assign's --rules default
    rules = repo_dir.parent / "shared" / "data" / "snort" / "community.rules"
    assert rules.is_file(), "CI runs with ../shared beside the clone"
    assert lines[3] == f"RULES={bundle}/rules/community.rules"
    assert (bundle / "rules" / "community.rules").read_bytes() == rules.read_bytes()
    # the bundle's OVS comes after this machine's, whose tools come with their own schema
    assert lines[4] == "OVSDATA=", "this machine has ovsdb-tool: its own schema serves"
    assert lines[5] == f"LASTPATH={bundle}/ovs/bin"
    assert "raw placements (injective maps, what random sampling draws from): 249984" in p.stdout  # 64*63*62


def test_the_peers_run_from_the_bundle_where_dpdk_is_not_installed(bundle: Path, tmp_path: Path) -> None:
    """dpdk-testpmd and l3fwd are DPDK's own programs: they get the bundle's
    drivers through EAL's -d, as the benchmarks pass it from
    PIPEPLACE_DPDK_DRIVERS (harness.peer_driver_args)."""
    c = two_contexts()
    eal = ["--no-pci", "--no-huge", "-m", "512", "-l", f"{c[0]},{c[1]}", "--log-level", "lib.eal:warning"]
    # testpmd sends until its "Press enter to exit" reads the closed stdin
    testpmd = [str(bundle / "bin" / "dpdk-testpmd"), *eal, "--file-prefix", f"tbtp{os.getpid()}",
               "--vdev", "net_null0", "-d", str(bundle / "drivers"), "--", "--forward-mode=txonly",
               "--auto-start", "--txpkts=60", "--total-num-mbufs=4096"]
    p = run_where_dpdk_is_not(bundle, testpmd, False, dict(os.environ))
    sent = re.findall(r"TX-packets: (\d+)", p.stdout)
    assert p.returncode == 0 and sent and int(sent[-1]) > 0, p.stdout[-2000:] + p.stderr[-2000:]
    # without -d it finds no net_null: the check can fail
    p = run_where_dpdk_is_not(bundle, [a for a in testpmd if a not in ("-d", str(bundle / "drivers"))], False,
                              dict(os.environ))
    assert p.returncode != 0 and "net_null0" in p.stdout + p.stderr, p.stdout[-2000:] + p.stderr[-2000:]
    # l3fwd forwards until SIGINT, on one lcore (as bench/ipfwd.py runs it: a TX queue per lcore, and
    # net_pcap has one): from net_pcap into net_null, through env.sh's variables
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps" / "ipfwd"))
    try:
        import ipfwd_traffic
    finally:
        sys.path.pop(0)
    cap = tmp_path / "l1.pcap"
    ipfwd_traffic.main(["l1", str(cap), "--packets", "256"])
    (tmp_path / "r4").write_text("R0.0.0.0/1 1\nR128.0.0.0/1 1\n")
    (tmp_path / "r6").write_text("R2001:0200:0000:0000:0000:0000:0000:0000/64 1\n")
    l3fwd = ["bash", "-c",
             f'exec stdbuf -oL "$PIPEPLACE_L3FWD_DIR/l3fwd" {" ".join(eal[:4])} -l {c[1]} '
             f'--file-prefix tbl3{os.getpid()} --vdev net_pcap0,rx_pcap={cap},infinite_rx=1 '
             f'--vdev net_null0,no-rx=1 -d "$PIPEPLACE_DPDK_DRIVERS" -- -p 0x3 --config "(0,0,{c[1]})" '
             f'--rule_ipv4={tmp_path / "r4"} --rule_ipv6={tmp_path / "r6"} --parse-ptype --lookup=lpm']
    script = f'mount -t tmpfs none "{plugin_dir()}" && . "{bundle}/env.sh" 2>/dev/null && exec "$@"'
    env = dict(os.environ)
    env.pop("PIPEPLACE_DPDK_DRIVERS", None)
    # it forwards until SIGINT: sent once it says it is in its main loop (however long a loaded
    # machine takes to start it), then it must say goodbye
    with subprocess.Popen(["unshare", "-m", "bash", "-c", script, "bash", *l3fwd], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          start_new_session=True) as p:
        out: list[str] = []
        started = threading.Event()

        def read() -> None:
            assert p.stdout is not None
            for line in p.stdout:
                out.append(line)
                if "entering main loop on lcore" in line:
                    started.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            assert started.wait(120), "".join(out)[-3000:]
            time.sleep(0.5)
            os.killpg(p.pid, signal.SIGINT)
            p.wait(timeout=60)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        reader.join(10)
    assert p.returncode == 0 and "Bye" in "".join(out), "".join(out)[-3000:]


def test_bench_ipfwd_refuses_an_l3fwd_dir_without_the_two_builds(repo_dir: Path, build_dir: Path,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "l3fwd").write_text("not a program")
    p = subprocess.run([sys.executable, str(repo_dir / "bench" / "ipfwd.py"), "--build", str(build_dir),
                        "--l3fwd-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0, p.stdout
    assert f"--l3fwd-dir {tmp_path}: no executable l3fwd there" in p.stderr, p.stderr


def test_af_xdp_attaches_from_the_bundle_where_libxdp_has_no_programs(bundle: Path, build_dir: Path,
                                                                        tmp_path: Path) -> None:
    """A test bed without libxdp's package has no XDP programs for net_af_xdp
    to load (a lent machine's af_xdp failed so, and everything fell back to
    af_packet): the bundle carries them and env.sh names them.  Checked with
    this machine's libxdp directory hidden as well as DPDK's: pp-tgen sends
    over a veth pair with --attach-mode af_xdp (no fallback), which fails
    without the variable."""
    from assign.vethbed import VethBed

    bpf = sorted(Path("/usr/lib").glob("*/bpf/xsk_def_xdp_prog.o"))
    assert bpf, "libxdp's XDP programs (/usr/lib/*/bpf, package libxdp1) are missing here"
    assert {f.name for f in (bundle / "bpf").iterdir()} >= {"xdp-dispatcher.o", "xsk_def_xdp_prog.o"}
    env = dict(os.environ)
    env.pop("PIPEPLACE_DPDK_DRIVERS", None)
    env.pop("LIBXDP_OBJECT_PATH", None)
    supp = tmp_path / "lsan-libxdp.supp"  # as traffic-gen/tests/test_tgen_veth.py: libxdp's umem, not ours
    supp.write_text("leak:xsk_umem__create\n")
    env.update(LSAN_OPTIONS=f"suppressions={supp}",
               ASAN_OPTIONS=sanitizer_env().get("ASAN_OPTIONS", "") + ":fast_unwind_on_malloc=0")
    with VethBed("pptb") as bed:
        def send(keep_variable: bool) -> subprocess.CompletedProcess:
            stats = tmp_path / "tgen.json"
            stats.unlink(missing_ok=True)
            unset = "" if keep_variable else "unset LIBXDP_OBJECT_PATH && "
            script = (f'mount -t tmpfs none "{plugin_dir()}" && mount -t tmpfs none "{bpf[0].parent}" && '
                      f'. "{bundle}/env.sh" 2>/dev/null && {unset}exec "$@"')
            cmd = [str(build_dir / "traffic-gen" / "pp-tgen"), "-l", ",".join(map(str, two_contexts())),
                   "--no-pci", "--no-huge", "-m", "256", "--file-prefix", f"tbx{os.getpid()}{int(keep_variable)}",
                   "--log-level", "lib.eal:warning", "--", "--attach", bed.attach("g0"), "--attach-mode",
                   "af_xdp", "--tx-port", "0", "--packets", "200", "--rate", "10k", "--stats", str(stats),
                   *bed.tgen_fields()]
            return subprocess.run(["unshare", "-m", "bash", "-c", script, "bash", *cmd], capture_output=True,
                                  text=True, env=env, timeout=180, stdin=subprocess.DEVNULL)

        p = send(keep_variable=False)
        assert p.returncode != 0 and "Couldn't find a BPF file" in p.stderr, p.stderr[-2000:]
        p = send(keep_variable=True)
        assert p.returncode == 0, p.stderr[-3000:]
        st = json.loads((tmp_path / "tgen.json").read_text())
        assert {a["attach"] for a in st["config"]["attached"]} == {"af_xdp"}
        assert st["tx"]["packets"] == 200


def test_the_ovs_dpdk_workload_runs_from_the_bundle_where_ovs_and_dpdk_are_not_installed(
        bundle: Path, repo_dir: Path, tmp_path: Path) -> None:
    """assign's ovs-dpdk workload (its own ovsdb-server and ovs-vswitchd, one bridge between two net_null
    ports) measured from the bundle on a machine without OVS or DPDK's drivers: in a mount namespace of
    the test's own, this machine's driver directory, OVS's package directories and every OVS program
    are hidden (tmpfs over the directories, /dev/null over the programs).  After env.sh it runs; without
    it (the libraries only) it cannot start: the check can fail."""
    if not OVS_VSWITCHD.is_file():
        pytest.skip("openvswitch-switch-dpdk is not installed here (tools/setup.sh installs it)")
    hide = [f'mount -t tmpfs none "{plugin_dir()}"', f'mount -t tmpfs none "{OVS_VSWITCHD.parent}"',
            f'mount -t tmpfs none "{OVS_SCHEMA.parent}"']
    for t in (*OVS_TOOLS, "ovs-vswitchd"):
        for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            if Path(d, t).exists() and not Path(d).is_symlink():
                hide.append(f"mount --bind /dev/null {d}/{t}")
    env = dict(os.environ, PATH=f"{repo_dir / '.venv' / 'bin'}:{os.environ['PATH']}")
    for k in ("PIPEPLACE_DPDK_DRIVERS", "OVS_PKGDATADIR"):
        env.pop(k, None)

    def sample(setup: str, db: Path) -> subprocess.CompletedProcess:
        script = " && ".join([*hide, setup, 'echo "ovsdb-tool: $(command -v ovsdb-tool)"', 'exec "$@"'])
        cmd = [str(bundle / "bin" / "assign"), "sample", "--workload", "ovs-dpdk", "--backend", "dpdk",
               "--n", "2", "--allow-colocate", "--repeat-every", "0", "--db", str(db), "--quiet"]
        return subprocess.run(["unshare", "-m", "bash", "-c", script, "bash", *cmd], capture_output=True,
                              text=True, env=env, timeout=240, stdin=subprocess.DEVNULL)

    p = sample(f'export LD_LIBRARY_PATH="{bundle}/lib"', tmp_path / "none.db")
    assert p.returncode != 0 and "ovsdb-tool" in p.stderr, p.stdout[-2000:] + p.stderr[-2000:]
    p = sample(f'. "{bundle}/env.sh" 2>/dev/null', tmp_path / "o.db")
    assert f"ovsdb-tool: {bundle}/ovs/bin/ovsdb-tool" in p.stdout, p.stdout
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "2 measured values stored (2 new, 0 failed)" in p.stdout, p.stdout
