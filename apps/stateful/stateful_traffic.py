#!/usr/bin/env python3
"""Default traffic for stateful: many concurrent flows whose sizes follow a
heavy-tailed (Pareto, shape --pareto-shape, default 1.2) distribution, so a
few elephants carry much of the traffic and most flows are mice; flows
start as a Poisson process of --new-flows-per-second; TCP flows (80%) open
with SYN, carry ACK/PSH data and close with FIN (a few with RST), so the
flow table creates, updates and ends records; UDP flows (20%) just carry
data. Sizes follow the simple IMIX for data packets, 64 bytes for
handshake packets. Addresses: IPv4 (90%) and IPv6 (10%).

The capture's timestamps follow the schedule (flow starts, packets spaced
over each flow's lifetime); replayed from memory at full speed, the rates
scale up with it while the mix of new, ongoing and ending flows stays.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import pcapgen  # noqa: E402

V6_PREFIX = bytes.fromhex("20010db800000000")


def flow_sizes(rng: np.random.Generator, n_flows: int, shape: float, cap: int) -> np.ndarray:
    """Packets per flow: 1 + Pareto(shape), capped (an elephant may not fill the capture)."""
    return np.minimum(1 + np.floor(rng.pareto(shape, n_flows) * 2).astype(np.int64), cap)


def generate(out: Path, n_packets: int, seed: int, new_flows_per_s: float, shape: float) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    # enough flows that their packets add up to n_packets
    sizes = flow_sizes(rng, max(16, n_packets), shape, max(4, n_packets // 50))
    total = np.cumsum(sizes)
    n_flows = int(np.searchsorted(total, n_packets) + 1)
    sizes = sizes[:n_flows]
    sizes[-1] -= max(int(total[n_flows - 1]) - n_packets, 0)
    sizes = np.maximum(sizes, 1)
    starts = np.cumsum(rng.exponential(1.0 / new_flows_per_s, n_flows))
    # a flow's packets are spread over a lifetime that grows with its size
    gaps = rng.exponential(0.002, n_flows)
    tcp = rng.random(n_flows) < 0.8
    v6 = rng.random(n_flows) < 0.1
    rst = rng.random(n_flows) < 0.05
    events = []  # (time, flow, index within flow)
    for f in range(n_flows):
        for k in range(int(sizes[f])):
            events.append((starts[f] + k * gaps[f], f, k))
    events.sort()
    flows = []
    for f in range(n_flows):
        proto = pcapgen.PROTO_TCP if tcp[f] else pcapgen.PROTO_UDP
        if v6[f]:
            src, dst = pcapgen.ipv6(V6_PREFIX, 0x1000 + f), pcapgen.ipv6(V6_PREFIX, 0xFFFF0000 + f % 4096)
        else:
            src = pcapgen.ipv4(0x0B000000 + f % (1 << 22) + 1)
            dst = pcapgen.ipv4(0x0A000000 + int(rng.integers(1, 1 << 16)))
        flows.append(pcapgen.Flow(src, dst, proto, 1024 + f % 64000, int(rng.choice([80, 443, 53, 8080, 22]))))
    data_sizes = pcapgen.imix_sizes(rng, len(events))
    frames, times = [], []
    for i, (t, f, k) in enumerate(events):
        fl, last = flows[f], k == sizes[f] - 1
        if fl.proto == pcapgen.PROTO_TCP and sizes[f] >= 2 and k == 0:
            flags, size = pcapgen.TCP_SYN, 64
        elif fl.proto == pcapgen.PROTO_TCP and sizes[f] >= 2 and last:
            flags, size = (pcapgen.TCP_RST if rst[f] else pcapgen.TCP_FIN | pcapgen.TCP_ACK), 64
        else:
            flags, size = pcapgen.TCP_ACK | pcapgen.TCP_PSH, int(data_sizes[i])
        frames.append(pcapgen.frame(fl, tcp_flags=flags, seq=k * 1460, frame_len=size))
        times.append(t)
    return pcapgen.write_pcap(out, frames, times_s=times), n_flows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", type=Path, help="pcap file to write")
    ap.add_argument("--packets", type=int, default=32768, help="packets in the capture (32768)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--new-flows-per-second", type=float, default=20000.0,
                    help="flow arrival rate of the schedule (20000)")
    ap.add_argument("--pareto-shape", type=float, default=1.2, help="flow size tail index (1.2)")
    a = ap.parse_args(argv)
    if a.packets < 1:
        ap.error(f"--packets {a.packets}: expected at least 1")
    if a.new_flows_per_second <= 0:
        ap.error(f"--new-flows-per-second {a.new_flows_per_second}: expected a positive rate")
    if a.pareto_shape <= 0:
        ap.error(f"--pareto-shape {a.pareto_shape}: expected a positive shape")
    generate(a.output, a.packets, a.seed, a.new_flows_per_second, a.pareto_shape)
    return 0


if __name__ == "__main__":
    import exit_status  # tools/: a path that cannot be written is a usage error
    sys.exit(exit_status.run(main, "stateful_traffic.py"))
