"""No program or library of the release build (build/, what
tools/testbed-bundle.sh carries to a test bed) holds an absolute path of
the machine that built it: the checkout's, or the shared data's beside it.
On any other machine such a path does not exist (a default --rules file,
a data directory, a helper's location); a program finds what it needs
where the install puts it, by an option or an environment variable.
Install prefixes (/usr, /usr/local, /etc, /run, ...) are not paths of one
machine and are allowed.  The debug builds (build-asan/, build-profile/)
are not deployed: their DWARF names the build directory by design."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ELF_MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3  # e_type: executables and shared objects, not object files
PRINTABLE = re.compile(rb"[\x20-\x7e]*")


def deployed_elf(build: Path) -> list[Path]:
    """Every ELF executable or shared object under build (Meson's own
    files and the per-target object directories left out)."""
    out = []
    for p in sorted(build.rglob("*")):
        if not p.is_file() or p.is_symlink() or "meson-" in p.parts[len(build.parts)] or \
                any(part.endswith(".p") for part in p.relative_to(build).parts[:-1]):
            continue
        with open(p, "rb") as f:
            head = f.read(18)
        if head[:4] == ELF_MAGIC and len(head) == 18:
            e_type = int.from_bytes(head[16:18], "little" if head[5] == 1 else "big")
            if e_type in (ET_EXEC, ET_DYN):
                out.append(p)
    return out


def strings_holding(data: bytes, needles: list[bytes]) -> list[str]:
    """The printable strings of data (as `strings` cuts them) that hold one of needles."""
    found = []
    for needle in needles:
        start = 0
        while (i := data.find(needle, start)) >= 0:
            lo = i
            while lo > 0 and 0x20 <= data[lo - 1] <= 0x7E:
                lo -= 1
            m = PRINTABLE.match(data, i)
            hi = m.end() if m else i + len(needle)
            s = data[lo:hi].decode("ascii", errors="replace")
            if s not in found:
                found.append(s)
            start = hi
    return found


@pytest.mark.offline  # reads files only
def test_no_deployed_binary_holds_a_path_of_the_build_machine(repo_dir: Path, shared_dir: Path) -> None:
    build = repo_dir / "build"
    assert (build / "build.ninja").exists(), f"no release build at {build}: run tools/setup.sh"
    machine_paths = sorted({str(repo_dir.resolve()), str(shared_dir.resolve()), str(repo_dir / ".." / "shared")})
    needles = [p.encode() for p in machine_paths]
    binaries = deployed_elf(build)
    # the apps and the tools at least: a scan of nothing passes nothing
    names = {p.name for p in binaries}
    assert {"ipfwd", "ahocorasick", "stateful", "analyzer", "pp-tgen"} <= names, sorted(names)
    offending = {}
    for p in binaries:
        hits = strings_holding(p.read_bytes(), needles)
        if hits:
            offending[str(p.relative_to(build))] = hits
    assert not offending, (
        f"{len(offending)} of {len(binaries)} binaries under {build} hold a path of this machine "
        f"({', '.join(machine_paths)}):\n"
        + "\n".join(f"  {name}: {hits}" for name, hits in sorted(offending.items())))
