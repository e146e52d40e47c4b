"""Reading a sample from a value file: one throughput value per line (not CSV: one field)."""
from __future__ import annotations

import math


class ValueFileError(ValueError):
    """A value file that cannot be used; the message names file and line."""


def read_values(path: str) -> list[float]:
    """Values in file order.  Lines starting with '#' are comments; every
    other line must be one finite, non-negative number (blank lines only at
    the end of the file)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ValueFileError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ValueFileError(f"{path} is not a text file ({e.reason} at byte {e.start})") from None
    while lines and not lines[-1].strip():
        lines.pop()  # trailing blank lines: the end of the file
    values: list[float] = []
    for lineno, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            raise ValueFileError(f"{path} line {lineno}: blank line (a missing value?); expected one value per "
                                 f"line")
        if text.startswith("#"):
            continue
        if "," in text or ";" in text or "\t" in text or " " in text:
            raise ValueFileError(f"{path} line {lineno}: {raw.strip()!r} holds more than one field; "
                           f"expected one value per line")
        try:
            v = float(text)
        except ValueError:
            raise ValueFileError(f"{path} line {lineno}: {text!r} is not a number") from None
        if not math.isfinite(v):
            raise ValueFileError(f"{path} line {lineno}: {text!r} is not a finite number")
        if v < 0:
            raise ValueFileError(f"{path} line {lineno}: {text} is negative; a throughput cannot be")
        values.append(v)
    if not values:
        raise ValueFileError(f"{path} holds no values (one number per line expected)")
    return values
