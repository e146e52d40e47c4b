"""argparse value types shared by every subcommand; each error names the
value as it was typed."""
from __future__ import annotations

import argparse
import math
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
