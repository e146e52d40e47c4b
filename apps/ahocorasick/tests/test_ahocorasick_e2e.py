"""End-to-end: the ahocorasick app on the runtime, under whatever build
PIPEPLACE_BUILD points at (the suite uses the ASan+UBSan one).

Every shared capture goes through the app once, 31 captures per DPDK run
(one net_pcap port and one instance each), alternating engines, verdicts
and --scan-all-frames between runs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import scapy.all as scapy

import rule_reference as ref
from ac_run import (MAX_CAPTURES_PER_RUN, assert_clean, captures, packet_counts,
                    processed, read_frames, run_app, small_capture, tool)

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import pcapgen  # noqa: E402

N_CHUNKS = 14  # ceil(406 / 31)
VERDICTS = ["forward", "drop-on-match", "mark"]
# These tests are about keywords mode (the paper's benchmark); rules mode,
# the default, has its own (test_ahocorasick_rules.py).
KEYWORDS = ["--mode", "keywords"]


def chunk(shared_dir: Path, k: int) -> list[Path]:
    files = captures(shared_dir)
    assert len(files) <= N_CHUNKS * MAX_CAPTURES_PER_RUN, "more captures than chunks: raise N_CHUNKS"
    return files[k * MAX_CAPTURES_PER_RUN:(k + 1) * MAX_CAPTURES_PER_RUN]


@pytest.mark.parametrize("k", range(N_CHUNKS))
def test_every_capture_through_app(build_dir: Path, shared_dir: Path, file_prefix: str,
                                   tmp_path: Path, k: int) -> None:
    files = chunk(shared_dir, k)
    assert files, f"chunk {k} is empty"
    variant = "ac" if k % 2 == 0 else "hs"
    verdict = VERDICTS[k % 3]
    args = KEYWORDS + ["--verdict", verdict] + (["--scan-all-frames"] if k % 4 >= 2 else [])
    run = run_app(build_dir, file_prefix, tmp_path, files, args, variant=variant)
    assert_clean(run)
    s = run.stats
    total = s["total"]
    assert all(i["accounting_ok"] for i in s["instances"]), s["instances"]
    assert s["accounting_ok"] is True
    assert total["rx_packets"] == total["tx_packets"] + total["dropped_packets"] + total["queued_packets"]
    # Every packet libpcap can read from each capture came in on its port...
    expect = packet_counts(build_dir, files)
    for i, f in enumerate(files):
        want = max(expect[f], 0)
        assert s["instances"][i]["rx_packets"] == want, f"{f.name}: rx {s['instances'][i]['rx_packets']}, libpcap reads {want}"
    # ... and the P stage looked at every one of them.
    app = s["app_stats"]
    assert app["engine"] == variant and app["verdict"] == verdict
    assert app["engine_scan_errors"] == 0
    assert processed(app) == total["rx_packets"]
    assert total["queued_packets"] == 0
    if "--scan-all-frames" in args:
        assert sum(app["packets_unscanned"].values()) == 0
    drops = total["dropped_by_reason"].get("keyword_match", 0)
    if verdict == "drop-on-match":
        assert drops == app["packets_matched"]
    else:
        assert drops == 0
    if verdict == "mark":
        assert app["packets_marked"] <= app["packets_matched"]
    assert sum(app["matches_per_packet_histogram"].values()) == \
        app["packets_scanned"] + app["packets_scanned_whole_frame"]


def most_payload(shared_dir: Path, n: int) -> list[Path]:
    """The n shared captures with the most IPv4 TCP/UDP payload bytes."""
    sizes = {}
    for f in captures(shared_dir):
        try:
            frames = read_frames(f)
        except Exception:  # noqa: BLE001 - scapy refuses some odd captures; others have plenty
            continue
        sizes[f] = sum(len(p.payload) for fr in frames if (p := ref.payload_of(fr)) is not None)
    return sorted(sizes, key=lambda f: (-sizes[f], f.name))[:n]


def test_engines_agree_in_the_app(build_dir: Path, shared_dir: Path, file_prefix: str,
                                  tmp_path: Path) -> None:
    """Same captures, same keyword set: both variants count the same matches
    per keyword and per packet."""
    files = most_payload(shared_dir, 7)
    results = {}
    for variant in ("ac", "hs"):
        (tmp_path / variant).mkdir()
        run = run_app(build_dir, f"{file_prefix}{variant}", tmp_path / variant, files,
                      KEYWORDS + ["--scan-all-frames", "--top", "50"], variant=variant)
        assert_clean(run)
        results[variant] = run.stats["app_stats"]
    a, h = results["ac"], results["hs"]
    assert a["matches"] > 1000, "too few matches for the comparison to mean anything"
    for key in ("matches", "packets_matched", "keywords_hit", "bytes_scanned",
                "matches_per_packet_histogram", "top_keywords"):
        assert a[key] == h[key], f"{key}: ac {a[key]} != hs {h[key]}"


def dos_capture(build_dir: Path, path: Path) -> Path:
    """IPv4 TCP frames, each carrying a DoS-set keyword (every one of them)
    or bytes that hold none, some with ECN bits set."""
    kw = subprocess.run([str(tool(build_dir, "ac-rules")), "--dos", "--list-keywords"],
                        capture_output=True, text=True, check=True).stdout
    keywords = []
    for line in kw.splitlines():
        _id, case, text, _sids = line.split("\t")
        keywords.append((ref.decode_content(text)[0], case == "nocase"))
    plain = b"?" * 40
    assert not any((k.lower() in plain.lower()) if nc else (k in plain) for k, nc in keywords)
    a, b = pcapgen.ipv4(0x0A000001), pcapgen.ipv4(0x0A000002)
    frames = []
    for i, (k, _nc) in enumerate(keywords):
        for payload in (b"<" + k + b">", plain):
            f = bytearray(pcapgen.frame(pcapgen.Flow(a, b, pcapgen.PROTO_TCP, 1000 + i, 80), payload))
            if i % 2:
                f[15] |= 2  # ECT(0): the mark must keep it
                f[24:26] = b"\0\0"
                f[24:26] = pcapgen.checksum(bytes(f[14:34])).to_bytes(2, "big")
            frames.append(bytes(f))
    pcapgen.write_pcap(path, frames)
    return path


def test_mark_sets_dscp_and_checksum(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    src = dos_capture(build_dir, tmp_path / "dos.pcap")
    out = tmp_path / "out.pcap"
    run = run_app(build_dir, file_prefix, tmp_path, [src],
                  KEYWORDS + ["--dos", "--verdict", "mark", "--mark-dscp", "13"], tx_pcap=out)
    assert_clean(run)
    app = run.stats["app_stats"]
    assert 0 < app["packets_marked"] == app["packets_matched"] < app["packets_scanned"]
    before = scapy.rdpcap(str(src))
    after = scapy.rdpcap(str(out))
    assert len(after) == len(before)
    marked = 0
    for b, a in zip(before, after):
        if scapy.IP not in a:
            continue
        ip = a[scapy.IP]
        if ip.tos >> 2 == 13 and b[scapy.IP].tos >> 2 != 13:
            marked += 1
            assert ip.tos & 3 == b[scapy.IP].tos & 3, "ECN bits kept"
        raw = bytes(ip)[: ip.ihl * 4]
        fixed = scapy.IP(raw)
        del fixed.chksum
        assert scapy.IP(bytes(fixed)).chksum == ip.chksum, "IPv4 header checksum valid"
    assert marked == app["packets_marked"]


def test_drop_on_match_drops_exactly_matched(build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    src = dos_capture(build_dir, tmp_path / "dos.pcap")
    out = tmp_path / "out.pcap"
    run = run_app(build_dir, file_prefix, tmp_path, [src],
                  KEYWORDS + ["--dos", "--verdict", "drop-on-match"], variant="hs", tx_pcap=out)
    assert_clean(run)
    app, total = run.stats["app_stats"], run.stats["total"]
    assert app["packets_matched"] > 0
    assert total["dropped_by_reason"]["keyword_match"] == app["packets_matched"]
    assert len(scapy.rdpcap(str(out))) == total["rx_packets"] - app["packets_matched"]


@pytest.mark.parametrize("args, message", [
    (["--verdict", "sometimes"], "--verdict 'sometimes'"),
    (["--mark-dscp", "64"], "--mark-dscp '64'"),
    (["--top", "-1"], "--top '-1'"),
    (["--rules", "/nonexistent/x.rules"], "/nonexistent/x.rules"),
    (["--classtype", "no-such-class"], "no usable content keyword"),
])
def test_bad_options_are_refused(build_dir: Path, file_prefix: str,
                                 tmp_path: Path, args: list[str], message: str) -> None:
    src = small_capture(tmp_path / "small.pcap")
    run = run_app(build_dir, file_prefix, tmp_path, [src], KEYWORDS + args)
    assert run.returncode != 0
    assert message in run.stderr, run.stderr[-3000:]


def test_list_skipped_names_file_line_and_reason(build_dir: Path, shared_dir: Path) -> None:
    rules = shared_dir / "data" / "snort" / "community.rules"
    r = subprocess.run([str(tool(build_dir, "ac-rules")), "--rules", str(rules), "--dos",
                        "--list-skipped"], capture_output=True, text=True, check=True)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith(f"{rules}:")]
    # The DoS set has 72 rules; 11 have no content keyword (shared/data/README.md
    # counts 72 DoS rules, and `grep -c content:` on them gives 61).
    assert len(lines) == 11, r.stderr
    assert all(": sid " in ln and "no content keyword" in ln for ln in lines)
    line_no = int(lines[0].split(":")[1])
    text = rules.read_text().splitlines()[line_no - 1]
    assert "content:" not in text and "sid:" + lines[0].split("sid ")[1].split(":")[0] in text
    assert "61 used, 11 unusable" in r.stderr
