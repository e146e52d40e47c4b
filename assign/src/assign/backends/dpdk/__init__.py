"""The `dpdk` backend (assign/DPDK_BACKEND.md): backend.py (protocol and
checks), options.py (how each assignment is measured), runners.py (running
the app), traffic.py (embedded pcap replay), tgen.py (pp-tgen over
net_memif)."""
