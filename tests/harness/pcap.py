"""Classic pcap files for the tests and benchmarks: the project's one reader
and writer live in tools/pcapfile.py (product code: the apps' traffic
generators use it too); this module makes them part of the harness."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from pcapfile import (DEFAULT_SNAPLEN, LINKTYPE_ETHERNET, PCAP_MAGIC_US,  # noqa: E402
                      count_records, pcap_header, pcap_record, read_pcap, read_pcap_records,
                      write_pcap, write_pcap_array)

__all__ = ["DEFAULT_SNAPLEN", "LINKTYPE_ETHERNET", "PCAP_MAGIC_US", "count_records", "pcap_header",
           "pcap_record", "read_pcap", "read_pcap_records", "write_pcap", "write_pcap_array"]
