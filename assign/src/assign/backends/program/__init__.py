"""Programs we did not write, measured by the dpdk backend (launch "eal" or "threads", assign/WORKLOADS.md)."""
