"""One harness for every test and benchmark that starts a pipeplace program:
sanitizer handling and run results (process), classic pcap files (pcap),
placement files (placement) and running a runtime app (app).

Import from the package (`from harness import run_app, write_pcap, ...`);
the root conftest.py puts tests/ on sys.path, and bench scripts do the same
with `sys.path.insert(0, str(REPO / "tests"))`."""
from __future__ import annotations

from harness.app import app_binary, eal_args, run_app, start_app
from harness.pcap import (LINKTYPE_ETHERNET, PCAP_MAGIC_US, pcap_header, pcap_record,
                          read_pcap, read_pcap_records, write_pcap)
from harness.placement import instance, placement, two_contexts, write_placement
from harness.process import (SANITIZER_MARKS, Result, broken_pipe_safe, finish, sanitizer_env,
                             sanitizer_reports)

__all__ = [
    "LINKTYPE_ETHERNET", "PCAP_MAGIC_US", "SANITIZER_MARKS", "Result", "app_binary",
    "broken_pipe_safe", "eal_args", "finish", "instance", "pcap_header", "pcap_record",
    "placement", "read_pcap", "read_pcap_records", "run_app", "sanitizer_env",
    "sanitizer_reports", "start_app", "two_contexts", "write_pcap", "write_placement",
]
