"""The optimum of placement means on this machine (measured, dpdk backend):
for each workload, co-located instances on the machine's contexts,

  1. ground truth: every distinct placement measured in interleaved rounds
     (`assign enumerate --backend dpdk --reps`), half the rounds before the
     sample and half after it, so that the machine's drift over the run falls
     on the truth as on the sample;
  2. the sample: --n iid draws with the planned repetitions (`assign sample`),
     the noise-aware estimate of the optimum of means (`assign estimate`);
  3. the choice (`assign best`) and the chosen placement measured afresh
     (`assign noise`): is its fresh mean within the gap `best` printed?

It prints, per workload: the truth and its interval (measured), the estimate
and its interval (estimated), whether the interval covers the truth, the
chosen placement's printed gap and its fresh mean's gap to the truth, the
noise CV, and the share of measurements spent on repetitions and selection.

    .venv/bin/python bench/optimum.py measured [--workloads stateful analyzer ipfwd-l1] [--instances 3]
        [--n 2000] [--truth-reps 6] [--duration 0.05] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
ASSIGN = REPO / ".venv" / "bin" / "assign"


def assign(*args: str, json_out: bool = False, timeout: float = 7200) -> dict | str:
    r = subprocess.run([str(ASSIGN), *args], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"assign {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return json.loads(r.stdout) if json_out else r.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/optimum.py measured", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", nargs="+", default=["stateful", "analyzer", "ipfwd-l1"])
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--n", type=int, default=2000, help="iid draws (default: 2000)")
    ap.add_argument("--truth-reps", type=int, default=6, help="rounds of the ground truth, half before and half "
                                                               "after the sample (default: 6)")
    ap.add_argument("--fresh-reps", type=int, default=20, help="fresh measurements of the chosen placement")
    ap.add_argument("--duration", type=float, default=0.05, help="window of one measurement, s (default: 0.05)")
    ap.add_argument("--out", default=None, help="folder for the databases (default: results/optimum-measured-DATE)")
    args = ap.parse_args(argv)
    if not ASSIGN.exists():
        sys.exit("run tools/setup.sh first (the venv's assign is missing)")
    out = Path(args.out or REPO / "results" / time.strftime("optimum-measured-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    common = ["--instances", str(args.instances), "--allow-colocate", "--backend", "dpdk",
              "--duration", str(args.duration)]
    print(f"optimum of placement means on this machine ({os.cpu_count()} contexts; {args.instances} instances "
          f"co-located; windows of {args.duration} s; databases in {out})")
    rows = []
    for wl in args.workloads:
        db = out / f"{wl}.db"
        truth_db = out / f"{wl}-truth.db"
        half = max(2, args.truth_reps // 2)
        t0 = time.time()
        before = assign("enumerate", "--workload", wl, *common, "--reps", str(half), "--db", str(truth_db),
                        "--json", json_out=True)
        assign("sample", "--n", str(args.n), "--workload", wl, *common, "--db", str(db), "--quiet")
        est = assign("estimate", "--db", str(db), "--json", json_out=True)
        truth = assign("enumerate", "--workload", wl, *common, "--reps", str(max(args.truth_reps, half + 1)),
                       "--db", str(truth_db), "--json", json_out=True)
        best = assign("best", "--db", str(db), "--out", str(out / f"{wl}-best.json"), "--json", json_out=True)
        fresh = assign("noise", "--placement", str(out / f"{wl}-best.json"), "--reps", str(args.fresh_reps),
                       "--duration", str(args.duration), "--json", json_out=True)
        t = truth["optimum_mean"]
        om = best.get("optimum_mean") or est["optimum_mean"]
        covered = om["estimate"] is not None and om["ci_low"] <= t["estimate"] <= (om["ci_high"] or float("inf"))
        f_mean = fresh["summary"]["mean"]
        fresh_gap_truth = 100 * (t["estimate"] - f_mean) / t["estimate"]
        fresh_gap_est = 100 * (om["estimate"] - f_mean) / om["estimate"] if om["estimate"] else None
        rows.append({"workload": wl, "truth": t, "truth_first_half": before["optimum_mean"], "estimate": om,
                     "covered": covered, "chosen": best["chosen"], "gap_pct": best.get("gap_pct"),
                     "gap_pct_high": best.get("gap_pct_high"), "fresh_mean": f_mean,
                     "fresh_cv": fresh["summary"]["cv"], "fresh_gap_to_truth_pct": fresh_gap_truth,
                     "fresh_gap_to_estimate_pct": fresh_gap_est, "cost": best.get("cost"),
                     "noise_cv": om["noise"]["cv"], "minutes": (time.time() - t0) / 60})
        r = rows[-1]
        within = r["gap_pct_high"] is not None and fresh_gap_est is not None and fresh_gap_est <= r["gap_pct_high"]
        r["fresh_within_printed_gap"] = within
        print(f"\n{wl} x{args.instances} ({r['minutes']:.0f} min):")
        print(f"  ground truth, optimum of means (measured, {truth['reps']} rounds of {truth['placements']} "
              f"placements): {t['estimate']:,.0f} [{t['ci_low']:,.0f}, {t['ci_high']:,.0f}]; first half alone "
              f"{before['optimum_mean']['estimate']:,.0f}")
        hi = "inf" if om["ci_high"] is None else f"{om['ci_high']:,.0f}"
        print(f"  estimate from {args.n} draws (estimated, {om['method']}): {om['estimate']:,.0f} "
              f"[{om['ci_low']:,.0f}, {hi}]: covers the truth: {'yes' if covered else 'NO'}")
        print(f"  noise CV {100 * r['noise_cv']:.2f}% (measured, the run's repetitions)")
        print(f"  chosen placement (measured, selection): {best['chosen']['mean']:,.0f}; printed gap "
              f"{best.get('gap_pct', float('nan')):.2f}% (at most {r['gap_pct_high'] or float('nan'):.2f}%)")
        print(f"  chosen placement afresh (measured, {args.fresh_reps} reps, CV {100 * r['fresh_cv']:.1f}%): "
              f"{f_mean:,.0f}: {fresh_gap_est:.2f}% below the estimate (within the printed gap: "
              f"{'yes' if within else 'NO'}), {fresh_gap_truth:.2f}% below the ground truth")
        if best.get("cost"):
            print(f"  cost: {best['cost']['share_pct']:.1f}% of the run's measurements were repetitions and "
                  f"selection")
    (out / "summary.json").write_text(json.dumps(rows, indent=2))
    print()
    print("summary: " + "; ".join(f"{r['workload']}: covered {'yes' if r['covered'] else 'no'}, fresh within gap "
                                  f"{'yes' if r['fresh_within_printed_gap'] else 'no'}, cost "
                                  f"{(r['cost'] or {}).get('share_pct', float('nan')):.1f}%" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
