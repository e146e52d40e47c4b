"""argparse value types shared by every subcommand; each error names the
value as it was typed."""
from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def at_least(low: int, why: str = "") -> Callable[[str], int]:
    """An integer >= low; `why` says why in the error."""
    def parse(text: str) -> int:
        v = _int(text)
        if v < low:
            raise argparse.ArgumentTypeError(why.format(text=text) if why else
                                             f"{text!r} must be at least {low}")
        return v
    return parse


positive_int = at_least(1)
nonneg_int = at_least(0, "{text!r} must be >= 0")


def packet_counts(text: str) -> list[int]:
    """A comma-separated list of packet counts, each at least 1 (the benchmarks' size lists)."""
    try:
        v = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected packet counts, comma-separated") from None
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every count must be at least 1")
    return v


def number(text: str) -> float:
    """A finite float: nan and inf mean nothing as a threshold, a level or a time."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return v


def nonneg_number(text: str) -> float:
    v = number(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return v


def positive_number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return v


def _writable_place(text: str, what: str) -> str:
    """Refuse, before anything is measured, a path that cannot be written:
    its directory missing or read-only, or (for a file) a directory there."""
    path = os.path.abspath(os.path.expanduser(text))
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"{text!r}: directory {parent} does not exist")
    if os.path.exists(path):
        if what == "file" and os.path.isdir(path):
            raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file name")
        if what == "directory" and not os.path.isdir(path):
            raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
        if not os.access(path, os.W_OK):
            raise argparse.ArgumentTypeError(f"{text!r}: not writable")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: directory {parent} is not writable")
    return text


def output_file(text: str) -> str:
    """A file this command will write (checked at parse time, so a long
    measurement never ends in a path it cannot write)."""
    return _writable_place(text, "file")


def output_dir(text: str) -> str:
    """A directory this command will create or write into."""
    return _writable_place(text, "directory")


def figure_file(text: str) -> str:
    """An output_file whose extension matplotlib can write."""
    output_file(text)
    from matplotlib.figure import Figure

    formats = Figure().canvas.get_supported_filetypes()
    ext = os.path.splitext(text)[1].lower().lstrip(".")
    if ext not in formats:
        raise argparse.ArgumentTypeError(f"{text!r}: a figure needs one of the extensions "
                                         f"{', '.join('.' + f for f in sorted(formats))}")
    return text
