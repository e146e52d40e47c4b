#!/usr/bin/env bash
# Sets up everything pipeplace needs on Debian 12, as root: system packages,
# hugepages (or the --no-huge fallback), lwIP's Debian source, the Meson build,
# the Python venv with `assign` and the management command `pipeplace` (.venv/bin/).
# Idempotent, and quiet when there is nothing to do.
#
#   tools/setup.sh            release build in build/
#   tools/setup.sh --asan     also the ASan+UBSan build in build-asan/ (tests use it)
#                             and build-profile/ (-Dprofile=true, for assign characterize)
#   tools/setup.sh --fuzz     also the clang libFuzzer build in build-fuzz/
#   PIPEPLACE_HUGEPAGES=N     reserve N 2 MiB hugepages (default 512, about 1 GiB;
#                             assign calibrate/validate of ipfwd-mem want about 4096)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
want_asan=0 want_fuzz=0
for arg in "$@"; do
  case "$arg" in
    --asan) want_asan=1 ;;
    --fuzz) want_fuzz=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
# checked before anything is installed: a typo costs nothing
hp_want=${PIPEPLACE_HUGEPAGES:-512}
if ! [[ $hp_want =~ ^[0-9]{1,7}$ ]] || [ "$hp_want" -lt 1 ]; then
  echo "setup: PIPEPLACE_HUGEPAGES='$hp_want': expected a number of 2 MiB pages, 1 to 9999999" >&2
  exit 2
fi

say() { echo "setup: $*"; }
# Run quietly; show the captured output only when the command fails.
quiet() {
  local log; log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "setup: failed: $*" >&2
    exit 1
  fi
  rm -f "$log"
}

# --- system packages ---------------------------------------------------------
packages=(
  build-essential pkg-config meson ninja-build
  libdpdk-dev dpdk dpdk-dev libhwloc-dev hwloc libpcap-dev libjansson-dev
  libhyperscan-dev libsodium-dev libyaml-dev
  python3 python3-venv python3-dev
  tshark tcpdump clang libclang-rt-14-dev clang-format
  libfixbuf-dev libfixbuf-tools nfdump
  dpdk-doc  # /usr/share/dpdk/examples: bench/ipfwd.py and bench/ipfwd-lpm.py build l3fwd from them
  libndpi-dev libndpi-bin libpcre2-dev
  valgrind  # bench/ipfwd.py --instructions (callgrind)
  iproute2 nftables  # client workloads (assign/WORKLOADS.md): namespaces, veths, the host end's ingress drop
  chromium  # assign/tests/test_report_page.py renders `assign report`'s page headless
  # apps/netdedup: lwIP (the user-level stack), SHA-1 (nettle), deflate (zlib); its veths'
  # offloads off (ethtool); bench/netdedup.py's iperf3
  liblwip-dev nettle-dev zlib1g-dev ethtool iperf3
  # assign's ovs-dpdk workload (assign/WORKLOADS.md): Open vSwitch with DPDK, whose ovs-vswitchd-dpdk it
  # runs by path with its own database and sockets; the system's OVS service is left as the package sets it
  openvswitch-switch-dpdk
  # apps/netferret: JPEG decoding (libjpeg-turbo)
  libjpeg-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages (${missing[*]}); run this script as root" >&2
    exit 1
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  quiet apt-get update
  quiet apt-get install -y --no-install-recommends "${missing[@]}"
fi

# --- hugepages: about 1 GiB of 2 MiB pages and a hugetlbfs mount --------------
# Where the kernel refuses, the runtime falls back to --no-huge by itself.
hp_file=/proc/sys/vm/nr_hugepages
if [ -w "$hp_file" ] && [ "$(cat "$hp_file")" -lt "$hp_want" ]; then
  echo "$hp_want" >"$hp_file" 2>/dev/null || true
  hp_got=$(cat "$hp_file")
  if [ "$hp_got" -lt "$hp_want" ]; then
    say "the kernel reserved $hp_got of the $hp_want hugepages asked for (memory too fragmented or too small)"
  fi
fi
if ! grep -qs ' hugetlbfs ' /proc/mounts; then
  mkdir -p /dev/hugepages 2>/dev/null || true
  mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
fi
hp_free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if ! grep -qs ' hugetlbfs ' /proc/mounts || [ "${hp_free:-0}" -lt 64 ]; then
  say "hugepages unavailable (free: ${hp_free:-0}); DPDK programs will run with --no-huge"
fi

# --- lwIP from Debian's source package -----------------------------------------
# runtime/stack builds lwIP itself with runtime/stack/lwip/lwipopts.h (NO_SYS,
# static pools, a 256 KiB window; apps/netdedup/MEASURED.md measures it).  apt
# fetches the source of the installed liblwip-dev's version through a deb-src
# list of our own and checks it against Debian's signed index; the system's apt
# configuration is not touched.  Where that fails (no registry), the builds use
# Debian's liblwip, and the apps' statistics name the lwIP they run on.
lwip_dir=$repo/build-deps/lwip
lwip_ver=$(dpkg-query -W -f='${source:Version}' liblwip-dev 2>/dev/null || true)
fetch_lwip() {
  local t; t=$(mktemp -d)
  mkdir -p "$t/lists/partial" "$t/cache" "$t/parts" "$t/src"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    >"$t/parts/lwip-src.sources"
  local o=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$t/parts"
           -o Dir::State::Lists="$t/lists" -o Dir::Cache="$t/cache" -o APT::Sandbox::User=root)
  if apt-get "${o[@]}" update >"$t/log" 2>&1 &&
     (cd "$t/src" && apt-get "${o[@]}" source "lwip=$lwip_ver") >>"$t/log" 2>&1 &&
     [ -f "$t/src"/lwip-*/src/core/tcp_in.c ]; then
    rm -rf "$lwip_dir"; mkdir -p "$(dirname "$lwip_dir")"
    mv "$t/src"/lwip-*/ "$lwip_dir" && echo "$lwip_ver" >"$lwip_dir/.debian-version"
  else
    say "lwIP's source package ($lwip_ver) could not be fetched: building on Debian's liblwip ($t/log)"
    return 0
  fi
  rm -rf "$t"
}
if [ -n "$lwip_ver" ] && [ "$(cat "$lwip_dir/.debian-version" 2>/dev/null)" != "$lwip_ver" ]; then
  say "fetching lwIP's source package ($lwip_ver)"
  fetch_lwip
