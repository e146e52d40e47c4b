"""The EVT estimate of the optimum: Peaks-Over-Threshold with a GPD fitted by
maximum likelihood, the upper performance bound UPB = u - sigma/xi and its
profile-likelihood (Wilks) interval, with the diagnostics that say whether to
believe it. Method and choices: assign/EVT.md."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .threshold import GOF_ALPHA, MIN_EXCEEDANCES, candidate_thresholds, choose, evaluate, mean_excess
from .endpoint_np import fraga_alves_neves
from .errors import EstimateError
from .gof import ad_critical
from .profile import GpdFit, loglik_exponential
from .top import SampleTop
from .validate import check_options, check_size, check_threshold, check_values

STATUSES = ("ok", "unbounded", "xi_boundary", "poor_fit")
# A neighbouring threshold whose UPB moves by more than this is reported.
NEIGHBOUR_SHIFT_WARN_PCT = 1.0


@dataclass
class Estimate:
    n: int
    best: float
    threshold: float
    exceedances: int
    xi: float
    sigma: float
    upb: float | None
    upb_ci_low: float | None
    upb_ci_high: float | None      # math.inf: one-sided interval
    gap_pct: float | None          # 100 * (UPB - best) / UPB
    gap_upper_pct: float | None    # the same against the interval's upper end (None if infinite)
    confidence: float
    status: str
    messages: list[str]
    diagnostics: dict[str, Any]
    fit: GpdFit | None = field(default=None, repr=False, compare=False)

    @property
    def one_sided(self) -> bool:
        return self.upb_ci_high is not None and math.isinf(self.upb_ci_high)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: non-finite numbers become None; `one_sided` says when the
        upper end of the interval is infinite."""
        d = {k: getattr(self, k) for k in (
            "n", "best", "threshold", "exceedances", "xi", "sigma", "upb", "upb_ci_low",
            "upb_ci_high", "gap_pct", "gap_upper_pct", "confidence", "status", "messages")}
        d["one_sided"] = self.one_sided
        d["kind"] = "estimated"
        d["diagnostics"] = self.diagnostics
        return _json_safe(d)

    def format_text(self, value_label: str = "measured") -> str:
        """Human-readable report. value_label qualifies the data ("measured" or
        "modelled"); every fitted figure is labelled "estimated"."""
        g = _fmt
        dg = self.diagnostics
        rows: list[tuple[str, str]] = [
            (f"sample size n ({value_label})", str(self.n)),
            (f"best observed ({value_label})", g(self.best)),
            ("threshold u", f"{g(self.threshold)} ({self.exceedances} exceedances, "
                            f"{100 * self.exceedances / self.n:.1f}% of n; {dg['threshold_rule']})"),
            ("GPD shape xi (estimated)", f"{self.xi:.4g}"),
            ("GPD scale sigma (estimated)", g(self.sigma)),
            ("UPB, optimum (estimated)",
             g(self.upb) if self.upb is not None else "none: the fitted tail has no finite end point"),
        ]
        if self.upb_ci_low is not None or self.upb_ci_high is not None:
            hi = "infinity (one-sided)" if self.one_sided else g(self.upb_ci_high)
            lo = g(self.upb_ci_low) if self.upb_ci_low is not None else "none"
            rows.append((f"{100 * self.confidence:g}% interval of UPB (estimated)", f"[{lo}, {hi}]"))
        if self.gap_pct is not None:
            up = (f" (to the interval's upper end: {self.gap_upper_pct:.3g}%)"
                  if self.gap_upper_pct is not None else "")
            rows.append(("gap best -> UPB (estimated)", f"{self.gap_pct:.3g}%{up}"))
        rows.append(("status", self.status))
        p = dg["ad_pvalue"]
        ptxt = "p > 0.5" if p >= 0.5 else ("p < 0.01" if p <= 0.01 else f"p ~ {p:.2g}")
        rows.append(("goodness of fit", f"Anderson-Darling A2 = {dg['ad_stat']:.3g}, {ptxt} "
                                        f"(5% critical value {dg['ad_critical_5pct']:.3g})"))
        for c in dg.get("neighbours", []):
            v = g(c["upb"]) if c["upb"] is not None else "none"
            rows.append(("neighbouring threshold", f"u = {g(c['threshold'])} ({c['exceedances']} exceedances): "
                                                   f"UPB (estimated) {v}"))
        fan = dg.get("endpoint_fraga_alves_neves")
        if fan is not None:
            rows.append(("Fraga Alves-Neves end point (estimated)", g(fan)))
        sc = dg.get("scipy_genpareto")
        if sc is not None:
            rows.append(("cross-check", sc["note"]))
        rows += [("note", m) for m in self.messages]
        width = max(len(label) for label, _ in rows) + 1
        return "\n".join(["EVT estimate of the optimum (Peaks-Over-Threshold, GPD by maximum likelihood)"]
                         + [f"  {label + ':':<{width}} {value}" for label, value in rows])


