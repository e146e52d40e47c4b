"""Frames over 64 KiB through net_pcap, every kind: DPDK 22.11's net_pcap
copies a frame of captured length C in 16 bits (runtime/pp_pcap_check.c has
the derivation from its source).  With T the --mbuf-size, a frame arrives
whole when C < 65536, or C < 131072 and C mod 65536 < T; every other frame
arrives cut, R repairs its pkt_len (exactly those, counted), and the runtime
names them on stderr before the port starts, with the --mbuf-size that
avoids it.  infinite_rx, which refuses frames longer than an mbuf, is
refused with the reason.  Every frame is received and accounted for under
ASan+UBSan."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file
from harness import pcap_header, pcap_record  # noqa: E402
from ipfwd_harness import instance, placement, run_ipfwd  # noqa: E402

WRAP = 65536
MAX_MBUF = 65535 - 128


def frame(n: int) -> bytes:
    """n bytes of a frame ipfwd drops as not IPv4 (IEEE local experimental
    ethertype), its bytes numbered so a cut or shifted copy would differ."""
    head = b"\x02\0\0\0\0\x01" + b"\x02\0\0\0\0\x02" + b"\x88\xb5"
    return (head + bytes(i & 0xFF for i in range(n - len(head))))[:n]


def write(path: Path, records: list[tuple[int, int]]) -> None:
    """(captured length, wire length) per record."""
    with open(path, "wb") as f:
        f.write(pcap_header(snaplen=262144))
        for i, (cap, wire) in enumerate(records):
            f.write(pcap_record(frame(cap), wire, i, 0))


def expected(caps: list[int], t: int) -> tuple[int, int]:
    """(cut by net_pcap, of those 128 KiB or longer): the model of
    eth_pcap_rx's 16-bit copy, written from the PMD source."""
    whole = [c < WRAP or (c % WRAP < t and c < 2 * WRAP) or c <= t for c in caps]
    cut = sum(1 for w in whole if not w)
    return cut, sum(1 for c, w in zip(caps, whole) if not w and c >= 2 * WRAP)


def run(build_dir: Path, file_prefix: str, tmp: Path, cap: Path, mbuf_size: int, n: int,
        infinite: bool = False):
    ctx = placement([instance(0, 0, 1, 0)])
    vdev = f"net_pcap0,rx_pcap={cap}" + (",infinite_rx=1" if infinite else "")
    return run_ipfwd(build_dir, file_prefix, tmp, [vdev, "net_null0"], ctx,
                     ["--packets", str(n), "--mbuf-size", str(mbuf_size), "--mbufs", "8191"],
                     timeout=180)


KINDS = [  # (captured, wire): every kind of oversized frame at T = 2048
    (1000, 70000),            # the capture cut it: wire over 64 KiB, captured under
    (65535, 65535),           # the largest 16-bit length: whole
    (WRAP, WRAP),             # x = 0: whole
    (WRAP + 1, WRAP + 1),     # x = 1: whole
    (WRAP + 2047, WRAP + 2047),  # x = T - 1: whole
    (WRAP + 2048, WRAP + 2048),  # x = T: cut to T bytes, repaired
    (70000, 70000),           # x = 4464 > T: cut, repaired
    (2 * WRAP + 5, 2 * WRAP + 5),     # 128 KiB and over, x < T: cut to x + 65536, repaired
    (2 * WRAP + 3000, 2 * WRAP + 3000),  # 128 KiB and over, x > T: cut, repaired
]


@pytest.mark.parametrize("mbuf_size", [2048, 8192])
def test_every_kind_of_frame_over_64k_is_repaired_or_named(build_dir: Path, file_prefix: str,
                                                            tmp_path: Path, mbuf_size: int) -> None:
    cap = tmp_path / "oversize.pcap"
    write(cap, KINDS)
    caps = [c for c, _w in KINDS]
    cut, cut_big = expected(caps, mbuf_size)
    assert cut == (4 if mbuf_size == 2048 else 2)  # the cases above are all there
    res = run(build_dir, file_prefix, tmp_path, cap, mbuf_size, len(KINDS))
    res.assert_clean()
    s = res.stats
    assert s["accounting_ok"] is True
    inst = s["instances"][0]
    assert inst["rx_packets"] == len(KINDS)
    assert inst["rx_chains_repaired"] == cut
    assert s["total"]["dropped_by_reason"]["not_ip"] == len(KINDS)
    line = next((x for x in res.stderr.splitlines() if "over 64 KiB" in x), "")
    assert f"{cut} of {len(KINDS)} frames are over 64 KiB and will reach the app cut" in line, res.stderr
    assert f"rx_pcap={cap}" in line
    assert f"{cut_big} are 128 KiB or longer" in line


def test_the_mbuf_size_named_receives_the_frames_whole(build_dir: Path, file_prefix: str,
                                                       tmp_path: Path) -> None:
    caps = [WRAP + 100, 70000, WRAP + 9000, 1500]
    cap = tmp_path / "under128k.pcap"
    write(cap, [(c, c) for c in caps])
    first = run(build_dir, file_prefix, tmp_path, cap, 2048, len(caps))
    first.assert_clean()
    need = max(c % WRAP for c in caps if c >= WRAP) + 1
    assert f"--mbuf-size {need} or more receives them whole" in first.stderr, first.stderr
    assert first.stats["instances"][0]["rx_chains_repaired"] == expected(caps, 2048)[0] == 2
    second = run(build_dir, file_prefix + "b", tmp_path, cap, need, len(caps))
    second.assert_clean()
    assert "over 64 KiB" not in second.stderr, second.stderr
    assert second.stats["instances"][0]["rx_chains_repaired"] == 0
    assert second.stats["instances"][0]["rx_packets"] == len(caps)


def test_infinite_rx_with_frames_longer_than_an_mbuf_is_refused_with_the_reason(
        build_dir: Path, file_prefix: str, tmp_path: Path) -> None:
    cap = tmp_path / "long.pcap"
    write(cap, [(1500, 1500), (5000, 5000), (WRAP + 10, WRAP + 10)])
    res = run(build_dir, file_prefix, tmp_path, cap, 2048, 3, infinite=True)
    assert not res.sanitizer_reports()
    assert res.rc != 0
    assert "2 of 3 frames are longer than an mbuf (--mbuf-size 2048)" in res.stderr, res.stderr
    assert f"the longest, {WRAP + 10} bytes, cannot fit one mbuf (at most {MAX_MBUF})" in res.stderr
    # under the largest mbuf: the advice names the size that works, and it does
    cap2 = tmp_path / "fits.pcap"
    write(cap2, [(1500, 1500), (5000, 5000)])
    res2 = run(build_dir, file_prefix + "b", tmp_path, cap2, 2048, 2, infinite=True)
    assert res2.rc != 0 and "give --mbuf-size 5000 or more" in res2.stderr, res2.stderr
    res3 = run(build_dir, file_prefix + "c", tmp_path, cap2, 5000, 64, infinite=True)
    res3.assert_clean()
    assert res3.stats["instances"][0]["rx_packets"] == 64
