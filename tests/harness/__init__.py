"""One harness for every test and benchmark that starts a pipeplace program:
sanitizer handling and run results (process), classic pcap files (pcap),
placement files (placement) and running a runtime app (app).

Import from the package (`from harness import run_app, write_pcap, ...`);
the root conftest.py puts tests/ on sys.path, and bench scripts do the same
with `sys.path.insert(0, str(REPO / "tests"))`."""
from __future__ import annotations

from harness.app import (app_binary, eal_args, free_hugepage_mb, hugepages, peer_driver_args, run_app,
                         start_app)
from harness.pcap import (LINKTYPE_ETHERNET, PCAP_MAGIC_US, pcap_header, pcap_record,
                          read_pcap, read_pcap_records, write_pcap, write_pcap_array)
from harness.placement import instance, placement, two_contexts, write_placement
from harness.process import (SANITIZER_MARKS, Result, broken_pipe_safe, catches_signal,
                             die_with_parent, finish, json_documents, sanitizer_env, sanitizer_reports, wait_catches_signal)

__all__ = [
    "app_binary", "broken_pipe_safe", "catches_signal", "die_with_parent", "eal_args", "finish",
    "free_hugepage_mb", "hugepages", "instance", "json_documents", "LINKTYPE_ETHERNET",
    "pcap_header", "PCAP_MAGIC_US", "pcap_record", "peer_driver_args", "placement", "read_pcap",
    "read_pcap_records", "Result", "run_app", "sanitizer_env", "SANITIZER_MARKS",
    "sanitizer_reports", "start_app", "two_contexts", "wait_catches_signal", "write_pcap",
    "write_pcap_array", "write_placement",
]