def _fmt(v: float | None) -> str:
    """Throughput-sized numbers with thousands separators, others 6 significant digits."""
    if v is None:
        return "none"
    if math.isinf(v):
        return "infinity"
    if 1e4 <= abs(v) < 1e15:
        return f"{v:,.0f}"
    return f"{v:.6g}"


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def mean_excess_linearity(sorted_values: np.ndarray, u: float) -> float | None:
    """R^2 of a straight line through the mean-excess plot above u (the GPD's
    mean excess is linear); the last 5 points are left out as too noisy."""
    us = sorted_values[sorted_values > u][:-5]
    us = np.concatenate([[u], us])
    if us.size < 5 or np.ptp(us) == 0:
        return None
    e = mean_excess(sorted_values, us)
    c = np.corrcoef(us, e)[0, 1]
    return float(c * c) if np.isfinite(c) else None


def estimate(values: Sequence[float] | SampleTop, threshold: float | None = None, confidence: float = 0.95,
             max_tail_fraction: float = 0.05, *, cross_checks: bool = True) -> Estimate:
    """EVT estimate of the upper end point of the distribution of `values`.

    values: the sample, or its top (top.py: the same estimate from the values it reads).
    threshold: None chooses u automatically (threshold.py); a number overrides.
    cross_checks: False skips the scipy refit (the slowest part, diagnostics only).
    Raises EstimateError for input it cannot work with.
    """
    check_options(confidence, max_tail_fraction)
    if isinstance(values, SampleTop):
        if not values.covers(max_tail_fraction, threshold):
            raise ValueError(f"the top of the sample holds {values.values.size} of its {values.n} values: "
                             f"fewer than the estimate reads")
        x, n = np.asarray(values.values, dtype=float), values.n
    else:
        x = np.sort(check_values(values))
        n = x.size
    messages: list[str] = []
    diagnostics: dict[str, Any] = {}

    if threshold is None:
        check_size(n, max_tail_fraction)
        candidates = candidate_thresholds(x, max_tail_fraction, n)
        if not candidates:
            raise EstimateError(
                f"too few distinct values at the top of the sample: no threshold under the "
                f"{max_tail_fraction:.0%} cap leaves {MIN_EXCEEDANCES} values above it")
        chosen, done = choose(x, candidates, confidence)
        cand = done[chosen]
        assert cand is not None
        rule = (f"automatic: lowest of {len(candidates)} candidate thresholds under the "
                f"{max_tail_fraction:.0%} cap not rejected by Anderson-Darling at {GOF_ALPHA:g}")
        if not cand.accepted:
            rule = "automatic: every candidate rejected by Anderson-Darling; least rejected one"
        neighbours = [done[j] for j in (chosen - 1, chosen + 1) if 0 <= j < len(done) and done[j] is not None]
        diagnostics["candidates"] = [c.to_dict() for c in done if c is not None]
    else:
        check_threshold(x, threshold, n)
        cand = evaluate(x, float(threshold), confidence)
        rule = "given"
        k = cand.fit.ex.k
        if k > max_tail_fraction * n:
            messages.append(f"the given threshold leaves {k / n:.1%} of the sample above it, more than "
                            f"the {max_tail_fraction:.0%} cap: the fit may be biased towards the body")
        neighbours = []
        diagnostics["candidates"] = [cand.to_dict()]

    f = cand.fit
    ex = f.ex
    best = float(x[-1])
    ties_at_best = int(np.count_nonzero(x == best))
    diagnostics["ties_at_best"] = ties_at_best
    if ties_at_best > 1:
        messages.append(
            f"the best value occurs {ties_at_best} times: the population may be discrete and the sample may "
            "already hold the optimum, which the continuous GPD tail cannot know")
    diagnostics.update(
        threshold_rule=rule,
        tail_fraction=ex.k / n,
        ad_stat=cand.ad_stat,
        ad_pvalue=cand.ad_p,
        ad_critical_5pct=ad_critical(f.xi, ex.k),
        loglik=f.loglik,
        loglik_exponential=loglik_exponential(ex) - ex.k * math.log(ex.scale),
        profile_cut=f.cut_data_scale,
        mean_excess_r2=mean_excess_linearity(x, cand.threshold),
        fit=dict(xi=f.xi, sigma=f.sigma, upb=f.upb, upb_ci_low=f.upb_ci_low,
                 upb_ci_high=f.upb_ci_high, on_boundary=f.on_boundary),
        interval_cut_factor=f.cut_factor,
        wilks_interval=list(f.wilks_ci),
        neighbours=[c.to_dict() for c in neighbours],
    )
    k_fan = min(ex.k, math.isqrt(n))  # its bias for xi < 0 grows like k/n
    diagnostics["endpoint_fraga_alves_neves"] = fraga_alves_neves(x, k_fan)
    diagnostics["endpoint_fraga_alves_neves_k"] = k_fan
    if cross_checks:
        from .crosscheck import cross_check  # scipy.stats: imported only when asked for

        diagnostics["scipy_genpareto"] = cross_check(f).to_dict()

    upb, low, high = f.upb, f.upb_ci_low, f.upb_ci_high
    if not cand.accepted:
        status = "poor_fit"
        messages.append(
            f"the GPD does not fit the exceedances (Anderson-Darling p ~ {cand.ad_p:.2g} < {GOF_ALPHA:g}): "
            "no upper bound is reported; look at the mean-excess and quantile plots, or give a threshold")
        upb = low = high = None
    elif f.upb is None:
        status = "unbounded"
        messages.append(
            f"the estimated shape xi = {f.xi:.3g} >= 0: the fitted tail has no finite upper bound. "
            "Either the optimum is far from the sample, or the sample is too small: collect more samples")
    elif f.one_sided:
        status = "unbounded"
        messages.append(
            "one-sided interval: the data cannot rule out an unbounded tail (the exponential limit lies "
            f"within the {confidence:.0%} cut of the profile likelihood); collect more samples")
    elif f.on_boundary:
        status = "xi_boundary"
        messages.append(
            "the shape sits on the xi = -1 boundary: the fit puts the end point at the best observed "
            "value; the estimate of the optimum may be biased low")
    else:
        status = "ok"

    if upb is not None:
        support_ok = upb >= best and (low is None or low >= best)
        diagnostics["support_ok"] = bool(support_ok)
        if not support_ok:  # cannot happen by construction; say so loudly if it does
            messages.append(f"internal check failed: UPB {upb!r} is below the best value {best!r}")
            status = "poor_fit"
    gap = 100.0 * (upb - best) / upb if upb is not None and upb != 0 else None
    # The gap to the upper end of the interval: what a stopping rule can trust.
    gap_upper = (100.0 * (high - best) / high
                 if high is not None and math.isfinite(high) and high != 0 else None)

    moved = [c for c in neighbours if c.fit.upb is not None and f.upb is not None
             and abs(c.fit.upb - f.upb) > NEIGHBOUR_SHIFT_WARN_PCT / 100 * abs(f.upb)]
    if moved and status != "poor_fit":
        messages.append("the estimate is sensitive to the threshold: a neighbouring threshold moves UPB by "
                        + ", ".join(f"{100 * (c.fit.upb - f.upb) / f.upb:+.2g}%" for c in moved))
    sc = diagnostics.get("scipy_genpareto")
    if sc is not None and sc["converged"] and not sc["agrees"] and sc["loglik"] is not None \
            and sc["loglik"] > f.loglik + 1e-6 and sc["xi"] is not None and sc["xi"] >= -1.0:
        messages.append("cross-check: " + sc["note"])

    return Estimate(n=n, best=best, threshold=cand.threshold, exceedances=ex.k, xi=f.xi, sigma=f.sigma,
                    upb=upb, upb_ci_low=low, upb_ci_high=high, gap_pct=gap, gap_upper_pct=gap_upper,
                    confidence=confidence,
                    status=status, messages=messages, diagnostics=diagnostics, fit=f)
