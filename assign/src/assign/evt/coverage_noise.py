"""Does the interval of the optimum of placement means cover the truth when
measurements are noisy?  Three checks (assign/EVT.md, "Validation"):

* space: a small synthetic machine whose every distinct placement the model
  evaluates without noise (the exact optimum), sampled by the real code path
  (Session, the model backend with --noise, the planned repetitions, the
  store) and estimated as `assign estimate` does;
* endpoint: values with a known end point (the noiseless coverage table's
  distributions) measured with relative noise, with the planned repetitions
  simulated as a run makes them;
* t2: the model of the T2 (a space too large to enumerate), the same draws
  with and without noise: does the noisy interval hold the noiseless estimate?

bench/optimum.py runs the full table; tests/test_optimum_noise.py a few seeds.
"""
from __future__ import annotations

import math
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .coverage import DISTRIBUTIONS
from .optimum import OptimumMean, RunSample, optimum_of_means


@dataclass
class Case:
    """One replication: what the estimate said and the truth it is scored on."""

    truth: float
    opt: OptimumMean | None
    noise: float
    error: str | None = None

    @property
    def covered(self) -> bool:
        o = self.opt
        if o is None or o.estimate is None or o.ci_low is None or o.ci_high is None:
            return False
        return o.ci_low <= self.truth <= o.ci_high

    @property
    def rel_error(self) -> float:
        o = self.opt
        if o is None or o.estimate is None:
            return math.inf
        return (o.estimate - self.truth) / self.truth


@dataclass
class Summary:
    label: str
    noise: float
    cases: list[Case] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        return sum(c.covered for c in self.cases) / max(1, len(self.cases))

    @property
    def median_abs_error(self) -> float:
        return float(np.median([abs(c.rel_error) for c in self.cases])) if self.cases else math.nan

    @property
    def median_error(self) -> float:
        return float(np.median([c.rel_error for c in self.cases])) if self.cases else math.nan

    @property
    def one_sided(self) -> float:
        """The share of runs whose interval has no upper end."""
        return sum(c.opt is not None and c.opt.ci_high is not None and math.isinf(c.opt.ci_high)
                   for c in self.cases) / max(1, len(self.cases))

    @property
    def median_width(self) -> float:
        """Median width relative to the truth, a one-sided interval counted as infinitely wide."""
        w = [(c.opt.ci_high - c.opt.ci_low) / c.truth for c in self.cases
             if c.opt is not None and c.opt.ci_low is not None and c.opt.ci_high is not None]
        return float(np.median(w)) if w else math.nan

    @property
    def error_in_sds(self) -> float:
        """Median |error| in noise sds (inf at zero noise unless the error is zero)."""
        if self.noise == 0:
            return 0.0 if self.median_abs_error == 0 else math.inf
        return self.median_abs_error / self.noise

    def methods(self) -> dict[str, int]:
        return dict(Counter((c.opt.method if c.opt is not None else f"error: {c.error}") for c in self.cases))

    def row(self) -> str:
        sds = "-" if self.noise == 0 else f"{self.error_in_sds:.2f}"
        cost = self.extra.get("cost_pct")
        return (f"| {self.label} | {100 * self.noise:g}% | {len(self.cases)} | {100 * self.coverage:.1f}% | "
                f"{100 * self.median_error:+.3f}% | {100 * self.median_abs_error:.3f}% | {sds} | "
                + _width(self.median_width)
                + f" | {100 * self.one_sided:.0f}% | "
                + ("-" if cost is None else f"{cost:.1f}%") + " | "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.methods().items())) + " |")


def _width(w: float) -> str:
    return "-" if math.isnan(w) else f"{100 * w:.2f}%" if math.isfinite(w) else "one-sided"


HEADER = ("| case | noise | runs | coverage of the 95% interval | median error | median abs. error | "
          "median abs. error in noise sds | median width | one-sided | repetitions' share | method |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")


@lru_cache(maxsize=None)
def exact_optimum(topology: str, workload: str, instances: int) -> float:
    """The model's optimum over every distinct placement, without noise."""
    from ..backends.model import ModelBackend
    from ..enumeration import representatives
    from ..topology import get_machine
    from ..workloads import Workload

    topo = get_machine(None, topology)
    w = Workload(workload, instances)
    be = ModelBackend(topo, w, noise_rel_sd=0.0)
    reps, _ = representatives(topo, w.n_tasks)
    best = -math.inf
    for i in range(0, len(reps), 20000):
        mu, _ = be.predict(np.array(reps[i:i + 20000]))
        best = max(best, float(mu.max()))
    return best


