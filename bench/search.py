#!/usr/bin/env python3
"""Every searcher at the same budgets, in one run (issue 52; method and
reading: assign/EVT.md, "Searching the top, and the certificate", and
assign/notes/2026-11-28-search.md).

  searchers  random     the paper: iid draws, the best single value deployed,
                        its UPB interval as the bound
             assign     assign's default flow: `assign sample`, `assign best`
                        (the surrogate search, then KN's selection), the
                        certified optimum of means (`assign estimate`)
             local      the same flow with `--sampler local` (no surrogate)
             model      the same flow with `--sampler model`, its guide the
                        model with every parameter off by a random factor
                        exp(N(0, 0.2^2)), as a calibration is (the exact model
                        makes the values: it would know the answer)
             tpe, gp    Optuna's samplers over the Lehmer code, one trial a
                        measurement, the best trial deployed (gp where PyTorch
                        is installed; both only up to --peer-max measurements)
             opentuner  OpenTuner's permutation search (bench/lib/opentuner_peer.py),
                        where it is installed (pip install opentuner)
  budgets    every measurement counted: draws, repetitions, search, selection
  spaces     the T2's model, five workloads x8 (the optimum: the best of 30
             noise-free local-search restarts, said so); 'pack:2 core:4 pu:2'
             stateful x3 (60,165 placements: exact)
  noise      0, 2 and 5% on the model
  measured   --truth-db F adds 'measured F': a ground truth measured on this machine
             (`assign enumerate --reps K --workload stateful --instances 3 --allow-colocate
             --backend dpdk --db F`: 256 placements on two contexts), replayed: each
             measurement one of the placement's K values at random, the optimum the
             largest placement mean (its own noise; the noise levels do not apply)

It prints, per space, noise and budget, each searcher's median and 10th/90th
percentile score (the deployed placement's noise-free mean over the
optimum), whether its answer carries a bound (how many of them with no
upper end: "at least this much") and how often the bound held;
then the budget each searcher needs to be within 1% and 2% of the optimum in
9 of 10 seeds, and the rows where assign's flow does worse by median than the
best peer.

    .venv/bin/python bench/search.py [--seeds 20] [--jobs 2] [--spaces 't2 stateful x8' ...]
        [--noises 0 0.02 0.05] [--budgets 300 1000 5000 20000] [--searchers assign random tpe ...]

`bench/search.py cli [--seeds 10] [--workloads ipfwd-mem stateful] [--noise 0.02]` runs the used-by flow
itself, the three commands a user types, on the T2's model:

    assign sample --n 5000 --workload W --machine ultrasparc-t2 --backend model --noise 0.02 --seed S --db F
    assign best --db F --out B
    assign estimate --db F --json

and prints for each seed whether optimum_mean's interval holds the optimum, the chosen placement's
score, and cost.total (goals: 9 of 10, 9 of 10 within 1%, at most 20,000).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
try:
    import numpy as np

    import search_cases as sc
except ImportError as e:
    sys.exit(f"run it with the project's venv: .venv/bin/python bench/search.py ({e})")

SPACES = [f"t2 {w} x8" for w in ("ipfwd-mem", "stateful", "ipfwd-l1", "ahocorasick", "analyzer")] + \
    ["pack:2 core:4 pu:2 stateful x3"]
NOISES = (0.0, 0.02, 0.05)
BUDGETS = (300, 1000, 5000, 20000)
FLOWS = ("assign", "local", "model")
PEERS = ("random", "tpe", "gp", "opentuner")
SEARCHERS = ("assign", "random", "local", "model", "tpe", "gp", "opentuner")


def available(name: str) -> str | None:
    """None when the searcher can run here, else why not."""
    if name == "gp":
        from assign.search.gp import available as gp_ok
        return gp_ok()
    if name == "opentuner":
        try:
            import opentuner  # noqa: F401
        except ImportError as e:
            return f"OpenTuner does not import ({e}): pip install opentuner"
    return None


def job(args):
    space, name, noise, seed, budget = args
    case = sc.parse(space)
    t = time.time()
    try:
        out = sc.flow(case, "surrogate" if name == "assign" else name, noise, seed, budget) if name in FLOWS \
            else sc.peer(case, name, noise, seed, budget)
    except Exception as e:  # a failure is a row of its own, said, never a score
        return args, None, f"{type(e).__name__}: {e}", time.time() - t
    return args, out, None, time.time() - t


def noises_of(space: str, noises: list[float]) -> list[float]:
    """A measured space has its own noise: one row, not one per injected level."""
    return [0.0] if space.startswith("measured ") else list(noises)


def noise_label(space: str, nz: float) -> str:
    return "meas." if space.startswith("measured ") else f"{100 * nz:g}%"


def pct(v: list[float], q: float) -> float:
    return float(np.percentile(v, q)) if v else math.nan


def cli_flow(args) -> tuple:
    """One seed of the used-by flow, by the installed commands."""
    import json
    import subprocess
    import tempfile

    w, noise, seed = args
    assign = Path(sys.executable).parent / "assign"
    case = sc.parse(f"t2 {w} x8")
    with tempfile.TemporaryDirectory() as d:
        db, best = f"{d}/t2.db", f"{d}/best.json"
        run = lambda *a: subprocess.run([str(assign), *a], capture_output=True, text=True, check=True)  # noqa: E731
        t = time.time()
        run("sample", "--n", "5000", "--workload", w, "--machine", "ultrasparc-t2", "--backend", "model",
            "--noise", str(noise), "--seed", str(seed), "--db", db, "--quiet")
        run("best", "--db", db, "--out", best)
        est = json.loads(run("estimate", "--db", db, "--json").stdout)
        dt = time.time() - t
    be = sc.model(case)
    chosen = est["chosen"]["contexts"]
    score = float(be.predict(np.array([be.contexts_of(chosen)]))[0][0])
    om = est["optimum_mean"]
    return w, seed, score, om, est["cost"]["total"], dt


def cli_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench/search.py cli", description="the used-by flow, by the commands")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--workloads", nargs="+", default=["ipfwd-mem", "stateful"])
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    jobs = [(w, args.noise, s) for w in args.workloads for s in range(args.first_seed, args.first_seed + args.seeds)]
    print(f"the used-by flow on the T2's model (modelled values), noise {100 * args.noise:g}%, seeds "
          f"{args.first_seed}..{args.first_seed + args.seeds - 1}: sample --n 5000, best, estimate --json")
    rows: dict[str, list] = {}
    with ProcessPoolExecutor(args.jobs) as ex:
        for w, seed, score, om, total, dt in ex.map(cli_flow, jobs, chunksize=1):
            opt = sc.optimum(sc.parse(f"t2 {w} x8"))[0]
            hi = om.get("ci_high")
            held = om.get("ci_low") is not None and om["ci_low"] <= opt and (hi is None or opt <= hi)
            rows.setdefault(w, []).append((held, score / opt, total))
            print(f"  {w:<12} seed {seed:>3}: interval [{om.get('ci_low') or 0:,.0f}, "
                  f"{'inf' if hi is None else f'{hi:,.0f}'}] ({om.get('method')}, {om.get('status')}) "
                  f"{'holds' if held else 'MISSES'} the optimum {opt:,.0f}; chosen {score / opt:.4f} of it; "
                  f"cost.total {total:,}; {dt:.0f} s", flush=True)
    for w, r in rows.items():
        print(f"summary: {w}: interval held the optimum in {sum(h for h, _, _ in r)} of {len(r)} (goal 9 of 10); "
              f"chosen within 1% in {sum(s >= 0.99 for _, s, _ in r)} of {len(r)} (goal 9 of 10); cost.total at most "
              f"{max(t for _, _, t in r):,} (goal <= 20,000)")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["cli"]:
        return cli_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="seeds per row (default: 20)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all CPUs)")
    ap.add_argument("--spaces", nargs="+", default=SPACES, metavar="SPACE",
                    help="'t2 WORKLOAD xN' or 'TOPOLOGY WORKLOAD xN' (default: the T2's five and the 60,165 space)")
    ap.add_argument("--noises", nargs="+", type=float, default=list(NOISES), metavar="CV")
    ap.add_argument("--truth-db", metavar="F", help="add the space measured on this machine (see above)")
    ap.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS), metavar="N")
    ap.add_argument("--searchers", nargs="+", default=list(SEARCHERS), choices=SEARCHERS)
    ap.add_argument("--jsonl", metavar="F", help="also append every run's outcome to F as it ends (JSON lines)")
    ap.add_argument("--report", nargs="+", metavar="F",
                    help="run nothing: print the tables of the runs stored in these --jsonl files (several runs' "
                         "files, e.g. parts run on other machines; the values are modelled, so where they ran "
                         "does not change them)")
    ap.add_argument("--peer-max", type=int, default=1000, metavar="N",
                    help="the largest budget Optuna's and OpenTuner's samplers run at (default: 1000; TPE's time "
                         "per trial grows with the trials: 1,000 trials took 60-190 s here, 5,000 about an hour; "
                         "GP's grows with their cube)")
    args = ap.parse_args()
    stored: list[dict] = []
    if args.report:
        runs = {}
        for f in args.report:  # a run stored twice (the same seed in two files) counts once
            for line in Path(f).read_text().splitlines():
                if line:
                    d = json.loads(line)
                    runs[(d["space"], d["searcher"], d["noise"], d["seed"], d["budget"])] = d
        stored = list(runs.values())
        seen = lambda key: list(dict.fromkeys(d[key] for d in stored))  # noqa: E731
        args.spaces = [x for x in SPACES if x in seen("space")] + [x for x in seen("space") if x not in SPACES]
        args.searchers = [x for x in SEARCHERS if x in seen("searcher")]
        args.noises, args.budgets = sorted(seen("noise")), sorted(seen("budget"))
        args.truth_db = None
    if args.truth_db:
        args.spaces = list(args.spaces) + [f"measured {args.truth_db}"]
    for s in args.spaces:
        try:
            sc.parse(s)
        except ValueError as e:
            ap.error(str(e))
    if any(not 0.0 <= v < 1.0 for v in args.noises) or any(b < 100 for b in args.budgets):
        ap.error("--noises are fractions in [0, 1) (0.02 is 2%), --budgets at least 100")
    skipped: dict[str, str] = {}
    for name in args.searchers:
        why = None if args.report else available(name)
        if why:
            skipped[name] = why
    measured = any(s.startswith("measured ") for s in args.spaces)
    print(f"searchers at equal budgets: {args.seeds} seeds a row; values modelled (the T2's and synthetic machines' "
          f"model with injected noise)" + ("; a measured space's values measured on this machine and replayed"
                                          if measured else "")
          + "; score = the deployed placement's mean (noise-free where modelled) / the optimum")
    for name, why in skipped.items():
        print(f"not run: {name}: {why}")
    opt = {}
    for s in args.spaces:
        opt[s] = sc.optimum(sc.parse(s))
        print(f"optimum of {s}: {opt[s][0]:,.0f} ({'' if s.startswith('measured ') else 'modelled, '}{opt[s][1]})")
    jobs = []
    for s in args.spaces:
        for nz in noises_of(s, args.noises):
            for b in args.budgets:
                for name in args.searchers:
                    if name in skipped or (name in ("tpe", "gp", "opentuner") and b > args.peer_max):
                        continue
                    jobs += [(s, name, nz, seed, b) for seed in range(args.seeds)]
    results: dict[tuple, list] = {}
    if args.report:
        for d in stored:
            out = None if d["error"] else sc.Outcome(d["score"], None if d["bound"] is None else
                                                     tuple(math.inf if v is None else v for v in d["bound"]),
                                                     d["cost"], d["status"])
            results.setdefault((d["space"], d["noise"], d["budget"], d["searcher"]), []).append(
                (out, d["error"], d["seconds"]))
        seeds = {len(v) for v in results.values()}
        print(f"from {', '.join(args.report)}: {sum(len(v) for v in results.values())} runs, "
              f"{min(seeds, default=0)}-{max(seeds, default=0)} seeds a row")
    else:
        print(f"{len(jobs)} runs on {args.jobs} processes; model: guided by a miscalibrated model (each parameter off "
              f"by exp(N(0, {sc.MISCALIBRATION}^2))); tpe, gp, opentuner: budgets up to {args.peer_max:,}")
        t0 = time.time()
        sink = open(args.jsonl, "a") if args.jsonl else None
        with ProcessPoolExecutor(args.jobs) as ex:
            # each run recorded as it ends (a slow run does not hold back the rest's records)
            done = (f.result() for f in as_completed([ex.submit(job, j) for j in jobs]))
            for i, ((s, name, nz, seed, b), out, err, dt) in enumerate(done):
                results.setdefault((s, nz, b, name), []).append((out, err, dt))
                if sink:
                    sink.write(json.dumps({"space": s, "searcher": name, "noise": nz, "seed": seed, "budget": b,
                                           "score": None if out is None else out.score,
                                           "bound": None if out is None or out.bound is None else
                                           [None if math.isinf(v) else v for v in out.bound],
                                           "cost": None if out is None else out.cost,
                                           "status": None if out is None else out.status, "error": err,
                                           "seconds": dt}) + "\n")
                    sink.flush()
                if (i + 1) % max(1, len(jobs) // 20) == 0:
                    print(f"  {i + 1} of {len(jobs)} runs ({time.time() - t0:.0f} s)", flush=True)
        print(f"({time.time() - t0:.0f} s)\n")
    print(f"{'space':<32} {'noise':>5} {'budget':>6} {'searcher':<9} {'median':>7} {'p10':>7} {'p90':>7} "
          f"{'spent':>6} {'bound':>6} {'1-sid':>5} {'held':>6} {'s/run':>6}")
    need: dict[tuple, dict] = {}
    worse = []
    for s in args.spaces:
        for nz in noises_of(s, args.noises):
            for b in args.budgets:
                med = {}
                for name in args.searchers:
                    rows = results.get((s, nz, b, name))
                    if not rows:
                        continue
                    ok = [o for o, e, _ in rows if o is not None]
                    errs = [e for _, e, _ in rows if e is not None]
                    sc_ = [o.score for o in ok]
                    bounded = [o for o in ok if o.bound is not None]
                    held = [o.held(opt[s][0]) for o in bounded]
                    med[name] = pct(sc_, 50)
                    print(f"{s:<32} {noise_label(s, nz):>5} {b:>6} {name:<9} {pct(sc_, 50):>7.4f} {pct(sc_, 10):>7.4f} "
                          f"{pct(sc_, 90):>7.4f} {int(np.median([o.cost for o in ok])) if ok else 0:>6} "
                          f"{len(bounded):>3}/{len(ok):<2} "
                          f"{sum(math.isinf(o.bound[1]) for o in bounded):>5} "
                          f"{(f'{100 * sum(held) / len(held):.0f}%' if held else '-'):>6} "
                          f"{np.mean([dt for _, _, dt in rows]):>6.1f}"
                          + (f"  {len(errs)} failed: {errs[0]}" if errs else ""))
                    for goal in (0.99, 0.98):
                        if pct(sc_, 10) >= goal:
                            d = need.setdefault((s, nz, name), {})
                            d[goal] = min(d.get(goal, b), b)
                peers = {k: v for k, v in med.items() if k in PEERS}
                if "assign" in med and peers and med["assign"] < max(peers.values()) - 1e-9:
                    best = max(peers, key=peers.get)
                    worse.append(f"{s}, {noise_label(s, nz)}, budget {b}: assign {med['assign']:.4f} < {best} "
                                 f"{peers[best]:.4f}")
    print("\nmeasurements needed to be within 1% / 2% of the optimum in 9 of 10 seeds (10th percentile score; "
          "'-': not within the budgets run)")
    for s in args.spaces:
        for nz in noises_of(s, args.noises):
            line = []
            for name in args.searchers:
                if any((s, nz, b, name) in results for b in args.budgets):
                    d = need.get((s, nz, name), {})
                    line.append(f"{name} {d.get(0.99, '-')}/{d.get(0.98, '-')}")
            if line:
                print(f"  {s}, noise {noise_label(s, nz)}: " + ", ".join(line))
    print()
    for s in args.spaces:
        rows = [o for (sp, nz, b, name), v in results.items() if sp == s and name == "assign"
                for o, _, _ in v if o is not None and o.bound is not None]
        if rows:
            held = sum(o.held(opt[s][0]) for o in rows)
            print(f"summary: {s}: assign's certified interval held the optimum in {held} of {len(rows)} runs "
                  f"({100 * held / len(rows):.1f}%; goal >= 90% a row)")
    print("summary: assign's flow by median " + ("at least as good as the best peer in every row" if not worse else
                                                  "worse than the best peer in: " + "; ".join(worse)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
