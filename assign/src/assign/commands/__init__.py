"""The subcommands of `assign`, one module each.

One way to add a command: a module here with

    def register(sub) -> argparse.ArgumentParser   # adds its parser to `sub`
    def run(args: argparse.Namespace) -> int        # runs it; the exit status

and its name in NAMES (the order of `assign --help`).  Module level stays
light: every parser is built at each start of `assign`, so a command imports
what it needs (scipy, matplotlib, the backends) inside `run`.
"""
from __future__ import annotations

NAMES = ("topology", "count", "enumerate", "sample", "estimate", "iterate", "report", "baselines", "best",
         "noise", "compare", "characterize", "calibrate", "validate", "search")
