"""Backends turn assignments into throughput: base.py (the protocol),
registry.py (by name), model.py (modelled), dpdk/ (measured)."""
