"""Frames for the evasion suite: TCP sessions whose segments are cut,
reordered, overlapped and sent with any TTL, and IP datagrams cut into
fragments (IPv4 and IPv6) at any offset, overlapping as asked."""
from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
import pcapgen  # noqa: E402

SYN, ACK, FIN, PSH, RST = pcapgen.TCP_SYN, pcapgen.TCP_ACK, pcapgen.TCP_FIN, pcapgen.TCP_PSH, pcapgen.TCP_RST
TCP, UDP = 6, 17
MACS = bytes.fromhex("020000000001" "020000000002")


def _ip_header(src: bytes, dst: bytes, proto: int, payload_len: int, ttl: int, ident: int,
               frag: int) -> bytes:
    """IPv4 header; frag: the flags and offset field."""
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + payload_len, ident & 0xFFFF, frag, ttl, proto, 0,
                      src, dst)
    return hdr[:10] + struct.pack(">H", pcapgen.checksum(hdr)) + hdr[12:]


def l4_segment(src: bytes, dst: bytes, proto: int, sport: int, dport: int, payload: bytes, seq: int = 0,
               ack: int = 0, flags: int = ACK | PSH) -> bytes:
    """A TCP or UDP header and payload, its checksum over the pseudo header."""
    if proto == TCP:
        l4 = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags,
                         65535, 0, 0) + payload
        off = 16
    else:
        l4 = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
        off = 6
    if len(src) == 16:
        pseudo = src + dst + struct.pack(">IxxxB", len(l4), proto)
    else:
        pseudo = src + dst + struct.pack(">xBH", proto, len(l4))
    cs = pcapgen.checksum(pseudo + l4) or 0xFFFF
    return l4[:off] + struct.pack(">H", cs) + l4[off + 2:]


def ip_frame(src: bytes, dst: bytes, proto: int, l4: bytes, ttl: int = 64, ident: int = 0) -> bytes:
    """A whole (unfragmented) IPv4 or IPv6 packet in Ethernet."""
    if len(src) == 16:
        return MACS + b"\x86\xdd" + struct.pack(">IHBB", 0x60000000, len(l4), proto, ttl) + src + dst + l4
    return MACS + b"\x08\x00" + _ip_header(src, dst, proto, len(l4), ttl, ident, 0x4000) + l4


def fragment(src: bytes, dst: bytes, proto: int, ident: int, off: int, data: bytes, more: bool,
             ttl: int = 64) -> bytes:
    """One fragment: data at byte offset off (a multiple of 8) of the
    datagram's payload."""
    assert off % 8 == 0
    if len(src) == 16:
        fh = struct.pack(">BBHI", proto, 0, off | (1 if more else 0), ident)
        return (MACS + b"\x86\xdd" + struct.pack(">IHBB", 0x60000000, 8 + len(data), 44, ttl) + src + dst
                + fh + data)
    return MACS + b"\x08\x00" + _ip_header(src, dst, proto, len(data), ttl, ident,
                                           (0x2000 if more else 0) | off // 8) + data


@dataclass
class Session:
    """A TCP conversation: client and server addresses (4 or 16 bytes),
    ports, and the frames so far.  Data offsets are relative to the first
    byte after the handshake in each direction."""
    client: bytes
    server: bytes
    cport: int
    sport: int
    frames: list[bytes] = field(default_factory=list)
    isn: tuple[int, int] = (1000, 5000)
    ends: list[int] = field(default_factory=lambda: [0, 0])

    def _seg(self, from_client: bool, off: int, payload: bytes, flags: int, ttl: int) -> bytes:
        d = 0 if from_client else 1
        src, dst = (self.client, self.server) if from_client else (self.server, self.client)
        sp, dp = (self.cport, self.sport) if from_client else (self.sport, self.cport)
        seq = self.isn[d] + 1 + off
        ack = self.isn[1 - d] + 1 + self.ends[1 - d]
        return ip_frame(src, dst, TCP, l4_segment(src, dst, TCP, sp, dp, payload, seq, ack, flags), ttl)

    def handshake(self) -> "Session":
        c, s = self.client, self.server
        self.frames += [
            ip_frame(c, s, TCP, l4_segment(c, s, TCP, self.cport, self.sport, b"", self.isn[0], 0, SYN)),
            ip_frame(s, c, TCP, l4_segment(s, c, TCP, self.sport, self.cport, b"", self.isn[1],
                                            self.isn[0] + 1, SYN | ACK)),
            ip_frame(c, s, TCP, l4_segment(c, s, TCP, self.cport, self.sport, b"", self.isn[0] + 1,
                                            self.isn[1] + 1, ACK))]
        return self

    def send(self, off: int, payload: bytes, from_client: bool = True, ttl: int = 64) -> "Session":
        self.frames.append(self._seg(from_client, off, payload, ACK | PSH, ttl))
        d = 0 if from_client else 1
        self.ends[d] = max(self.ends[d], off + len(payload))
        return self

    def raw(self, frame: bytes) -> "Session":
        self.frames.append(frame)
        return self

    def close(self) -> "Session":
        self.frames.append(self._seg(True, self.ends[0], b"", FIN | ACK, 64))
        self.frames.append(self._seg(False, self.ends[1], b"", FIN | ACK, 64))
        self.ends[0] += 1
        self.ends[1] += 1
        self.frames.append(self._seg(True, self.ends[0], b"", ACK, 64))
        return self

    def segment_bytes(self, off: int, payload: bytes) -> bytes:
        """The TCP header and payload of a client segment (to fragment it)."""
        return l4_segment(self.client, self.server, TCP, self.cport, self.sport, payload,
                          self.isn[0] + 1 + off, self.isn[1] + 1, ACK | PSH)
