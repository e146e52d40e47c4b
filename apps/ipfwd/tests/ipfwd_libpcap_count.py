"""Count the packets libpcap itself reads from a capture (the same library
net_pcap uses), through ctypes: the independent tally the robustness test
checks ipfwd's accounting against."""
from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path

_lib = ctypes.CDLL(ctypes.util.find_library("pcap") or "libpcap.so.0.8")
_lib.pcap_open_offline.restype = ctypes.c_void_p
_lib.pcap_open_offline.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
_lib.pcap_next_ex.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                              ctypes.POINTER(ctypes.c_void_p)]
_lib.pcap_close.argtypes = [ctypes.c_void_p]


def count_packets(path: Path) -> int | None:
    """Packets libpcap returns before the end of the file or its first
    error (net_pcap stops there too); None when libpcap cannot open it."""
    err = ctypes.create_string_buffer(256)
    p = _lib.pcap_open_offline(str(path).encode(), err)
    if not p:
        return None
    hdr, data = ctypes.c_void_p(), ctypes.c_void_p()
    n = 0
    try:
        while _lib.pcap_next_ex(p, ctypes.byref(hdr), ctypes.byref(data)) == 1:
            n += 1
    finally:
        _lib.pcap_close(p)
    return n


class _PktHdr(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long),
                ("caplen", ctypes.c_uint32), ("len", ctypes.c_uint32)]


def count_cut(path: Path, tailroom: int) -> int:
    """Frames DPDK 22.11's net_pcap hands over cut, with mbufs of tailroom
    bytes (--mbuf-size): it copies the captured length C in 16 bits, so a
    frame of C >= 65536 arrives whole only when C < 131072 and C mod 65536 <
    tailroom (runtime/pp_pcap_check.c).  R repairs exactly these."""
    err = ctypes.create_string_buffer(256)
    p = _lib.pcap_open_offline(str(path).encode(), err)
    if not p:
        return 0
    hdr, data = ctypes.c_void_p(), ctypes.c_void_p()
    n = 0
    try:
        while _lib.pcap_next_ex(p, ctypes.byref(hdr), ctypes.byref(data)) == 1:
            c = ctypes.cast(hdr, ctypes.POINTER(_PktHdr)).contents.caplen
            n += c >= 65536 and not (c < 131072 and c % 65536 < tailroom)
    finally:
        _lib.pcap_close(p)
    return n
