#!/usr/bin/env bash
# Bundles what the builds need at run time for a test bed that has no
# package registry (a lab machine with many cores, say), made here on the
# Debian 12 machine that built them:
#
#   tools/testbed-bundle.sh [--peers] [DIR] [BUILD...]
#
# DIR (default testbed/ at the repository root, which git ignores) gets
#   lib/       every shared library the builds' programs and DPDK's drivers
#              load, but the C and C++ runtime every Linux has (libc, libm,
#              libpthread, libdl, librt, ld-linux, libgcc_s, libstdc++)
#   drivers/   DPDK's drivers the apps use (net_pcap, net_null, net_ring,
#              net_memif, net_af_xdp, net_af_packet, net_tap, mempool_ring,
#              mempool_stack, bus_vdev): links to
#              the one copy in lib/, because a second copy of bus_vdev
#              registers a second vdev bus and every --vdev then fails
#   bin/       lstopo-no-graphics (assign reads the topology through it) and
#              an `assign` that runs the repository's assign/src with the
#              test bed's python3 (which needs numpy, scipy, matplotlib, tqdm)
#   bpf/       libxdp's XDP programs (the dispatcher and AF_XDP's default
#              program, which net_af_xdp loads from object files: without
#              them af_xdp fails and the tools fall back to af_packet)
#   sbin/      the host tools the kernel-interface test beds call (ip,
#              ethtool, nft, iperf3, where this machine has them), last on
#              PATH: a test bed's own come first
#   ovs/       Open vSwitch with DPDK for assign's ovs-dpdk workload, where
#              this machine has it (tools/setup.sh installs
#              openvswitch-switch-dpdk): in ovs/bin the DPDK build of
#              ovs-vswitchd (Debian's alternative, as ovs-vswitchd-dpdk, the
#              name the workload runs), ovsdb-server, ovsdb-tool, ovs-vsctl,
#              ovs-appctl and ovs-ofctl, their libraries in lib/; in
#              ovs/share the database schema (vswitch.ovsschema). env.sh
#              puts ovs/bin last on PATH (a test bed's own OVS comes first)
#              and, where the test bed has no ovsdb-tool, names ovs/share in
#              OVS_PKGDATADIR, where OVS's tools look for the schema
#   rules/     the ahocorasick workload's Snort rules (../shared/data/snort/
#              community.rules, where present): the app's built-in default is
#              this machine's path, so env.sh names the copy in PIPEPLACE_RULES,
#              which assign reads as --rules' default
#   env.sh     to source there: `. testbed/env.sh`
#   peers/     with --peers: what the benchmarks measure ours against,
#              built or copied here because a test bed has no dpdk-doc
#              and no compiler: DPDK's l3fwd from the dpdk-doc examples
#              (bench/lib/l3fwd_build.py: as shipped, and with the software
#              checksum check) for bench/ipfwd.py, which finds them through
#              PIPEPLACE_L3FWD_DIR; dpdk-testpmd goes to bin/ (bench/ipfwd.py,
#              bench/tgen.py). Both load DPDK's drivers from the bundle
#              with EAL's -d, which the benchmarks add from
#              PIPEPLACE_DPDK_DRIVERS
# BUILD... (default build/ and build-profile/ where they exist) are the Meson
# builds whose programs are bundled.  Copy or carry the repository with DIR
# and the builds inside it; nothing is written outside DIR, here or there.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,52p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
peers=0
if [ "${1:-}" = --peers ]; then peers=1; shift; fi
case "${1:-}" in -*) echo "testbed-bundle: unknown option '$1' (see --help)" >&2; exit 2 ;; esac
out=${1:-$repo/testbed}
shift || true
builds=("$@")
if ((${#builds[@]} == 0)); then
  for b in "$repo/build" "$repo/build-profile"; do [ -f "$b/build.ninja" ] && builds+=("$b"); done
fi
((${#builds[@]})) || { echo "testbed-bundle: no Meson build found (run tools/setup.sh)" >&2; exit 1; }
for b in "${builds[@]}"; do
  [ -f "$b/build.ninja" ] || { echo "testbed-bundle: $b is not a Meson build directory" >&2; exit 2; }
done

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
plugins=$(ls -d /usr/lib/"$multiarch"/dpdk/pmds-* 2>/dev/null | head -n 1)
[ -n "$plugins" ] || { echo "testbed-bundle: DPDK's driver directory /usr/lib/$multiarch/dpdk/pmds-* is missing (apt-get install dpdk)" >&2; exit 1; }
lstopo=$(command -v lstopo-no-graphics) || { echo "testbed-bundle: lstopo-no-graphics is missing (apt-get install hwloc)" >&2; exit 1; }
if ((peers)); then
  testpmd=$(command -v dpdk-testpmd) || { echo "testbed-bundle: --peers: dpdk-testpmd is missing (apt-get install dpdk)" >&2; exit 1; }
fi
# Open vSwitch with DPDK (Debian's openvswitch-switch-dpdk): ovs-vswitchd's DPDK build is the package's
# alternative of /usr/sbin/ovs-vswitchd (not the default one)
ovs=()
ovs_vswitchd=$(update-alternatives --list ovs-vswitchd 2>/dev/null | grep -m 1 dpdk || true)
[ -x "$ovs_vswitchd" ] || ovs_vswitchd=/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
ovs_schema=/usr/share/openvswitch/vswitch.ovsschema
if [ -x "$ovs_vswitchd" ] && [ -f "$ovs_schema" ]; then
  ovs+=("$ovs_vswitchd")
  for t in ovsdb-server ovsdb-tool ovs-vsctl ovs-appctl ovs-ofctl; do
    p=$(PATH=$PATH:/usr/sbin:/sbin command -v "$t") || {
      echo "testbed-bundle: $t is missing, but $ovs_vswitchd is there (apt-get install openvswitch-switch)" >&2
      exit 1
    }
    ovs+=("$(readlink -f "$p")")
  done
else
  echo "testbed-bundle: no Open vSwitch with DPDK here ($ovs_vswitchd; apt-get install" \
       "openvswitch-switch-dpdk): the bundle carries none, and assign's ovs-dpdk workload needs it" >&2
fi
drivers=(bus_vdev mempool_ring mempool_stack net_memif net_null net_pcap net_ring net_af_xdp net_af_packet net_tap)
host_tools=()
for t in ip ethtool nft iperf3; do
  if p=$(command -v "$t"); then host_tools+=("$(readlink -f "$p")"); fi
done

# replaced only when it is an earlier bundle: never a directory of something else
if [ -e "$out" ] && ! [ -f "$out/env.sh" -a -d "$out/lib" -a -d "$out/drivers" ]; then
  echo "testbed-bundle: $out exists and is not a bundle this tool made: give a new directory" >&2
  exit 2
fi
out=$(realpath -m "$out")
# EAL refuses to load drivers from under a directory anyone may write to
d=$out
while [ "$d" != / ]; do
  if [ -e "$d" ] && [ -n "$(find "$d" -maxdepth 0 -perm -o+w)" ]; then
    echo "testbed-bundle: $d is world-writable, and DPDK's EAL loads no driver from under such a directory: bundle elsewhere" >&2
    exit 2
  fi
  d=$(dirname "$d")
done
rm -rf "$out"
mkdir -p "$out/lib" "$out/drivers" "$out/bin" "$out/sbin"

# The programs: every ELF executable the builds made (not Meson's own files).
programs=()
while IFS= read -r -d '' f; do
  [ "$(od -An -N4 -tx1 "$f" | tr -d ' ')" = 7f454c46 ] && programs+=("$f")
done < <(find "${builds[@]}" -type f -perm -u+x ! -path '*/meson-*' ! -path '*.p/*' ! -name '*.so*' -print0)
if ((peers)); then
  python3 "$repo/bench/lib/l3fwd_build.py" "$out/peers" >/dev/null
  programs+=("$testpmd" "$out/peers/l3fwd" "$out/peers/l3fwd-sw-cksum")
fi
driver_files=()
for d in "${drivers[@]}"; do
  f=$(readlink -f "$plugins/librte_$d.so") || { echo "testbed-bundle: $plugins/librte_$d.so is missing" >&2; exit 1; }
  driver_files+=("$f")
done

# Every library ldd resolves for them, but the runtime any Linux has.
runtime='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libutil|libgcc_s|libstdc\+\+)\.so'
ldd "${programs[@]}" "${driver_files[@]}" "$lstopo" "${host_tools[@]}" "${ovs[@]}" 2>/dev/null |
  awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 } $2 == "=>" && $3 == "not" { print "MISSING", $1 }' |
  sort -u > "$out/.libs"
if grep -q '^MISSING' "$out/.libs"; then
  echo "testbed-bundle: libraries not found here: $(grep '^MISSING' "$out/.libs" | cut -d' ' -f2 | tr '\n' ' ')" >&2
  exit 1
fi
while read -r name path; do
  [[ $name =~ $runtime ]] || cp -L "$path" "$out/lib/$name"
done < "$out/.libs"
rm -f "$out/.libs"
for f in "${driver_files[@]}"; do
  soname=$(objdump -p "$f" | awk '$1 == "SONAME" { print $2 }')
  [ -e "$out/lib/$soname" ] || cp -L "$f" "$out/lib/$soname"
  ln -sf "../lib/$soname" "$out/drivers/$(basename "${soname%.*}")"
done
cp -L "$lstopo" "$out/bin/"
for t in "${host_tools[@]}"; do cp -L "$t" "$out/sbin/"; done
mkdir -p "$out/bpf"
for o in xdp-dispatcher.o xsk_def_xdp_prog.o xsk_def_xdp_prog_5.3.o; do
  if [ -f "/usr/lib/$multiarch/bpf/$o" ]; then cp -L "/usr/lib/$multiarch/bpf/$o" "$out/bpf/"; fi
done
((peers)) && cp -L "$testpmd" "$out/bin/"
if ((${#ovs[@]})); then
  mkdir -p "$out/ovs/bin" "$out/ovs/share"
  cp -L "${ovs[0]}" "$out/ovs/bin/ovs-vswitchd-dpdk"
  for t in "${ovs[@]:1}"; do cp -L "$t" "$out/ovs/bin/"; done
  cp -L "$ovs_schema" "$out/ovs/share/"
fi
rules="$repo/../shared/data/snort/community.rules"
if [ -f "$rules" ]; then
  mkdir -p "$out/rules"
  cp -L "$rules" "$out/rules/"
fi

rel=$(realpath --relative-to="$out" "$repo")
cat > "$out/bin/assign" <<EOF
#!/bin/sh
# assign from the repository's source, with this machine's python3
here=\$(dirname "\$(readlink -f "\$0")")
PYTHONPATH="\$here/../$rel/assign/src\${PYTHONPATH:+:\$PYTHONPATH}" exec python3 -m assign.cli "\$@"
EOF
chmod +x "$out/bin/assign"
cat > "$out/env.sh" <<EOF
# Source on the test bed (bash): . $(basename "$out")/env.sh
_tb=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="\$_tb/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PATH="\$_tb/bin:\$PATH:\$_tb/sbin"
# Where DPDK 22.11's drivers are installed EAL loads them from $plugins
# itself; elsewhere the runtime hands EAL the bundle's (-d, runtime/base/pp_eal.h)
[ -e $plugins/librte_net_null.so ] || export PIPEPLACE_DPDK_DRIVERS="\$_tb/drivers"
# libxdp finds its XDP programs there where the test bed has none of its own
[ -e /usr/lib/$multiarch/bpf/xsk_def_xdp_prog.o ] || export LIBXDP_OBJECT_PATH="\$_tb/bpf"
# DPDK's l3fwd, where bundled (--peers): bench/ipfwd.py's --l3fwd-dir
if [ -x "\$_tb/peers/l3fwd" ]; then export PIPEPLACE_L3FWD_DIR="\$_tb/peers"; fi
# Open vSwitch with DPDK, where bundled: after the test bed's own (assign's ovs-dpdk workload runs
# ovs-vswitchd-dpdk from Debian's package directory first, then from PATH); the schema where the test
# bed has no OVS tools of its own (theirs come with their own schema)
if [ -d "\$_tb/ovs/bin" ]; then
  export PATH="\$PATH:\$_tb/ovs/bin"
  if [ "\$(command -v ovsdb-tool)" = "\$_tb/ovs/bin/ovsdb-tool" ]; then export OVS_PKGDATADIR="\$_tb/ovs/share"; fi
fi
# the ahocorasick workload's rules, where bundled: assign's default for --rules
if [ -f "\$_tb/rules/community.rules" ]; then export PIPEPLACE_RULES="\$_tb/rules/community.rules"; fi
python3 -c 'import numpy, scipy, matplotlib, tqdm, tomllib' 2>/dev/null ||
  echo "testbed: python3 lacks one of numpy, scipy, matplotlib, tqdm, tomllib (Python 3.11 or newer): assign needs them" >&2
grep -qs ' hugetlbfs ' /proc/mounts && [ "\$(cat /proc/sys/vm/nr_hugepages)" -gt 0 ] ||
  echo "testbed: no hugepages (echo 4096 > /proc/sys/vm/nr_hugepages; mount -t hugetlbfs nodev /dev/hugepages): DPDK runs with --no-huge, slower" >&2
unset _tb
EOF
echo "testbed-bundle: $out: $(ls "$out/lib" | wc -l) libraries, ${#drivers[@]} drivers, for $(echo "${programs[@]}" | wc -w) programs of ${builds[*]} ($(du -sh "$out" | cut -f1)); on the test bed: . $(basename "$out")/env.sh"
