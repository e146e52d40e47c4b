"""`assign search --sampler S --budget K`: spend K measurements of a run on
one searcher (search/), stored with the run; the certified optimum of means
after it."""
from __future__ import annotations

import argparse
import json
import sys

from ..search import DEFAULT, SAMPLERS
from ._args import output_file, positive_int
from ._options import add_run_options
from ._runs import prepare_session
from ._save import save

DESCRIPTION = """\
Spend --budget measurements on placements chosen by a searcher, starting from
the run's leading placements (its draws, and what earlier searches found; a
run with no draws yet starts from random placements). Every measurement is
stored with the run as it comes; the same command again finds the finished
search, and an interrupted one resumes. Samplers:
  surrogate  (default) a local search that converges under noise, started from
             and guided by a surrogate fitted to every measurement
  local      the same local search, its neighbours in a random order
  model      the same local search, guided by the performance model
             (--model-params: a calibration of this machine)
  random     the paper's iid draws, one measurement each
  tpe, gp    Optuna's samplers over the placement's Lehmer code (gp needs
             PyTorch: pip install 'assign[gp]')
Afterwards the optimum of placement means is certified against every
placement measured (assign/EVT.md, "The certificate"): a search that
converged gives the interval an upper end; a placement found above the
interval refutes it. `assign best` searches (surrogate) before it chooses."""


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("search", help="spend a budget of measurements on a searcher, stored with the run",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sampler", choices=SAMPLERS, default=DEFAULT, help=f"the searcher (default: {DEFAULT})")
    p.add_argument("--budget", type=positive_int, required=True, metavar="K", help="measurements it may spend")
    p.add_argument("--json", type=output_file, metavar="FILE", help="write the search's result as JSON")
    add_run_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from ..evt import EstimateError
    from ..choice import describe_search
    from ..run_sample import describe_cost, measurement_cost, run_optimum
    from ..search.stored import search
    from ..units import value_unit
    from .best import model_predict

    session, created = prepare_session(args)
    run_ = session.run
    predict = model_predict(run_, args.model_params) if args.sampler == "model" else None
    print(f"{'new' if created else 'continuing'} {run_.label()} in {args.db}")
    try:
        res = search(session.store, run_, lambda: session.backend, args.sampler, args.budget, predict=predict,
                     quiet=args.quiet)
    except KeyboardInterrupt:
        print("interrupted: every measurement made is stored; run the same command again to resume the search",
              file=sys.stderr)
        return 130
    finally:
        if hasattr(session.backend, "close"):
            session.backend.close()
    print(describe_search(res))
    unit = value_unit(run_.workload, run_.params)
    out = dict(res)
    try:
        opt = run_optimum(session.store, run_)
        print(opt.format_text(run_.kind, unit))
        out["optimum_mean"] = opt.to_dict()
    except EstimateError as e:
        print(f"optimum of placement means: none yet ({e})")
        out["optimum_mean"] = None
    out["cost"] = measurement_cost(session.store, run_)
    print("cost: " + describe_cost(out["cost"]))
    if args.json:
        if not save(args.json, lambda f: json.dump(out, f, indent=2, default=float), "search result"):
            return 1
        print(f"written to {args.json}")
    return 0
