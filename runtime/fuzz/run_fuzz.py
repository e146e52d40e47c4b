#!/usr/bin/env python3
"""Bounded libFuzzer run for meson test: a fresh corpus in the build dir
(libFuzzer writes new inputs into its first corpus dir, which must not be
the source tree), seeded with the placement fixtures."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    fuzzer, corpus, seeds, seconds = argv[1], Path(argv[2]), argv[3], argv[4]
    corpus.mkdir(parents=True, exist_ok=True)
    return subprocess.call([fuzzer, str(corpus), seeds, f"-max_total_time={seconds}",
                            "-rss_limit_mb=2048", "-print_final_stats=1"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
