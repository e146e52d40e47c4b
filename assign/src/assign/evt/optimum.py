"""The optimum of placement means (mu*), from a noisy sample and the
repetitions the run planned: the figure `assign estimate`, `report`,
`baselines`, `best` and `iterate` lead with (assign/EVT.md).

Three cases, each named in `method`:

* every-placement: the sample holds every distinct placement of the space
  (the count of distinct assignments is known and every one was drawn):
  mu* is the largest placement mean, nothing is extrapolated.  Each
  placement's mean pools all measurements of all its draws; the interval
  is simultaneous over the placements (Bonferroni).
* deconvolution-pot: Peaks-Over-Threshold on the first values with the
  GPD on the placement means and the measured noise convolved in
  (deconvolution.py).
* paper-upb: the repetitions measured no noise at all (a noiseless model)
  and the sample does not hold every placement: the paper's UPB is the
  optimum of means.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from .errors import EstimateError
from .noise import Noise, estimate_noise
from .validate import check_options, check_size, check_values

MAX_TAIL = 250          # tail draws the deconvolution uses at most
TAIL_FRACTION = 0.05    # the paper's cap: at most 5% of the sample above the threshold
# the share of the tail's draws that are of a placement the tail holds more than once decides the
# deconvolution's model of the top (assign/EVT.md, "When the top is discrete"): below DISCRETE_TOP the tail is
# continuous (no atom at the end point); from SEEN_TOP on the sample has seen the top many times over (the
# atom); in between the atom's fit gives the estimate and the interval reaches as far as the continuous one's
DISCRETE_TOP = 0.02
SEEN_TOP = 0.25
# The reach of a fitted tail (assign/EVT.md, "An upper end beyond the reach"): an interval's upper end further
# above the highest measurement than REACH times the width of the tail the fit rests on (the highest measurement
# less the tail's threshold) is not a bound the data give but the fitted shape extrapolating where nothing was
# measured: a thin, nearly exponential tail whose exponential limit lies just outside the cut crosses it
# hundreds of times the optimum away (7,024,484 with an upper end of 487,494,655 on the T2's model at a
# million draws; 380 times it on a discrete space with such a tail, tests/test_optimum_reach.py).  Such an
# end is reported as none: the interval is one-sided, and says why.  Legitimate upper ends lie within a few
# widths (one on the T2 at 5000 draws; at most 4.8 in 60 runs of the known-end-point cases at 1-5% noise),
# the absurd ones thousands (3,900 on the T2 above, 5,000 on the 60,165-placement space for stateful at 1%).
REACH = 20.0

METHODS = {
    "every-placement": "every distinct placement was drawn: the largest placement mean, each mean pooling all "
                       "measurements of its draws, with a simultaneous (Bonferroni) interval",
    "deconvolution-pot": "Peaks-Over-Threshold on first values, the GPD on placement means convolved with the "
                         "measured normal noise (every measurement of a tail draw used), profile-likelihood "
                         "interval",
    "paper-upb": "the repetitions measured no noise: the paper's UPB of the single values",
    "search": "a search that converged certifies the top: from the measured lower bound (the best placement's "
              "simultaneous lower bound) to its final placement's upper bound times 1 + its resolution, never "
              "below the sample's unrefuted interval (evt/certificate.py)",
}


class RepeatArrays(Sequence):
    """(draw, value) pairs of a run's repetitions in order, held as two arrays (Store.repeat_arrays):
    50,000 of them at a million draws, grouped by draw without a tuple each."""

    def __init__(self, idx: np.ndarray, values: np.ndarray):
        self.idx, self.values = np.asarray(idx, dtype=np.int64), np.asarray(values, dtype=float)

    def __len__(self) -> int:
        return int(self.idx.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(zip(self.idx[i].tolist(), self.values[i].tolist()))
        return int(self.idx[i]), float(self.values[i])

    def __iter__(self):
        return zip(self.idx.tolist(), self.values.tolist())

    def groups(self) -> Groups:
        """draw -> its values in order, the draws in order of first appearance."""
        if not self.idx.size:
            return Groups({}, np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        order = np.argsort(self.idx, kind="stable")     # each draw's values stay in order
        ids = self.idx[order]
        starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
        counts = np.diff(np.append(starts, ids.size))
        by_first = np.argsort(order[starts])  # a stable sort's first of a run is the draw's first appearance
        # the values draw after draw in that order
        counts, starts, draws = counts[by_first], starts[by_first], ids[starts[by_first]]
        at = np.concatenate([[0], np.cumsum(counts)[:-1]])
        values = self.values[order][np.repeat(starts - at, counts) + np.arange(ids.size)]
        flat, bounds = values.tolist(), np.append(at, ids.size).tolist()
        return Groups({d: flat[bounds[g]:bounds[g + 1]] for g, d in enumerate(draws.tolist())}, values, at, counts)


class Groups(dict):
    """draw -> its further measurements in order (a dict), with those values also as one array, draw after
    draw in the dict's order: draw g's at flat[starts[g]:starts[g] + counts[g]] (the noise estimate and
    the draws' means take rows of it instead of converting 50,000 Python numbers)."""

    def __init__(self, groups: dict[int, list[float]], flat: np.ndarray, starts: np.ndarray, counts: np.ndarray):
        super().__init__(groups)
        self.flat, self.starts, self.counts = flat, starts, counts

    def rows(self, which: np.ndarray, size: int) -> np.ndarray:
        """The values of the draws at these positions (of the dict's order), all of `size` values: (len, size)."""
        return self.flat[self.starts[which][:, None] + np.arange(size)]


@dataclass
class RunSample:
    """What the estimate reads from a run: the draws' first values, the
    further measurements of some of them, and what is known of the space."""

    idx: np.ndarray                          # (n,) draw numbers
    first: np.ndarray                        # (n,) their first (iid) values
    repeats: Sequence[tuple[int, float]]     # (draw, value): noise repetitions and selection rounds
    space_size: int | None = None            # distinct placements of the space, where countable
    orbits: Callable[[], np.ndarray] | None = None  # (n,) distinct-placement id of each draw, computed on demand
    injected_cv: float | None = None         # the model's noise (known exactly)
    # distinct-placement ids of the draws at these positions (equal ids: the same placement), on demand;
    # None where the draws' placements are unknown
    placements: Callable[[np.ndarray], np.ndarray] | None = None
    # where idx and first hold only the run's top draws and its re-measured ones (run_sample.tail_sample):
    # how many draws the run holds, and the top of its first values for the paper's estimate (evt/top.py)
    size: int | None = None
    paper: Callable[[], Any] | None = None

    @property
    def n_draws(self) -> int:
        return int(self.idx.size) if self.size is None else int(self.size)

    def paper_values(self):
        """What the paper's estimate of the first values reads: the first values, or their top."""
        return self.first if self.paper is None else self.paper()

    def groups(self) -> dict[int, list[float]]:
        """draw -> its further measurements, in order; computed once for the repeats the sample holds (the
        estimate and the certificate both read it: 50,000 repetitions at a million draws)."""
        memo = self.__dict__.get("_groups")
        if memo is not None and memo[0] is self.repeats and memo[1] == len(self.repeats):
            return memo[2]
        if isinstance(self.repeats, RepeatArrays):
            out = self.repeats.groups()
            self.__dict__["_groups"] = (self.repeats, len(self.repeats), out)
            return out
        # by draw in order of first appearance, each draw's values in order: a plain loop (numpy's sort and
        # split, each draw's array made a list, took twice as long at 50,000 repetitions)
        out = {}
        for i, v in self.repeats:
            got = out.get(i)
            if got is None:
                out[int(i)] = [float(v)]
            else:
                got.append(float(v))
        self.__dict__["_groups"] = (self.repeats, len(self.repeats), out)
        return out


@dataclass
class OptimumMean:
    estimate: float | None
    ci_low: float | None
    ci_high: float | None                    # math.inf: one-sided
    noise: Noise
    method: str | None
    status: str                              # ok | unbounded | noise_unknown | noise_dominated | extrapolated | refuted
    confidence: float
    n: int
    repeats: int
    leading: dict | None = None              # the leading placement by its mean (not certified)
    messages: list[str] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def noise_sd(self) -> float | None:
        """The noise sd of one measurement at the optimum's level (packets/s)."""
        if not self.noise.known or self.estimate is None:
            return None
        return self.noise.cv * self.estimate

    def to_dict(self) -> dict[str, Any]:
        from .estimate import _json_safe

        d = {"estimate": self.estimate, "ci_low": self.ci_low,
             "ci_high": None if self.ci_high is None or math.isinf(self.ci_high) else self.ci_high,
             "noise_sd": self.noise_sd, "method": self.method,
             "one_sided": self.ci_high is not None and math.isinf(self.ci_high),
             "confidence": self.confidence, "status": self.status, "kind": "estimated",
             "noise": self.noise.to_dict(), "draws": self.n, "repeats": self.repeats,
             "leading": self.leading, "messages": self.messages, "diagnostics": self.diagnostics}
        return _json_safe(d)

    def gap_pct(self, mean: float) -> float | None:
        """100 (mu* - mean) / mu*, the gap of a placement's mean (estimated)."""
        if self.estimate is None or self.estimate == 0:
            return None
        return 100.0 * (self.estimate - mean) / self.estimate

    def format_text(self, value_label: str = "measured", unit: str = "packets/s") -> str:
        from .estimate import _fmt

        lines = []
        if self.estimate is None:
            lines.append(f"optimum of placement means (estimated): none ({self.status})")
        else:
            hi = "infinity (one-sided)" if self.ci_high is not None and math.isinf(self.ci_high) else _fmt(self.ci_high)
            lines.append(f"optimum of placement means (estimated): {_fmt(self.estimate)} {unit}, "
                         f"{100 * self.confidence:g}% interval [{_fmt(self.ci_low)}, {hi}]")
        sd = self.noise_sd
        lines.append("  measurement noise: " + self.noise.describe()
                     + (f"; sd {_fmt(sd)} {unit} at the optimum (estimated)" if sd is not None else ""))
        if self.method:
            lines.append(f"  method: {self.method}: {METHODS[self.method]}")
        lines += [f"  note: {m}" for m in self.messages]
        return "\n".join(lines)


def _draw_means(idx: np.ndarray, first: np.ndarray, groups: dict[int, list[float]] | Groups
                ) -> dict[int, tuple[float, int]]:
    """draw -> (mean of its first value and its repetitions, how many) of every re-measured draw the
    sample holds, in the order of groups: np.mean of each, taken over all draws of one count at once
    (the same numbers: numpy sums each row of a 2-D array as it sums a 1-D one)."""
    pos = {int(i): p for p, i in enumerate(idx.tolist())} if groups else {}
    by_count: dict[int, list[int]] = {}
    where: dict[int, list[int]] = {}  # the draws' positions in groups' order, by count
    for g, (i, vals) in enumerate(groups.items()):
        if vals and i in pos:
            by_count.setdefault(1 + len(vals), []).append(i)
            where.setdefault(1 + len(vals), []).append(g)
    means: dict[int, float] = {}
    for count, draws in by_count.items():
        if isinstance(groups, Groups):  # the same rows, from the values' array
            rows = np.concatenate([first[[pos[i] for i in draws]][:, None].astype(float),
                                   groups.rows(np.array(where[count]), count - 1)], axis=1)
        else:
            rows = np.array([[float(first[pos[i]]), *groups[i]] for i in draws],
                            dtype=float).reshape(len(draws), count)
        means.update(zip(draws, np.mean(rows, axis=1).tolist()))
    return {i: (means[i], 1 + len(groups[i])) for i in groups if i in means}


def _leading(means: dict[int, tuple[float, int]], cv: float) -> dict | None:
    """The draw with the highest mean among those measured more than once."""
    best = None
    for i, (m, count) in means.items():
        if best is None or m > best["mean"]:
            best = {"draw": i, "mean": m, "measurements": count, "sd_of_mean": cv * m / math.sqrt(count),
                    "kind": "measured"}
    return best


def optimum_of_means(sample: RunSample, confidence: float = 0.95) -> OptimumMean:
    """The estimate of mu*, its interval and the noise it rests on."""
    check_options(confidence, TAIL_FRACTION)
    # the top of a run was checked whole where it was read (run_sample.tail_sample)
    first = check_values(sample.first) if sample.size is None else np.asarray(sample.first, dtype=float)
    idx = np.asarray(sample.idx, dtype=np.int64)
    n = sample.n_draws
    if idx.size != first.size:
        raise EstimateError(f"{idx.size} draw numbers for {first.size} values")
    groups = sample.groups()
    noise = estimate_noise(groups, sample.injected_cv)
    reps = sum(len(v) for v in groups.values())
    base = dict(noise=noise, confidence=confidence, n=n, repeats=reps)
    if not noise.known:
        return OptimumMean(None, None, None, method=None, status="noise_unknown",
                           messages=["the noise is not measured yet: no placement holds two repetitions "
                                     "(`assign sample` plans them, --repeat-every; a run stored before they "
                                     "existed gets them when it is sampled again)"], **base)
    means = _draw_means(idx, first, groups)
    leading = _leading(means, noise.cv)
    if sample.space_size is not None and sample.orbits is not None and sample.space_size <= n:
        orbit = np.asarray(sample.orbits())
        if np.unique(orbit).size == sample.space_size:
            return _every_placement(idx, first, groups, orbit, noise, leading, base)
    if noise.cv == 0.0:
        return _noiseless(sample.paper_values(), float(first.max()), leading, base, confidence)
    out = _deconvolution(idx, first, groups, noise, leading, base, confidence, sample.placements, n,
                         sample.paper_values, means)
    if noise.skewed():
        out.messages.append(
            f"the measurement noise is skewed (skewness {noise.skew:.2f} over {noise.skew_values} repetitions; "
            f"normal noise gives 0 +- {math.sqrt(6.0 / noise.skew_values):.2f}): the interval assumes normal "
            f"noise, and with a long upper tail of single values its ends lie too high (a measured space on a "
            f"loaded machine: the lower end above every placement's mean; assign/EVT.md, \"Noise that is "
            f"not normal\"). Measure on a quieter machine, or longer windows")
        out.diagnostics["noise_skewed"] = True
    return out


def _noiseless(first, best: float, leading, base, confidence: float) -> OptimumMean:
    """No noise measured: a value is its placement's mean, so the paper's UPB is the optimum of
    means, its interval starting at the best value; where the paper's fit gives none (a discrete
    tail, ties at the best), the best value is still a placement's mean: a lower bound, with no
    upper one."""
    from .errors import EstimateError
    from .estimate import estimate

    try:
        est = estimate(first, confidence=confidence, cross_checks=False)
    except EstimateError as e:
        est, why = None, str(e)
    if est is not None and est.upb is not None:
        msgs = list(est.messages)
        high = math.inf if est.upb_ci_high is None else est.upb_ci_high  # None: the paper's one-sided interval
        # the paper's lower end lies above every value by construction (a GPD's end point exceeds each
        # observation); here the best value is a placement's mean, so mu* may be it: the interval starts there
        # (the paper's lower end left out an optimum that had been drawn, by 1e-5 of it: assign/EVT.md)
        low = min(est.upb_ci_low, best) if est.upb_ci_low is not None else best
        if est.status == "xi_boundary" and math.isfinite(high):
            # a shape on its boundary is what ties at the top of a discrete space give (a few placements
            # share the best values drawn): the fit then ends the tail at the best value drawn, and its
            # upper end missed a rarer, better placement in 8 of 20 runs (assign/EVT.md, "Validation")
            msgs.append(f"the interval is one-sided: with the shape on its boundary the fit's upper end "
                        f"({high:,.0f}) says nothing of placements better than those drawn")
            high = math.inf
        status, diag = est.status, {"paper": {"status": est.status, "ci_low": est.upb_ci_low}}
        reach = best + REACH * (best - est.threshold)
        if math.isfinite(high) and high > reach:
            status = _beyond_reach(high, reach, best, est.threshold, status, msgs, diag)
            high = math.inf
        return OptimumMean(est.upb, low, high, method="paper-upb", status=status, leading=leading,
                           messages=msgs, diagnostics=diag, **base)
    if est is not None:
        why = "; ".join(est.messages[:1]) or est.status
    return OptimumMean(best, best, math.inf, method="paper-upb", status="unbounded", leading=leading,
                       messages=[f"the paper's fit gives no bound ({why}): without noise the best value is a "
                                 f"placement's mean, so the optimum is at least it; nothing bounds it above"],
                       **base)


def _every_placement(idx, first, groups, orbit, noise: Noise, leading, base) -> OptimumMean:
    pos_of = {int(i): p for p, i in enumerate(idx.tolist())}
    sums = np.zeros(int(orbit.max()) + 1)
    counts = np.zeros_like(sums)
    np.add.at(sums, orbit, first)
    np.add.at(counts, orbit, 1)
    for i, vals in groups.items():
        p = pos_of.get(i)
        if p is not None:
            sums[orbit[p]] += sum(vals)
            counts[orbit[p]] += len(vals)
    seen = counts > 0
    mean = sums[seen] / counts[seen]
    se = noise.cv * mean / np.sqrt(counts[seen])
    k = int(seen.sum())
    conf = base["confidence"]
    z = NormalDist().inv_cdf(1.0 - (1.0 - conf) / (2.0 * k))
    j = int(np.argmax(mean))
    diag = {"placements": k, "z_simultaneous": z, "best_placement_measurements": int(counts[seen][j]),
            "measurements_per_placement_min": int(counts[seen].min())}
    slack = 1e-12 * abs(float(mean[j]))  # rounding of pooled sums: at zero noise the interval is the point
    return OptimumMean(float(mean[j]), float(np.max(mean - z * se)) - slack, float(np.max(mean + z * se)) + slack,
                       method="every-placement", status="ok", leading=leading, diagnostics=diag, **base)


def repeated_share(placements: Callable[[np.ndarray], np.ndarray] | None, tail: np.ndarray) -> float | None:
    """The share of the tail's draws whose placement the tail holds more than once (None: the draws'
    placements are unknown)."""
    if placements is None:
        return None
    _, inverse, counts = np.unique(np.asarray(placements(tail)), return_inverse=True, return_counts=True)
    return float(np.mean(counts[inverse] > 1))


def _deconvolution(idx, first, groups, noise: Noise, leading, base, confidence, placements=None,
                   n: int | None = None, paper_values=None, means=None) -> OptimumMean:
    """n: the draws of the run (first may hold only its top and its re-measured draws); paper_values:
    what the paper's estimate reads (first by default); means: _draw_means's."""
    from .deconvolution import U0_SDS, TailSet, fit

    n = first.size if n is None else n
    check_size(n, TAIL_FRACTION)
    k = min(MAX_TAIL, int(math.floor(TAIL_FRACTION * n)))
    order = np.argsort(first, kind="stable")
    t = float(first[order[-k - 1]])
    tail = order[-k:]
    sd1 = noise.cv * t
    m = np.array([1 + len(groups.get(int(idx[p]), ())) for p in tail], dtype=float)
    xbar = np.array([(first[p] + sum(groups.get(int(idx[p]), ()))) for p in tail]) / m
    # fitted on the scale of the tail (t at 1, u0 at 0): every number O(1), whatever the rates
    u0 = t - U0_SDS * sd1
    span = t - u0
    # the atom at tau models a discrete top. On a tail of placements drawn once each (the T2) it pinned the
    # end point to the best few drawn and the interval missed (T2 stateful at 1% noise: 75% coverage against
    # 100% without it); where the tail repeats a few placements but the sample has not seen most of the top
    # (60,165 placements: 6-16% repeat), the atom sat on a level below a rarer, better placement (58%
    # coverage) while the continuous fit overshot by 8% at 2% noise; where the top was seen many times over
    # (2,205 placements: 55-70%) the atom was right and the continuous fit 1.5% high (assign/EVT.md).
    # Unknown placements: continuous, as the paper's model.
    share = repeated_share(placements, tail)
    atom = share is not None and share >= DISCRETE_TOP
    data = TailSet((xbar - u0) / span, sd1 / np.sqrt(m) / span, 1.0 + 0.0 * t, sd1 / span, n, atom)
    # the highest of what was measured: every first value, and the mean of every re-measured draw
    means = _draw_means(idx, first, groups) if means is None else means
    top = max(float(first.max()), max((m for m, _ in means.values()), default=-math.inf))
    reach = top + REACH * (top - t)  # REACH: an upper end beyond it is none
    f = fit(data, confidence, reach=(reach - u0) / span)
    widened = None
    if atom and share < SEEN_TOP and f.tau is not None:
        c = fit(replace(data, atom=False), confidence, reach=(reach - u0) / span)
        c_low = c.ci_low if c.ci_low is not None else f.ci_low
        if c.ci_high > f.ci_high or c_low < f.ci_low:
            widened = (c_low, c.ci_high)
            if c.ci_high > f.ci_high:
                f.beyond_reach = c.beyond_reach
            f.ci_low, f.ci_high = min(f.ci_low, c_low), max(f.ci_high, c.ci_high)
            if math.isinf(f.ci_high) and not f.beyond_reach:
                f.status = "unbounded"
    back = lambda v: None if v is None else (v if math.isinf(v) else u0 + span * v)  # noqa: E731
    f.tau, f.ci_low, f.ci_high, f.u0 = back(f.tau), back(f.ci_low), back(f.ci_high), u0
    msgs = []
    if widened is not None:
        msgs.append(f"{100 * share:.0f}% of the tail's draws are of a placement it holds more than once: the top is "
                    f"discrete, but the sample has not seen most of it, so the end point may lie above the best "
                    f"level drawn; the interval reaches as far as a continuous tail's (the paper's model)")
    if f.status == "unbounded":
        msgs.append("one-sided interval: the data cannot rule out a tail without an end point; collect more samples"
                    if f.tau is not None else
                    "the likelihood grows without bound with the end point: no finite optimum of means is "
                    "estimated; collect more samples")
    diag = {"threshold": t, "tail_draws": k, "tail_draws_remeasured": int((m > 1).sum()), "u0": f.u0,
            "xi": f.xi, "alpha": f.alpha, "loglik": f.loglik, "loglik_exponential": f.loglik_exponential,
            "interval_cut_factor": f.cut_factor, "tail_repeated_share": share, "atom": atom,
            "continuous_interval": None if widened is None else [back(widened[0]), back(widened[1])]}
    status, ci_high = f.status, f.ci_high
    tau, ci_low = f.tau, f.ci_low
    whole = ci_low is not None and ci_low > top
    if leading is not None and tau is not None and tau > top and (whole or atom):
        # the fitted end point lies above every value measured (a first value or a re-measured mean) and
        # nothing measured supports it; what the data do show is the best re-measured placement, whose mean
        # becomes the estimate (a lower bound of mu*). Two cases (assign/EVT.md, "What the data show"):
        # - the whole interval lies above: the fitted tail extrapolates (a thin, nearly exponential tail on
        #   a discrete space, where the best placements are rare), which overshot the exact optimum by
        #   20-300% in simulation; the interval then starts at that placement's lower confidence bound,
        #   simultaneous over every re-measured placement;
        # - a discrete top (the atom is in the model): the atom found no level there, so the end point is
        #   the continuous part's reach; on the large space at 2% noise it put the estimate 10-38% above
        #   the exact optimum in 4 of 20 runs, each of which had drawn a placement within 0.2% of it. The
        #   interval stays the fit's.
        diag.update(fitted_end_point=f.tau, highest_measurement=top)
        if whole:
            lb, _ = _remeasured_bounds(means, noise.cv, confidence)
            diag["fitted_ci_low"] = f.ci_low
            msgs.append(f"the fitted end point ({f.tau:,.0f}) and its whole interval lie above everything "
                        f"measured (highest {top:,.0f}, a first value or a re-measured mean): the tail's shape "
                        f"extrapolates beyond the data, so the estimate is the best re-measured placement's mean, "
                        f"a lower bound of the optimum of means, and the interval runs from its lower "
                        f"confidence bound to the fit's upper end; more draws narrow it")
            ci_low, status = lb, "extrapolated"
        else:
            msgs.append(f"the top is discrete, and the fitted end point ({f.tau:,.0f}) lies above everything "
                        f"measured (highest {top:,.0f}): no level was seen there, so the estimate is the best "
                        f"re-measured placement's mean, a lower bound of the optimum of means; the interval is "
                        f"the fit's")
            status = "extrapolated" if status == "ok" else status
        tau = leading["mean"]
    if tau is not None and f.status == "ok" and status == "ok" and t > f.tau:
        # the tail set's threshold on first values lies above the fitted end of the means: the draws above
        # it were picked by their noise more than by their means, the top of the means is narrower than the
        # noise and its shape is not identified. There the fit sits at its shape bound and its interval fell
        # short of the end point in simulation (assign/EVT.md, "Validation"), so the upper end becomes the
        # paper's single-value UPB interval's: the end of the noisy values lies above every mean.
        paper_high = _paper_upper(first if paper_values is None else paper_values(), confidence)
        diag["threshold_above_end_sds"] = (t - f.tau) / sd1
        diag["paper_upb_ci_high"] = paper_high
        ci_high = max(f.ci_high, paper_high) if f.ci_high is not None else paper_high
        status = "noise_dominated"
        msgs.append(f"the noise (CV {100 * noise.cv:.2g}%) is wider than the top of the placement means: the "
                    f"threshold of the first values lies {(t - f.tau) / sd1:.2f} noise sds above the estimated end "
                    f"point, so the tail's shape is not identified; the interval's upper end is the paper's "
                    f"single-value UPB interval's (the end of the noisy values lies above every mean). Less noise "
                    f"(a longer window) narrows it")
    if tau is not None and ci_high is not None and (f.beyond_reach or math.isfinite(ci_high) and ci_high > reach):
        status = _beyond_reach(ci_high if math.isfinite(ci_high) else None, reach, top, t, status, msgs, diag)
        ci_high = math.inf
    if tau is not None and ci_high is not None and any(v for v in groups.values()):
        # mu* is at least every placement's mean: the interval reaches as high as the re-measured placements'
        # means may lie, and the estimate is not below what one of them surely has (the fit alone fell short
        # on discrete tails whose best placements are a few, at 1% noise: assign/EVT.md, "Validation")
        lb, ub = _remeasured_bounds(means, noise.cv, confidence)
        diag["remeasured_bounds"] = [lb, ub]
        if ub > ci_high:
            msgs.append(f"the fit's interval ended below where a re-measured placement's mean may lie "
                        f"({ub:,.0f}, simultaneous {100 * confidence:g}% bound): the interval is extended to it")
            ci_high = ub
        if ci_low is not None and ci_low > lb:
            # the fit's lower end claims placements better than any measured; on a discrete space whose best
            # placements were drawn that claim is the tail's shape extrapolating, and it put the whole
            # interval above the exact optimum in 5 of 20 runs (assign/EVT.md, "Validation"). What the
            # measurements show is the best re-measured placement's lower bound: the interval starts there
            diag["fitted_ci_low"] = ci_low
            msgs.append(f"the fit's lower end ({ci_low:,.0f}) lies above what the best re-measured placement "
                        f"surely has ({lb:,.0f}, simultaneous {100 * confidence:g}% bound): the interval starts "
                        f"there, as nothing measured shows a better placement")
            ci_low = lb
        if lb > tau:
            tau = lb
    return OptimumMean(tau, ci_low, ci_high, method="deconvolution-pot", status=status, leading=leading,
                       messages=msgs, diagnostics=diag, **base)


def _beyond_reach(high: float | None, reach: float, top: float, t: float, status: str, msgs: list[str],
                  diag: dict) -> str:
    """An upper end beyond REACH: said, kept in the diagnostics, the interval one-sided; the status
    `unbounded` where it was `ok` (an `extrapolated` or `noise_dominated` estimate keeps its own)."""
    from .estimate import _fmt

    where = "the fit's upper end" + (f" ({_fmt(high)})" if high is not None else "")
    msgs.append(f"{where} lies more than {REACH:g} times the width of the measured tail ({_fmt(top - t)}, from "
                f"its threshold to the highest measurement) above the highest measurement ({_fmt(top)}), beyond "
                f"{_fmt(reach)}: the fitted shape extrapolating where nothing was measured, not a bound the data "
                f"give; the interval is one-sided (assign/EVT.md, \"An upper end beyond the reach\")")
    diag.update(fitted_ci_high=high, reach=reach)
    return "unbounded" if status == "ok" else status


def _remeasured_bounds(draw_means: dict[int, tuple[float, int]], cv: float, confidence: float
                       ) -> tuple[float, float]:
    """The largest lower and upper confidence bounds of a re-measured placement's mean, simultaneous
    over all of them (Bonferroni): mu* is at least every placement's mean."""
    means = list(draw_means.values())
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / (2.0 * max(1, len(means))))
    return (max(m - z * cv * m / math.sqrt(k) for m, k in means),
            max(m + z * cv * m / math.sqrt(k) for m, k in means))


def _paper_upper(first, confidence: float) -> float:
    """The upper end of the paper's UPB interval on the single values (infinite where it gives none)."""
    from .errors import EstimateError
    from .estimate import estimate

    try:
        est = estimate(first, confidence=confidence, cross_checks=False)
    except EstimateError:
        return math.inf
    return math.inf if est.upb_ci_high is None else float(est.upb_ci_high)
