"""The shared test harness itself: pcap files libpcap reads back as
written, sanitizer reports recognised, placements the runtime's shape,
scripts quiet when their reader goes away."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import Result, one_instance, read_pcap, sanitizer_reports, write_pcap

REPO = Path(__file__).resolve().parents[1]


def test_pcap_round_trip_through_libpcap(tmp_path: Path) -> None:
    frames = [bytes([i]) * (60 + i) for i in range(50)] + [b"\xff" * 9000]
    path = tmp_path / "t.pcap"
    assert write_pcap(path, frames, times=[i * 0.25 for i in range(51)]) == 51
    assert read_pcap(path) == frames
    assert [t for t, _ in read_pcap(path, with_times=True)][:3] == [0.0, 0.25, 0.5]
    out = subprocess.run(["tcpdump", "-r", str(path), "-n", "-tt", "-e"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if not ln.startswith("\t")]  # no hex-dump lines
    assert len(lines) == 51 and lines[1].startswith("0.250000") and "length 9000" in lines[-1]


def test_snaplen_cuts_but_keeps_the_wire_length(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    write_pcap(path, [b"a" * 300], snaplen=100)
    assert read_pcap(path) == [b"a" * 100]
    out = subprocess.run(["tcpdump", "-r", str(path), "-n", "-e"], capture_output=True, text=True)
    assert "length 300" in out.stdout, out.stdout


def test_a_capture_cut_mid_record_keeps_what_came_before(tmp_path: Path) -> None:
    path = tmp_path / "t.pcap"
    write_pcap(path, [b"x" * 100, b"y" * 100])
    path.write_bytes(path.read_bytes()[:-10])
    assert read_pcap(path) == [b"x" * 100]


@pytest.mark.parametrize("line", [
    "==12==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1",
    "AddressSanitizer:DEADLYSIGNAL",
    "==12==ERROR: LeakSanitizer: detected memory leaks",
    "x.c:10:5: runtime error: signed integer overflow",
    "SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior x.c:10:5",
])
def test_every_kind_of_sanitizer_report_fails_a_run(line: str) -> None:
    r = Result(0, {}, "", f"EAL: ok\n{line}\nbye\n")
    assert sanitizer_reports(r.stderr) == [line]
    with pytest.raises(AssertionError, match="sanitizer report"):
        r.assert_clean()
    Result(0, {}, "", "EAL: ok\n").assert_clean()
    with pytest.raises(AssertionError, match="no statistics"):
        Result(0, None, "", "", require_stats=True).assert_clean()


def test_one_instance_placement_has_the_runtime_shape() -> None:
    doc = one_instance("stateful")
    assert doc["app"] == "stateful" and doc["allow_colocate"] is True
    (inst,) = doc["instances"]
    assert inst["rx"] == {"port": 0, "queue": 0} and inst["tx"] == {"port": 1, "queue": 0}
    assert set(inst["tasks"]) == {"R", "P", "T"} and inst["tasks"]["R"] == inst["tasks"]["T"]


def test_a_script_is_quiet_when_its_reader_goes(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(REPO / 'tests')!r})\n"
                      "from harness import quiet_when_reader_goes\n"
                      "@quiet_when_reader_goes\ndef main():\n"
                      "    for i in range(200000):\n        print(i)\n"
                      "sys.exit(main())\n")
    for _ in range(5):
        p = subprocess.run(["bash", "-o", "pipefail", "-c", f"{sys.executable} {script} | head -1"],
                           capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout == "0\n" and p.stderr == "", (p.returncode, p.stderr)