def sampled_run(topology: str | None, machine: str | None, workload: str, instances: int, noise: float, seed: int,
                n: int, repeat_every: int = 20, db_dir: str | None = None):
    """(RunSample, cost share in percent) of a model run made by the real code path."""
    from ..backends.model import ModelBackend, load_params
    from ..run_sample import measurement_cost, run_sample
    from ..session import Session
    from ..store import Store
    from ..topology import get_machine
    from ..workloads import Workload

    topo = get_machine(machine, topology)
    w = Workload(workload, instances)
    be = ModelBackend(topo, w, load_params(w.name), noise, seed)
    with tempfile.TemporaryDirectory(dir=db_dir) as d:
        with Store(os.path.join(d, "run.db")) as store:
            session, _ = Session.open(store, topo, w, be, seed, False)
            session.repeat_every = repeat_every
            session.sample_until(n, show_progress=False)
            sample = run_sample(store, session.run)
            if sample.orbits is not None:  # computed while the store is open
                orbits = sample.orbits()
                sample.orbits = lambda: orbits
            if sample.placements is not None:  # the tail's, likewise (the tail is among the top first values)
                top = np.argsort(sample.first, kind="stable")[-600:]
                ids = dict(zip(top.tolist(), sample.placements(top).tolist()))
                sample.placements = lambda pos: np.array([ids[int(p)] for p in pos], dtype=np.int64)
            cost = measurement_cost(store, session.run)["share_pct"]
    return sample, cost


def space_case(topology: str, workload: str, instances: int, noise: float, seed: int, n: int = 5000,
               confidence: float = 0.95) -> tuple[Case, float]:
    truth = exact_optimum(topology, workload, instances)
    sample, cost = sampled_run(topology, None, workload, instances, noise, seed, n)
    try:
        return Case(truth, optimum_of_means(sample, confidence), noise), cost
    except ValueError as e:
        return Case(truth, None, noise, str(e)), cost


def endpoint_sample(dist: str, noise: float, seed: int, n: int = 5000, repeat_every: int = 20
                    ) -> tuple[RunSample, np.ndarray]:
    """Means with end point 1 from one of the noiseless table's distributions,
    measured with relative noise, the planned repetitions made as a run makes
    them (per batch of 4096 draws, as the model backend's); (sample, means)."""
    from ..repeats import Plan

    frozen, _, _ = DISTRIBUTIONS[dist]
    rng = np.random.default_rng([seed, n, sum(map(ord, dist)), int(noise * 1e6)])
    mu = frozen.rvs(n, random_state=rng)
    first = mu * (1.0 + noise * rng.standard_normal(n))
    plan = Plan([], [])
    reps: list[tuple[int, float]] = []
    for lo in range(0, n, 4096):
        hi = min(n, lo + 4096)
        plan.add_draws(range(lo, hi), first[lo:hi])
        for i in plan.next(hi // repeat_every - plan.attempted):
            v = float(mu[i] * (1.0 + noise * rng.standard_normal()))
            plan.add_repeat(i, v)
            reps.append((i, v))
    # means from a continuous distribution: every draw is a placement of its own
    return RunSample(np.arange(n), first, reps, placements=lambda pos: np.asarray(pos)), mu


def endpoint_case(dist: str, noise: float, seed: int, n: int = 5000, repeat_every: int = 20,
                  confidence: float = 0.95) -> Case:
    sample, _ = endpoint_sample(dist, noise, seed, n, repeat_every)
    end = DISTRIBUTIONS[dist][1]
    try:
        return Case(end, optimum_of_means(sample, confidence), noise)
    except ValueError as e:
        return Case(end, None, noise, str(e))


def t2_case(workload: str, instances: int, noise: float, seed: int, n: int = 5000,
            confidence: float = 0.95) -> tuple[Case, float]:
    """The T2: the noiseless estimate of the same draws is the truth the noisy interval is scored on."""
    clean, _ = sampled_run(None, "ultrasparc-t2", workload, instances, 0.0, seed, n)
    truth = optimum_of_means(clean, confidence).estimate
    sample, cost = sampled_run(None, "ultrasparc-t2", workload, instances, noise, seed, n)
    try:
        return Case(truth, optimum_of_means(sample, confidence), noise), cost
    except ValueError as e:
        return Case(truth, None, noise, str(e)), cost