fi
lwip_source=
[ -f "$lwip_dir/.debian-version" ] && lwip_source=build-deps/lwip  # Meson wants it relative

# --- Meson builds ------------------------------------------------------------
# The default -Dparts before netdedup, netstreamcluster and netferret joined
# it: a build configured then (its parts left at a default) gets them;
# parts picked by hand stay.
old_default_parts=runtime,ipfwd,ahocorasick,stateful,analyzer,traffic-gen
old_default_parts2=runtime,ipfwd,ahocorasick,stateful,analyzer,netdedup,traffic-gen
old_default_parts3=runtime,ipfwd,ahocorasick,stateful,analyzer,netdedup,netstreamcluster,traffic-gen
new_default_parts=runtime,ipfwd,ahocorasick,stateful,analyzer,netdedup,netstreamcluster,netferret,traffic-gen
configure() {  # dir, extra meson args...
  local dir=$1 have; shift
  if [ ! -f "$dir/build.ninja" ]; then
    say "configuring $dir"
    quiet meson setup "$dir" -Dlwip_source="$lwip_source" "$@"
  elif have=$(meson introspect --buildoptions "$dir" | python3 -c \
        'import json, sys; print(",".join(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "parts")))') &&
       { [ "$have" = "$old_default_parts" ] || [ "$have" = "$old_default_parts2" ] ||
         [ "$have" = "$old_default_parts3" ]; }; then
    say "$dir: adding netdedup, netstreamcluster and netferret to its parts"
    quiet meson setup --reconfigure "$dir" -Dparts="$new_default_parts"
  fi
  if have=$(meson introspect --buildoptions "$dir" | python3 -c \
        'import json, sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "lwip_source"), "?"))') &&
     [ "$have" != "$lwip_source" ]; then
    say "$dir: lwIP from ${lwip_source:-the liblwip package}"
    quiet meson setup --reconfigure "$dir" -Dlwip_source="$lwip_source"
  fi
  if [ -n "${only_targets:-}" ]; then
    # the targets its tests run and nothing else (a build used for one test suite)
    # shellcheck disable=SC2046
    quiet ninja -C "$dir" $(meson introspect --tests "$dir" | python3 -c '
import json, os, sys
d = sys.argv[1]
for t in json.load(sys.stdin):
    if any(s.split(":")[-1] == sys.argv[2] for s in t["suite"]):
        print(*(os.path.relpath(a, d) if os.path.isabs(a) else a for a in t["cmd"][1:2]))' "$dir" "$only_targets")
  else
    quiet ninja -C "$dir"
  fi
}
configure build
if ((want_asan)); then
  configure build-asan -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false
  # per-category TSC accounting in the poll loops, for assign characterize (and its tests)
  configure build-profile -Dprofile=true
fi
if ((want_fuzz)); then
  # only the fuzz targets (tools/test.sh runs them, nothing else reads this build)
  CC=clang only_targets=fuzz configure build-fuzz -Dbuildtype=debugoptimized -Dfuzz=true \
    -Db_sanitize=address,undefined -Db_lundef=false
fi

# --- Python environment --------------------------------------------------------
# Rebuilt only when the requirements or the package metadata change.
stamp=.venv/.pipeplace-stamp
digest=$(cat tests/requirements.txt assign/pyproject.toml tools/pipeplace/pyproject.toml 2>/dev/null |
  sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$digest" ]; then
  say "preparing the Python environment in .venv"
  [ -x .venv/bin/python ] || quiet python3 -m venv .venv
  quiet .venv/bin/pip install --disable-pip-version-check -q -r tests/requirements.txt
  if [ -f assign/pyproject.toml ]; then
    quiet .venv/bin/pip install --disable-pip-version-check -q -e "assign[test]"
  fi
  # the management command, .venv/bin/pipeplace (tools/pipeplace/README.md); it uses the assign above
  if [ -f tools/pipeplace/pyproject.toml ]; then
    quiet .venv/bin/pip install --disable-pip-version-check -q --no-deps -e tools/pipeplace
  fi
  echo "$digest" >"$stamp"
fi
# the packages' bytecode, as a pip install of a wheel compiles it: an editable install leaves it to the
# first import, which writes none where PYTHONDONTWRITEBYTECODE is set (as on the CI machine), and every
# command then compiled its modules again (`assign estimate` at 10^3 draws: 0.28 s against 0.22 s, medians of 6)
quiet .venv/bin/python -m compileall -q assign/src tools/pipeplace/src
exit 0
