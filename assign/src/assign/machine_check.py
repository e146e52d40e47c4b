"""Are a cluster's workers identical machines?  The reference rule, and the
per-worker summary the sample and the report print.

Every worker measures the run's reference placement (the run's draw 0, a
function of the seed) REFERENCES_AT_START times before its first draw and
once every K draws after (`sample --reference-every K`).  The client judges
each worker against the others from those reference values only (the
sample's values are random placements, their spread is the population's,
not the machine's):

    M_w   median of worker w's references
    M_o   median of the medians of the other unflagged workers that hold
          MIN_REFERENCES references (one vote a worker: pooled values would
          let the worker with the most references set it)
    S     the noise: 1.4826 x the median absolute deviation of each
          worker's references from that worker's own median, pooled over
          the workers being compared (a normal sd when the noise is
          normal; a level shift between workers does not inflate it, so
          w's own spread counts too and S rests on twice as many values)
    w differs when |M_w - M_o| > max(NOISE_FACTOR * S, FLOOR * M_o)

judged only once w and at least one other worker hold MIN_REFERENCES values each
(REFERENCES_AT_START = MIN_REFERENCES: a worker is judged as soon as its
first result is in).

Why it does not flag identical workers by chance: with normal noise of sd
s and 10 references on each side, M_w - M_o has an sd of about
1.2533 * s * sqrt(1/10 + 1/10) = 0.56 s, so NOISE_FACTOR * S = 6 s is 11
of those sds; a false alarm needs S far below s, which a MAD of 20 or more
values rarely is, and later judgements have more values on both sides.
Simulated (`assign/research/machine-check-fp.py --trials 10000`, floor set to 0 so
that the noise factor alone decides, 10 references a worker, M_o the median
of the others' medians): 0 false alarms in 10^4 judgements each of 2, 3 and
4 identical workers with normal and with Student-t(3) noise; one worker of 3
or 4 off by 10 noise sds is found in 98.5-100% of judgements, off by 6 sds
in 75% (normal) and 46% (t3) (at 10 references; more references, more
found).  The
floor covers noise so small that S is (near) zero, e.g. the model's
default noise (0.2% sd, clipped at 3 sd): two medians of clipped noise are
never 1% apart.  The price: a machine less than FLOOR (1%) or 6 noise sds
off is not caught; the per-worker table and the Anderson-Darling test on
the values show smaller differences without acting on them.

Which worker is off needs a majority: the worker that differs most (in
units of its bound) is flagged when at least two others remain to compare
with; then the rest are judged again without it.  When only one other
remains, the two disagree and nothing says which is right: both are
flagged and the sample stops (run with three or more workers).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

REFERENCES_AT_START = 10   # a worker's first references, before its first draw: judged at once
DEFAULT_REFERENCE_EVERY = 50  # K: then one every K draws of that worker (2% more measurements)
MIN_REFERENCES = 10        # references of a worker before it is judged or votes
NOISE_FACTOR = 6.0         # differs: medians more than this many noise sds apart ...
FLOOR = 0.01               # ... and more than this fraction of the others' median
MAD_TO_SD = 1.4826         # the MAD of a normal sample times this estimates its sd


@dataclass(frozen=True)
class Verdict:
    """A worker judged to differ from the others."""

    worker: str
    median: float          # of its references
    others_median: float   # median of the other workers' medians
    bound: float           # max(NOISE_FACTOR * noise sd, FLOOR * others_median)
    noise_sd: float        # S, from the others' references
    n: int                 # its references
    n_others: int
    ambiguous: bool        # only one other worker: the two disagree, which one is off is unknown

    def reason(self) -> str:
        off = 100.0 * (self.median - self.others_median) / self.others_median if self.others_median else float("nan")
        text = (f"reference median {self.median:,.1f} ({self.n} measurements) is {off:+.2f}% from the other "
                f"workers' {self.others_median:,.1f} ({self.n_others}); allowed: +-{self.bound:,.1f} "
                f"(max of {NOISE_FACTOR:g} x noise sd {self.noise_sd:,.1f} and {100 * FLOOR:g}%)")
        if self.ambiguous:
            text += "; with only two workers left, which machine differs cannot be told"
        return text


def _noise_sd(groups: Sequence[np.ndarray]) -> float:
    """Pooled within-worker scaled MAD of the groups."""
    dev = np.concatenate([np.abs(g - np.median(g)) for g in groups])
    return MAD_TO_SD * float(np.median(dev))


def _judge(w: str, refs: Mapping[str, np.ndarray]) -> tuple[float, Verdict] | None:
    """(excess: |M_w - M_o| / bound, the verdict if it differs) of worker w against the rest of refs.
    M_o is the median of the other workers' medians, one vote a worker: pooled values would
    let the worker with the most references (an odd one that started first, say) set M_o,
    and then the identical workers would be the ones that look off."""
    others = [v for k, v in refs.items() if k != w and len(v) >= MIN_REFERENCES]
    if len(refs[w]) < MIN_REFERENCES or not others:
        return None
    m_w, m_o = float(np.median(refs[w])), float(np.median([np.median(v) for v in others]))
    s = _noise_sd(list(refs.values()))
    bound = max(NOISE_FACTOR * s, FLOOR * abs(m_o))
    excess = abs(m_w - m_o) / bound if bound > 0 else (np.inf if m_w != m_o else 0.0)
    return excess, Verdict(w, m_w, m_o, bound, s, len(refs[w]), sum(len(v) for v in others),
                           len(others) == 1)


def differing_workers(references: Mapping[str, Sequence[float]], flagged: set[str] = frozenset(),
                      more_coming: Callable[[int], bool] = lambda judged: False) -> list[Verdict]:
    """Workers whose references differ from the others' (the rule in this module's
    docstring), given every worker's reference values and those already flagged
    (left out of the comparison).  An ambiguous pair comes back as two verdicts,
    unless more_coming(workers judged) says a third worker will report (the
    cluster has more unflagged workers than those): then it waits for it."""
    refs = {w: np.asarray(v, dtype=float) for w, v in references.items() if w not in flagged and len(v)}
    out: list[Verdict] = []
    while len(refs) >= 2:
        judged = [j for j in (_judge(w, refs) for w in refs) if j is not None]
        worst = max(judged, key=lambda j: j[0], default=None)
        if worst is None or worst[0] <= 1.0:
            break
        v = worst[1]
        if v.ambiguous:
            if more_coming(sum(len(r) >= MIN_REFERENCES for r in refs.values())):
                break
            other = next(k for k in refs if k != v.worker)
            back = _judge(other, refs)
            out += [v, back[1] if back is not None else v]
            break
        out.append(v)
        del refs[v.worker]
    return out


@dataclass(frozen=True)
class WorkerSummary:
    address: str
    name: str
    flagged: str | None
    values: tuple[int, float, float]      # count, median, IQR of its values
    references: tuple[int, float, float]  # the same of its references


def _cmi(v: Sequence[float]) -> tuple[int, float, float]:
    if not len(v):
        return 0, float("nan"), float("nan")
    q1, med, q3 = np.percentile(np.asarray(v, dtype=float), [25, 50, 75])
    return len(v), float(med), float(q3 - q1)


def summarize(workers: Sequence[tuple[str, str, str, str | None]], values: Mapping[str, Sequence[float]],
              references: Mapping[str, Sequence[float]]) -> list[WorkerSummary]:
    """Per worker (store.workers rows): count, median and IQR of its values and of its references."""
    return [WorkerSummary(a, n, f, _cmi(values.get(a, ())), _cmi(references.get(a, ()))) for a, n, _, f in workers]


@dataclass(frozen=True)
class OnePopulation:
    """scipy.stats.anderson_ksamp on the workers' values."""

    statistic: float
    pvalue: float
    workers: int
    note: str  # where scipy's table bounds the p-value


