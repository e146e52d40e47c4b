"""The shared harness itself: pcap files that libpcap reads and writes the
same way we do, sanitizer reports of real sanitized programs recognised,
placements, and scripts that stop quietly when their reader goes away."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import harness
from harness import (Result, placement, read_pcap, read_pcap_records, run_app, sanitizer_reports,
                     write_pcap)


def frames(n: int, seed: int = 1) -> list[bytes]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(14, 1600, n)
    # Random bytes behind the IEEE local experimental EtherType, so that
    # tcpdump prints the frame length and nothing it decodes.
    return [rng.integers(0, 256, 12, dtype=np.uint8).tobytes() + b"\x88\xb5"
            + rng.integers(0, 256, int(s) - 14, dtype=np.uint8).tobytes() for s in sizes]


def test_pcap_round_trip_through_libpcap(tmp_path: Path) -> None:
    want = frames(200)
    src = tmp_path / "ours.pcap"
    assert write_pcap(src, want) == 200
    # tcpdump reads our file with libpcap and writes it again with libpcap.
    out = tmp_path / "libpcap.pcap"
    p = subprocess.run(["tcpdump", "-n", "-r", str(src), "-w", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert read_pcap(out) == want
    recs = list(read_pcap_records(out))
    assert [o for _d, o, _t in recs] == [len(f) for f in want]
    assert [t for _d, _o, t in recs] == pytest.approx([i / 1000 for i in range(200)])
    # and tcpdump counts every frame with its length
    text = subprocess.run(["tcpdump", "-n", "-r", str(src), "-e"], capture_output=True, text=True).stdout
    heads = [line for line in text.splitlines() if not line.startswith("\t")]
    assert [int(h.split(", length ", 1)[1].split(":")[0]) for h in heads] == [len(f) for f in want]


def test_truncated_frames_keep_their_length(tmp_path: Path) -> None:
    big = bytes(range(256)) * 8  # 2048 bytes
    path = tmp_path / "snap.pcap"
    with pytest.raises(ValueError, match="over the snap length 1500"):
        write_pcap(path, [big], snaplen=1500)
    write_pcap(path, [big], snaplen=1500, truncate=True)
    out = tmp_path / "libpcap.pcap"
    subprocess.run(["tcpdump", "-r", str(path), "-w", str(out)], check=True, capture_output=True)
    [(data, orig, _t)] = list(read_pcap_records(out))
    assert data == big[:1500] and orig == 2048


def test_reads_what_libpcap_writes_in_other_formats(tmp_path: Path) -> None:
    """Nanosecond pcap and pcapng (editcap converts ours) read the same."""
    want = frames(20, seed=2)
    src = tmp_path / "ours.pcap"
    write_pcap(src, want)
    for fmt in ("nsecpcap", "pcapng"):
        out = tmp_path / f"{fmt}.cap"
        subprocess.run(["editcap", "-F", fmt, str(src), str(out)], check=True, capture_output=True)
        assert read_pcap(out) == want, fmt


def test_cut_capture_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    write_pcap(path, frames(3))
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match=r"cut.pcap: record 2 cut short"):
        read_pcap(path)


BAD_C = r"""
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
int main(int argc, char **argv) {
	volatile int big = 0x7fffffff;
	char *p = malloc(8);
	if (argc > 1 && strcmp(argv[1], "asan") == 0)
		p[8] = 1;
	if (argc > 1 && strcmp(argv[1], "ubsan") == 0)
		big = big + argc;
	if (argc > 1 && strcmp(argv[1], "leak") == 0)
		p = NULL;
	printf("%d\n", big);
	free(p);
	return 0;
}
"""


@pytest.fixture(scope="module")
def sanitized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("san")
    (d / "bad.c").write_text(BAD_C)
    exe = d / "bad"
    subprocess.run([shutil.which("cc") or "cc", "-g", "-fsanitize=address,undefined", "-o", str(exe),
                    str(d / "bad.c")], check=True)
    return exe


@pytest.mark.parametrize("mode", ["asan", "ubsan", "leak"])
def test_real_sanitizer_reports_are_recognised(sanitized: Path, mode: str) -> None:
    env = harness.sanitizer_env({})
    if mode == "leak":
        env["ASAN_OPTIONS"] = "detect_leaks=1"
    p = subprocess.run([str(sanitized), mode], capture_output=True, text=True, env=env)
    r = Result(p.returncode, None, p.stdout, p.stderr, cmd=(str(sanitized), mode))
    assert r.sanitizer_reports(), p.stderr
    with pytest.raises(AssertionError, match="sanitizer report"):
        r.assert_clean()


def test_ubsan_report_fails_even_when_the_program_goes_on(sanitized: Path) -> None:
    """With halt_on_error=0 UBSan reports and the program exits 0: the
    report alone must fail the run."""
    env = harness.sanitizer_env({"UBSAN_OPTIONS": "halt_on_error=0"})
    p = subprocess.run([str(sanitized), "ubsan"], capture_output=True, text=True, env=env)
    assert p.returncode == 0
    r = Result(p.returncode, None, p.stdout, p.stderr)
    with pytest.raises(AssertionError, match="sanitizer report"):
        r.assert_clean()


def test_clean_run_is_clean(sanitized: Path) -> None:
    p = subprocess.run([str(sanitized)], capture_output=True, text=True, env=harness.sanitizer_env())
    Result(p.returncode, None, p.stdout, p.stderr).assert_clean()
    assert sanitizer_reports(p.stderr) == []


def test_missing_stats_fail_when_required() -> None:
    with pytest.raises(AssertionError, match="no statistics"):
        Result(0, None, "", "", require_stats=True).assert_clean()
    with pytest.raises(AssertionError, match="exit 3"):
        Result(3, {}, "", "").assert_clean()


def test_placement_of_n_instances() -> None:
    p = placement("stateful", 3, variant="x", contexts=(4, 5))
    assert p["app"] == "stateful" and p["variant"] == "x" and p["allow_colocate"] is True
    assert [i["rx"] for i in p["instances"]] == [{"port": i, "queue": 0} for i in range(3)]
    assert [i["tx"] for i in p["instances"]] == [{"port": 3, "queue": i} for i in range(3)]
    assert all(i["tasks"] == {"R": 4, "P": 5, "T": 4} for i in p["instances"])
    with pytest.raises(ValueError, match="0 instances"):
        placement("ipfwd", 0)


def test_run_app_command_line(tmp_path: Path) -> None:
    """run_app's command line, seen by a stand-in program that prints it."""
    echo = tmp_path / "echo.sh"
    echo.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    echo.chmod(0o755)
    r = run_app(echo, "pfx", tmp_path, ["net_pcap0,rx_pcap=x.pcap", "net_null0"],
                placement("ipfwd", 1, contexts=(0, 1)), ["--extra"], duration=2.5, no_huge_mb=64)
    r.assert_clean()
    args = r.stdout.splitlines()
    eal, app = args[:args.index("--")], args[args.index("--") + 1:]
    assert eal[:3] == ["--no-pci", "--file-prefix", "pfx"]
    assert "--no-huge" in eal and eal[eal.index("-m") + 1] == "64"
    assert [eal[i + 1] for i, a in enumerate(eal) if a == "--vdev"] == ["net_pcap0,rx_pcap=x.pcap", "net_null0"]
    assert Path(app[app.index("--placement") + 1]).is_file()
    assert app[app.index("--duration") + 1] == "2.5"
    assert "--stats" in app and app[-1] == "--extra"


def test_script_stops_quietly_when_its_reader_goes_away(tmp_path: Path) -> None:
    script = tmp_path / "lots.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nfrom harness import broken_pipe_safe\n"
        "@broken_pipe_safe\ndef main():\n    for i in range(1000000):\n        print('line', i)\n"
        "main()\n" % str(Path(harness.__file__).parent.parent))
    for _ in range(5):
        p = subprocess.run(f"{sys.executable} {script} | head -1; echo \"rc=${{PIPESTATUS[0]}}\"",
                           shell=True, executable="/bin/bash", capture_output=True, text=True)
        assert p.stdout.splitlines() == ["line 0", f"rc={128 + signal.SIGPIPE}"], p.stdout
        assert p.stderr == "", p.stderr
