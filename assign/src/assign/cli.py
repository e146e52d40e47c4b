"""Command-line entry point (placeholder until the commands land)."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("assign: commands not implemented yet", file=sys.stderr)
    return 2
