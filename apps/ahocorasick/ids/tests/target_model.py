"""What a target stack puts together from overlapping fragments and
segments: the bytes its application (or IP layer) gets, per overlap policy.

Written apart from the C code (ids/overlap.c) from the policy table of
Snort's frag3 and stream (Novak and Sturges, "Target-Based Fragmentation
Reassembly", 2005, and "Target-Based TCP Stream Reassembly", 2007), as
ids/overlap.h states it.  The evasion suite asks it whether the target saw
the attack; the Sturges-Novak fragment results check it first.

The model keeps, per byte, which piece (the surviving part of one fragment
or segment) it came from, and decides each new piece against the held ones
left to right."""
from __future__ import annotations

from dataclasses import dataclass

POLICIES = ("first", "last", "bsd", "linux", "windows", "solaris")


@dataclass
class Piece:
    s: int
    e: int
    data: bytes  # data[0] is the byte at s


def _new_wins_left(pol: str, tcp: bool, ee: int, ne: int) -> bool:
    if pol == "last":
        return True
    return tcp and pol == "solaris" and ee < ne


def _new_wins_right(pol: str, tcp: bool, ns: int, ne: int, es: int, ee: int, prev_end: int | None) -> bool:
    partial = ee > ne
    if pol == "first":
        return False
    if pol == "last":
        return True
    if not tcp:
        if partial:
            return pol == "linux" or (pol == "bsd" and es != ns)
        if pol == "linux":
            return True
        if pol == "windows":
            return ns < es and ne > ee
        return ns < es and ne >= ee  # bsd, solaris
    if partial:
        return pol != "solaris" and es != ns
    if pol == "linux":
        return (ns < es and ne >= ee) or (ns == es and ne > ee)
    if pol == "solaris":
        return not (es == ns and ee == ne and prev_end is not None and prev_end != ns)
    return ns < es and ne >= ee  # bsd, windows


def place(held: list[Piece], ns: int, data: bytes, pol: str, tcp: bool) -> list[Piece]:
    """The held pieces after N = [ns, ns + len(data)) arrives."""
    ne = ns + len(data)
    out: list[Piece] = []
    tail: list[Piece] = []
    cur = run = ns
    i = 0
    while i < len(held) and held[i].e <= ns:
        out.append(held[i])
        i += 1

    def new_piece(s: int, e: int) -> Piece:
        return Piece(s, e, data[s - ns:e - ns])

    last_new = False
    if i < len(held) and held[i].s < ns:
        l = held[i]
        i += 1
        if _new_wins_left(pol, tcp, l.e, ne):
            out.append(Piece(l.s, ns, l.data[:ns - l.s]))
            if l.e > ne:
                tail.append(Piece(ne, l.e, l.data[ne - l.s:]))
        else:
            out.append(l)
            cur = run = min(l.e, ne)
    while i < len(held) and held[i].s < ne:
        p = held[i]
        i += 1
        prev_end = out[-1].e if out else None
        end = min(p.e, ne)
        if _new_wins_right(pol, tcp, run, ne, p.s, p.e, prev_end):
            if last_new and out[-1].e == cur:
                out[-1] = new_piece(out[-1].s, end)
            else:
                out.append(new_piece(cur, end))
            last_new = True
            if p.e > ne:
                tail.append(Piece(ne, p.e, p.data[ne - p.s:]))
        else:
            if p.s > cur:
                if last_new and out[-1].e == cur:
                    out[-1] = new_piece(out[-1].s, p.s)
                else:
                    out.append(new_piece(cur, p.s))
            out.append(p)
            last_new = False
            run = end
        cur = end
    if cur < ne:
        if last_new and out[-1].e == cur:
            out[-1] = new_piece(out[-1].s, ne)
        else:
            out.append(new_piece(cur, ne))
    out += tail + held[i:]
    return sorted(out, key=lambda p: p.s)


def ip_reassemble(fragments: list[tuple[int, bytes, bool]], pol: str) -> bytes | None:
    """A datagram's data from its fragments (offset in bytes, data, more
    fragments) in arrival order; None when it never completes.  Non-last
    fragments are cut to a multiple of 8 bytes, as every stack does."""
    held: list[Piece] = []
    total = None
    for off, data, more in fragments:
        if more:
            data = data[:(off + len(data)) // 8 * 8 - off]
        elif total is None:
            total = off + len(data)
        if not data:
            continue
        held = place(held, off, data, pol, tcp=False)
        if total is not None and held[0].s == 0:
            pos = 0
            for p in held:
                if p.s > pos:
                    break
                pos = max(pos, p.e)
            if pos >= total:
                return b"".join(p.data for p in held)[:total]
    return None


def tcp_reassemble(segments: list[tuple[int, bytes]], pol: str) -> bytes:
    """The bytes a receiver hands its application from a direction's
    segments (relative sequence number, data) in arrival order: bytes
    delivered in order are final (a later overlap cannot change them); the
    policy decides between segments still held out of order."""
    stream = b""
    held: list[Piece] = []
    for off, data in segments:
        edge = len(stream)
        if off + len(data) <= edge:
            continue
        if off < edge:
            data = data[edge - off:]
            off = edge
        held = place(held, off, data, pol, tcp=True)
        while held and held[0].s == len(stream):
            stream += held.pop(0).data
    return stream


NOVAK = [(0, 24, "A"), (32, 16, "B"), (48, 24, "C"), (80, 8, "D"), (104, 16, "E"), (120, 24, "F"),
         (144, 16, "G"), (160, 16, "H"), (176, 8, "I"), (8, 32, "J"), (48, 24, "K"), (72, 24, "L"),
         (96, 24, "M"), (128, 8, "N"), (152, 8, "O"), (160, 8, "P"), (176, 16, "Q")]
# The datagram each stack made of them, one letter per 8 bytes (the paper's results).
NOVAK_RESULT = {
    "bsd": "AAAJJBCCCLLLMMMFFFGGHHIQ",
    "linux": "AAAJJBKKKLLLMMMFFFGGPHQQ",
    "windows": "AAAJBBCCCLLLMEEFFFGGHHIQ",
    "solaris": "AAAJBBCCCLLLMMMFFFGGHHIQ",
    "first": "AAAJBBCCCLDLMEEFFFGGHHIQ",
    "last": "AJJJJBKKKLLLMMMFNFGOPHQQ",
}