def anderson_darling(values: Mapping[str, Sequence[float]]) -> OnePopulation | None:
    """k-sample Anderson-Darling test (midrank) of whether the workers with values
    are one population; None with fewer than two such workers."""
    import warnings

    from scipy.stats import anderson_ksamp

    samples = [np.asarray(v, dtype=float) for v in values.values() if len(v)]
    if len(samples) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the p-value bounds of scipy's table: said in the note instead
        r = anderson_ksamp(samples, variant="midrank")
    p = float(r.pvalue)
    note = ""
    if p <= 0.001:
        note = " (scipy's table floor: p <= 0.001)"
    elif p >= 0.25:
        note = " (scipy's table cap: p >= 0.25)"
    return OnePopulation(float(r.statistic), p, len(samples), note)


def format_table(rows: Sequence[WorkerSummary], test: OnePopulation | None, kind: str) -> list[str]:
    """Text lines: the per-worker table, then the test on the values (labelled `kind`)."""
    lines = [f"per worker ({kind} values; references: the run's draw 0 measured by each worker):",
             f"  {'worker':<28} {'values':>8} {'median':>14} {'IQR':>12}   {'refs':>5} {'median':>14} "
             f"{'IQR':>12}  flag"]
    for r in rows:
        name = r.name if r.name == r.address else f"{r.name} ({r.address})"
        lines.append(f"  {name:<28} {r.values[0]:>8} {r.values[1]:>14,.1f} {r.values[2]:>12,.1f}   "
                     f"{r.references[0]:>5} {r.references[1]:>14,.1f} {r.references[2]:>12,.1f}  "
                     f"{'FLAGGED: ' + r.flagged if r.flagged else 'ok'}")
    lines.append(_test_line(test, kind, "workers"))
    return lines


