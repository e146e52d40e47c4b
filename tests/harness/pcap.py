"""Classic pcap files (LINKTYPE_ETHERNET) written and read without scapy,
for tests that build captures with a property they need."""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable

PCAP_SNAPLEN = 262144
_MAGICS = {0xA1B2C3D4: ("<", 1e-6), 0xA1B23C4D: ("<", 1e-9),
           0xD4C3B2A1: (">", 1e-6), 0x4D3CB2A1: (">", 1e-9)}


def write_pcap(path: Path, frames: Iterable[bytes], snaplen: int = PCAP_SNAPLEN,
               times: Iterable[float] | None = None, linktype: int = 1) -> int:
    """Every frame whole (cut at snaplen, original length kept), 1 ms apart
    unless times are given; returns the count."""
    n = 0
    tit = iter(times) if times is not None else None
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))
        for frame in frames:
            t = next(tit) if tit is not None else n / 1000
            sec, usec = int(t), int(round((t - int(t)) * 1e6))
            if usec >= 1000000:
                sec, usec = sec + 1, usec - 1000000
            data = frame[:snaplen]
            f.write(struct.pack("<IIII", sec, usec, len(data), len(frame)))
            f.write(data)
            n += 1
    return n


def read_pcap(path: Path, with_times: bool = False) -> list:
    """Frames of a classic pcap (any byte order, micro- or nanosecond);
    pcapng through scapy.  With with_times: (seconds, frame) pairs."""
    data = Path(path).read_bytes()
    magic = struct.unpack_from("<I", data)[0] if len(data) >= 4 else 0
    if magic not in _MAGICS:
        from scapy.utils import RawPcapNgReader  # pcapng: not worth a reader of our own
        out = []
        for frame, meta in RawPcapNgReader(str(path)):
            t = (meta.tshigh << 32 | meta.tslow) / meta.tsresol if with_times else 0.0
            out.append((t, bytes(frame)) if with_times else bytes(frame))
        return out
    end, unit = _MAGICS[magic]
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, caplen, _wire = struct.unpack_from(end + "IIII", data, off)
        frame = data[off + 16:off + 16 + caplen]
        if len(frame) < caplen:
            break  # a capture cut in the middle of a record: what came before is kept
        out.append((sec + frac * unit, frame) if with_times else frame)
        off += 16 + caplen
    return out
