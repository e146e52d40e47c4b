"""Classic pcap files (microsecond timestamps, little endian): the project's
one writer (the apps' traffic generators, the tests and the benchmarks build
their inputs with it), and a reader for what the programs write back.  Built with struct because the benchmarks
write millions of frames (scapy takes minutes for that); other formats
(pcapng, nanosecond pcap) are read with scapy's RawPcapReader."""
from __future__ import annotations

import struct
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:
    import numpy

PCAP_MAGIC_US = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
DEFAULT_SNAPLEN = 262144  # what tcpdump writes today
_HEADER = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")


def pcap_header(snaplen: int = DEFAULT_SNAPLEN, linktype: int = LINKTYPE_ETHERNET) -> bytes:
    return _HEADER.pack(PCAP_MAGIC_US, 2, 4, 0, 0, snaplen, linktype)


def pcap_record(data: bytes, orig_len: int | None = None, ts_sec: int = 0, ts_usec: int = 0) -> bytes:
    """One record: its header (captured length = len(data), original length
    orig_len or the same) and the data."""
    return _RECORD.pack(ts_sec, ts_usec, len(data), len(data) if orig_len is None else orig_len) + data


def write_pcap(path: Path, frames: Iterable[bytes], snaplen: int = DEFAULT_SNAPLEN,
               linktype: int = LINKTYPE_ETHERNET, truncate: bool = False, *,
               times_s: Iterable[float] | None = None) -> int:
    """Write frames as a classic pcap, stamped with times_s (seconds) or
    else frame i at i ms after the epoch.  A frame longer than snaplen is an
    error unless truncate (then it is cut, keeping its original length in the
    record).  Returns the frame count."""
    n = 0
    times = iter(times_s) if times_s is not None else None
    with open(path, "wb") as f:
        f.write(pcap_header(snaplen, linktype))
        for i, frame in enumerate(frames):
            if times is None:
                sec, usec = i // 1000, (i % 1000) * 1000
            else:
                t = next(times)
                sec = int(t)
                usec = int(round((t - sec) * 1e6))
                if usec >= 1000000:
                    sec, usec = sec + 1, usec - 1000000
            orig = len(frame)
            if orig > snaplen:
                if not truncate:
                    raise ValueError(f"{path}: frame {i} is {orig} bytes, over the snap length {snaplen}")
                frame = frame[:snaplen]
            f.write(pcap_record(bytes(frame), orig, sec, usec))
            n += 1
    return n


def write_pcap_array(path: Path, frames: "numpy.ndarray", snaplen: int = DEFAULT_SNAPLEN,
                     linktype: int = LINKTYPE_ETHERNET) -> int:
    """The file write_pcap writes for equal-sized frames (the rows of a
    uint8 array), without a Python loop: a million frames in about a second."""
    import numpy as np

    n, size = frames.shape
    if size > snaplen:
        raise ValueError(f"{path}: frames of {size} bytes, over the snap length {snaplen}")
    rec = np.empty((n, _RECORD.size + size), dtype=np.uint8)
    i = np.arange(n, dtype=np.uint32)
    hdr = np.stack([i // 1000, (i % 1000) * 1000, np.full(n, size, np.uint32),
                    np.full(n, size, np.uint32)], axis=1)
    rec[:, :_RECORD.size] = hdr.astype("<u4").view(np.uint8).reshape(n, _RECORD.size)
    rec[:, _RECORD.size:] = frames
    with open(path, "wb") as f:
        f.write(pcap_header(snaplen, linktype))
        rec.tofile(f)
    return int(n)


def read_pcap_records(path: Path) -> Iterator[tuple[bytes, int, float]]:
    """(data, original length, timestamp in s) of every record of any
    capture libpcap writes: classic pcap in either byte order and timestamp
    resolution through struct, anything else (pcapng) through scapy."""
    with open(path, "rb") as f:
        head = f.read(_HEADER.size)
        if len(head) < _HEADER.size:
            raise ValueError(f"{path}: {len(head)} bytes, shorter than a pcap file header")
        magic_le = struct.unpack("<I", head[:4])[0]
        orders = {0xA1B2C3D4: ("<", 1e-6), 0xA1B23C4D: ("<", 1e-9),
                  0xD4C3B2A1: (">", 1e-6), 0x4D3CB2A1: (">", 1e-9)}
        if magic_le not in orders:
            yield from _read_other(path)
            return
        order, unit = orders[magic_le]
        rec = struct.Struct(order + "IIII")
        i = 0
        while True:
            h = f.read(rec.size)
            if not h:
                return
            if len(h) < rec.size:
                raise ValueError(f"{path}: record {i} header cut short ({len(h)} of {rec.size} bytes)")
            sec, frac, incl, orig = rec.unpack(h)
            data = f.read(incl)
            if len(data) < incl:
                raise ValueError(f"{path}: record {i} cut short ({len(data)} of {incl} bytes)")
            yield data, orig, sec + frac * unit
            i += 1


def _read_other(path: Path) -> Iterator[tuple[bytes, int, float]]:
    from scapy.utils import RawPcapNgReader  # slow import; only for pcapng

    for data, meta in RawPcapNgReader(str(path)):
        orig = getattr(meta, "wirelen", None) or len(data)
        ts = ((meta.tshigh << 32) | meta.tslow) / meta.tsresol if hasattr(meta, "tshigh") else 0.0
        yield bytes(data), int(orig), float(ts)


def count_records(path: Path) -> tuple[int, int]:
    """(records, largest captured length) of a classic little-endian
    microsecond pcap, walking its record headers without reading frames."""
    n, biggest = 0, 0
    with open(path, "rb") as f:
        f.seek(_HEADER.size)
        while True:
            h = f.read(_RECORD.size)
            if len(h) < _RECORD.size:
                return n, biggest
            caplen = _RECORD.unpack(h)[2]
            f.seek(caplen, 1)
            n += 1
            biggest = max(biggest, caplen)


def read_pcap(path: Path) -> list[bytes]:
    """The frames (captured bytes) of a capture, in order."""
    return [d for d, _o, _t in read_pcap_records(path)]