def _test_line(test: OnePopulation | None, kind: str, which: str) -> str:
    if test is None:
        return f"  Anderson-Darling k-sample test ({which}): not run (values from fewer than two workers)"
    return (f"  Anderson-Darling k-sample test on the {kind} values of {test.workers} {which} "
            f"(are they one population?): statistic {test.statistic:.3f}, p-value {test.pvalue:.3g}"
            f"{test.note}; a small p-value says the workers' values differ")


def ground_lines(grounds: Mapping[str, dict | None], names: Mapping[str, str]) -> list[str]:
    """What the workers measured on, as each reported when the run first saw it: one
    line when they agree on all but their hosts, boots and the app's path; else what
    differs from the first worker's."""
    from .ground import comparable, differences, summary

    def who(a: str) -> str:
        return a if names.get(a, a) == a else f"{names[a]} ({a})"

    known = {a: g for a, g in grounds.items() if g is not None}
    missing = [who(a) for a, g in grounds.items() if g is None]
    lines = []
    if known:
        first, g0 = next(iter(known.items()))
        other = {a: differences(comparable(g0), comparable(g)) for a, g in known.items()
                 if comparable(g) != comparable(g0)}
        if not other:
            hosts = sorted({str(g.get("host")) for g in known.values()})
            app = f", app sha256 {g0['app_sha256'][:12]}" if g0.get("app_sha256") else ""
            lines.append(f"  ground: the {len(known)} worker(s) alike (cpu {g0.get('cpu')}, kernel "
                         f"{g0.get('kernel')}{app}); host(s) " + ", ".join(hosts))
        else:
            lines.append(f"  grounds differ: worker {who(first)} on {summary(g0)}; against it:")
            lines += [f"    worker {who(a)}: " + "; ".join(d) for a, d in other.items()]
    if missing:
        lines.append("  ground not recorded (first seen by an assign that did not record it): "
                     + ", ".join(missing))
    return lines


def run_lines(store, run) -> list[str]:
    """The per-worker table, the workers' grounds and the test of a stored cluster run
    (none for a run measured in one process); with flagged workers, the test again on
    those kept."""
    workers = store.workers(run.id)
    if not workers:
        return []
    values = store.values_by_worker(run.id)
    lines = format_table(summarize(workers, values, store.references(run.id)), anderson_darling(values), run.kind)
    lines[-1:-1] = ground_lines(store.worker_grounds(run.id), {a: n for a, n, _, _ in workers})
    flagged = {a for a, _, _, f in workers if f}
    if flagged:
        kept = {a: v for a, v in values.items() if a not in flagged}
        lines.append(_test_line(anderson_darling(kept), run.kind, "unflagged workers"))
    return lines
