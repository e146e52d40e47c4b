"""What the tests and benchmarks of every part share around the programs
they run: sanitizer handling and the run result (process.py), classic pcap
files (pcap.py), placement JSON (placement.py) and running a runtime app
with its ports, placement and statistics (app.py).  conftest.py puts tests/
on sys.path, so tests `from harness import ...`; bench scripts add it."""
from .app import app_binary, run_app
from .pcap import PCAP_SNAPLEN, read_pcap, write_pcap
from .placement import instance, one_instance, placement
from .process import SANITIZER_MARKERS, Result, sanitizer_env, sanitizer_reports
from .pipes import quiet_when_reader_goes

__all__ = ["PCAP_SNAPLEN", "Result", "SANITIZER_MARKERS", "app_binary", "instance", "one_instance",
           "placement", "quiet_when_reader_goes", "read_pcap", "run_app", "sanitizer_env",
           "sanitizer_reports", "write_pcap"]
