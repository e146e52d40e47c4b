#!/usr/bin/env python3
"""How many measurements guided search (the model's best-ranked candidates, where `assign search --sampler
model` starts) needs
to come within X% of the estimated optimum, against plain random sampling,
side by side in this one run.

The optimum is the EVT estimate (UPB, estimated) of a large iid sample of
the backend.  Random: the draws of one iid stream in order; the count is
the first n whose best is within X% of UPB.  Guided: the model (noise-free,
--guide-params) ranks --pool candidates and they are measured best-ranked
first; the count is the first k whose best is within X%.  On the T2 model
the measurements are modelled (noise included) and the guide is the same
model without noise; with --model-params FILE from assign calibrate on
--machine local the guide is the calibrated model, and the "measurements"
are still the model unless --measured is given: then the dpdk backend
(--build) measures every value on this machine, the guided candidates and
the iid draws taking turns (k-th guided, k-th iid, ...) so that the
machine's drift falls on both alike.

Usage: .venv/bin/python assign/research/guided-search.py [--workload ipfwd-mem]
           [--machine ultrasparc-t2] [--instances 8] [--x 1,2,5]
       .venv/bin/python assign/research/guided-search.py --measured --build build
           --machine local --workload stateful --instances 3
           --model-params params.json --n 400 --k 30 --x 2,5,10
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "assign" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

import harness  # noqa: E402  (tests/harness: exit quietly in a pipe)

from assign.backends.base import MeasureRequest  # noqa: E402
from assign.backends.model import ModelBackend, load_params  # noqa: E402
from assign.evt import EstimateError, estimate  # noqa: E402
from assign.sampling import draws  # noqa: E402
from assign.topology import get_machine  # noqa: E402
from assign.workloads import Workload  # noqa: E402



def best_distinct(pool, order, k: int) -> list:
    """The first k distinct assignments of pool in the given order."""
    out, seen = [], set()
    for i in order:
        key = tuple(pool[i].tolist())
        if key not in seen:
            seen.add(key)
            out.append(pool[i])
            if len(out) == k:
                break
    return out

def first_within(values: np.ndarray, target: float) -> int | None:
    hit = np.flatnonzero(np.maximum.accumulate(values) >= target)
    return int(hit[0]) + 1 if hit.size else None


@harness.broken_pipe_safe
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="ipfwd-mem")
    ap.add_argument("--machine", default="ultrasparc-t2")
    ap.add_argument("--instances", type=int, default=8)
    ap.add_argument("--model-params", default=None)
    ap.add_argument("--n", type=int, default=5000, help="iid draws for the estimate and the random curve")
    ap.add_argument("--pool", type=int, default=100_000)
    ap.add_argument("--x", default="1,2,5", help="gaps to the estimated optimum, percent")
    ap.add_argument("--measured", action="store_true",
                    help="measure on this machine with the dpdk backend (--machine local, --build)")
    ap.add_argument("--build", default="build", help="--measured: the Meson build holding the apps")
    ap.add_argument("--k", type=int, default=30, help="--measured: guided candidates measured")
    ap.add_argument("--packets", type=int, default=1_000_000, help="--measured: packets per window")
    ap.add_argument("--confirm", type=int, default=5,
                    help="--measured: re-measure the three distinct placements with the best single values of each "
                         "stream and the model's first three choices this many times each (0: not)")
    ap.add_argument("--json", default=None, help="write every value (and the UPB) to this file")
    a = ap.parse_args()
    topo = get_machine(a.machine)
    w = Workload(a.workload, a.instances)
    colocate = w.n_tasks > topo.n_contexts
    params = load_params(w.name, a.model_params, topo)
    guide = ModelBackend(topo, w, params, noise_rel_sd=0.0)     # the guide (noise-free)
    iid = draws(1, 0, a.n, w.n_tasks, topo.n_contexts, colocate)
    pool = draws(2, 0, a.pool, w.n_tasks, topo.n_contexts, colocate)
    order = np.argsort(-guide.predict(pool)[0], kind="stable")
    if a.measured:
        v_iid, v_guided, how, g_asg, confirmed = measure_on_this_machine(a, topo, w, colocate, iid, pool, order)
    else:
        measured = ModelBackend(topo, w, params, seed=1)        # the "measurements" (noise included)
        v_iid = np.asarray(measured.measure_array(np.arange(a.n), iid).values)
        v_guided = np.asarray(measured.measure_array(10_000_000 + np.arange(a.pool), pool[order]).values)
        g_asg, confirmed = [pool[i].tolist() for i in order[:100]], ""
        how = f"measurements modelled (model backend, noise {measured.noise:g})"
    # Everything but the "within X%" table holds without an estimate (the values stay printed and stored).
    upb, why = None, "no finite UPB (the fitted tail is unbounded)"
    try:
        upb = estimate(v_iid[np.isfinite(v_iid)], cross_checks=False).upb
    except EstimateError as e:
        why = f"no EVT estimate ({e})"
    kind = "measured" if a.measured else "modelled"
    n_g = len(v_guided)
    n_ok = int(np.isfinite(v_iid).sum())
    print(f"{w.name} x{w.instances} on {topo.name}: {how}; "
          + (f"UPB {upb:,.0f} packets/s (estimated from {n_ok} iid draws)" if upb is not None
             else f"{why}, from {n_ok} iid draws"))
    print(f"best iid {np.nanmax(v_iid):,.0f}, best guided {np.nanmax(v_guided):,.0f} packets/s ({kind}); "
          f"the model's first choice: {v_guided[0]:,.0f} ({kind})")
    fin = v_iid[np.isfinite(v_iid)]
    print(f"iid median {np.median(fin):,.0f}; the best guided value is above {np.mean(fin < np.nanmax(v_guided)):.1%} "
          f"of the iid values, the model's first choice above {np.mean(fin < v_guided[0]):.1%}")
    # The best of the first k: guided in the model's order, random as the expected best of k
    # draws from the iid values (exact over the empirical distribution, not one lucky stream).
    srt = np.sort(fin)
    print(f"{'best of the first k':>20} {'random (expected)':>18} {'guided':>14} {'guided / random':>16}")
    for k in (1, 2, 5, 10, 30, 100):
        if k > len(v_guided) or k > len(srt):
            break
        cdf = (np.arange(1, len(srt) + 1) / len(srt)) ** k
        e_rand = float(np.sum(srt * np.diff(np.concatenate(([0.0], cdf)))))
        g = float(np.nanmax(v_guided[:k])) if np.isfinite(v_guided[:k]).any() else float("nan")
        print(f"{k:>20} {e_rand:>18,.0f} {g:>14,.0f} {g / e_rand:>16.3f}")
    if upb is not None:
        print(f"{'within X% of UPB':>18} {'random: draws':>14} {'guided: draws':>14} {'random / guided':>16}")
        for x in (float(t) for t in a.x.split(",")):
            target = upb * (1 - x / 100)
            r = first_within(np.nan_to_num(v_iid, nan=-1), target)
            g = first_within(np.nan_to_num(v_guided, nan=-1), target)
            ratio = f"{r / g:.1f}" if r and g else "-"
            print(f"{x:>17g}% {r if r else f'> {a.n}':>14} {g if g else f'> {n_g}':>14} {ratio:>16}")
        print(f"counts are counted in this run on {kind} values; UPB is estimated (EVT, iid draws only)")
    else:
        print(f"no 'within X% of the UPB' counts: {why}")
    if confirmed:
        print(confirmed)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"workload": w.name, "instances": w.instances, "machine": topo.name, "kind": kind,
                       "upb_estimated": upb, "iid": [None if not np.isfinite(v) else v for v in v_iid.tolist()],
                       "guided": [None if not np.isfinite(v) else v for v in v_guided.tolist()],
                       "guided_assignments (first 100)": g_asg}, f)
        print(f"values written to {a.json}")
    return 0


def measure_on_this_machine(a, topo, w, colocate, iid, pool, order):
    """(iid values, guided values, label, guided assignments, the
    re-measurement's text): the dpdk backend measures the k best-ranked
    distinct candidates and the n iid draws, taking turns; a failed
    measurement is NaN (never a value) and counted in the label."""
    from assign.backends.dpdk.backend import DpdkBackend, DpdkOptions

    guided = best_distinct(pool, order, a.k)
    opts = DpdkOptions(build_dir=Path(a.build), packets=a.packets)
    v_iid, v_guided = np.full(a.n, np.nan), np.full(len(guided), np.nan)
    failed = 0
    with DpdkBackend(topo, w, opts, allow_colocate=colocate) as be:
        def one(idx: int, ctx: np.ndarray) -> float:
            nonlocal failed
            r = be.measure([MeasureRequest(idx, tuple(int(topo.os_index[c]) for c in ctx))])[0]
            failed += r.status != "ok"
            return r.value if r.status == "ok" else np.nan
        for k in range(max(a.n, len(guided))):
            if k < len(guided):
                v_guided[k] = one(10_000_000 + k, guided[k])
            if k < a.n:
                v_iid[k] = one(k, iid[k])
            if (k + 1) % 25 == 0:
                print(f"  {k + 1} of {max(a.n, len(guided))} turns measured", file=sys.stderr)
        confirmed = confirm(a, one, iid, v_iid, guided, v_guided)
    label = (f"measurements measured (dpdk backend, {a.packets:,} packets a window, {failed} failed and left out), "
             f"guide: the model of {a.model_params or 'the defaults'}")
    return v_iid, v_guided, label, [g.tolist() for g in guided], confirmed


def confirm(a, one, iid, v_iid, guided, v_guided) -> str:
    """The best single values are partly luck (the winner's curse; on a
    noisy machine, mostly luck): the three distinct placements with the
    best single values of each stream and the model's first three choices
    are measured again --confirm times, taking turns, and their medians
    compared."""
    if a.confirm < 1:
        return "no re-measurement (--confirm 0): the single values above include their luck"
    # distinct placements: iid draws repeat one now and then, and one placement twice here would
    # be measured twice as often as the rest
    top = {"guided, best single values": best_distinct(guided, np.argsort(-np.nan_to_num(v_guided, nan=-1)), 3),
           "iid, best single values": best_distinct(iid, np.argsort(-np.nan_to_num(v_iid, nan=-1)), 3),
           "the model's first choices": guided[:3]}
    again: dict[str, list[list[float]]] = {s: [[] for _ in top[s]] for s in top}
    for r in range(a.confirm):
        for g, s in enumerate(top):
            for j, ctx in enumerate(top[s]):
                again[s][j].append(one(20_000_000 + 1000 * r + 10 * g + j, ctx))
    lines = [f"re-measured {a.confirm} times each, taking turns (measured):"]
    best = {}
    for s in top:
        med = [float(np.nanmedian(v)) if np.isfinite(v).any() else float("nan") for v in again[s]]
        best[s] = max(med)
        lines.append(f"  {s}:")
        lines += [f"    {ctx.tolist()}: median {m:,.0f}, min-max {np.nanmin(v):,.0f}-{np.nanmax(v):,.0f}"
                  for ctx, m, v in zip(top[s], med, map(np.asarray, again[s]))]
    lines.append("  best median: " + ", ".join(f"{s} {v:,.0f}" for s, v in best.items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
