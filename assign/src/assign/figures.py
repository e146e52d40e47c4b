"""The figures that are not EVT diagnostics (those are assign.evt.plots):
the ordered sample, the ECDF, the chance of capturing the top P% against n,
the estimate against sample size (the report's), and the baselines against
the estimated optimum (`assign baselines --measured --plot`, the paper's
Figure 1).

`label` is "measured" or "modelled" (what the values are); everything fitted
is "estimated".
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes

if TYPE_CHECKING:
    from .baselines import Baseline
    from .evt import Estimate


def ordered_sample(ax: Axes, values: Sequence[float], threshold: float | None, label: str,
                   unit: str = "packets/s") -> Axes:
    """Values sorted non-decreasingly (the paper's Fig. 6a), with u."""
    x = np.sort(np.asarray(values, dtype=float))
    ax.plot(np.arange(1, x.size + 1), x, ".", ms=2, color="C0", label=f"{label} throughput")
    if threshold is not None:
        ax.axhline(threshold, color="C3", lw=1, ls="--", label=f"threshold u (estimated) = {threshold:,.0f}")
    ax.set_xlabel("rank of assignment in the sample")
    ax.set_ylabel(f"throughput, {unit} ({label})")
    ax.set_title(f"Ordered sample (n = {x.size}, {label})")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def ecdf(ax: Axes, values: Sequence[float], label: str, upb: float | None = None, unit: str = "packets/s") -> Axes:
    """Empirical CDF of the sample (sec. 3.2); the estimated optimum if any."""
    x = np.sort(np.asarray(values, dtype=float))
    y = np.arange(1, x.size + 1) / x.size
    ax.step(x, y, where="post", color="C0", label=f"ECDF ({label})")
    if upb is not None and np.isfinite(upb):
        ax.axvline(upb, color="C3", ls="--", lw=1, label=f"UPB (estimated) = {upb:,.0f}")
    ax.set_xlabel(f"throughput, {unit} ({label})")
    ax.set_ylabel("fraction of assignments <= x")
    ax.set_title(f"Empirical CDF (n = {x.size}, {label})")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def capture_probability(ax: Axes, n_current: int | None = None,
                        percents: Sequence[float] = (1, 2, 5, 10, 25)) -> Axes:
    """P(a sample of n iid assignments holds one of the top P%) =
    1 - (1 - P/100)^n (sec. 3.1, Fig. 2); independent of the population."""
    n_max = max(1000, int(1.2 * n_current)) if n_current else 1000
    n = np.unique(np.geomspace(1, n_max, 400).astype(int))
    for p in percents:
        ax.plot(n, 1 - (1 - p / 100) ** n, label=f"top {p:g}%")
    if n_current:
        ax.axvline(n_current, color="k", ls=":", lw=1, label=f"this sample, n = {n_current}")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("assignments in the sample, n")
    ax.set_ylabel("P(sample holds one of the top P%)")
    ax.set_title("Chance of capturing a top assignment (exact formula)")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def estimate_vs_n(ax: Axes, points: Sequence[dict], label: str, unit: str = "packets/s") -> Axes:
    """Best observed and UPB with its interval, for growing prefixes of the
    sample (draw order).  Open upper ends are drawn as arrows."""
    n = np.array([p["n"] for p in points], dtype=float)
    best = np.array([p["best"] for p in points], dtype=float)
    ax.plot(n, best, "o-", color="C0", label=f"best in sample ({label})")
    up = [(p["n"], p["upb"], p["upb_ci_low"], p["upb_ci_high"]) for p in points if p.get("upb") is not None]
    if up:
        un, uv, lo, hi = (np.array(c, dtype=float) for c in zip(*up))
        finite_hi = np.isfinite(hi)
        ax.plot(un, uv, "s", color="C3", label="UPB (estimated)")
        for i in range(un.size):
            top = hi[i] if finite_hi[i] else np.nan
            if np.isfinite(lo[i]) and np.isfinite(top):
                ax.vlines(un[i], lo[i], top, color="C3", lw=1.5)
            elif np.isfinite(lo[i]):
                ax.annotate("", xy=(un[i], uv[i] * 1.03), xytext=(un[i], lo[i]),
                            arrowprops=dict(arrowstyle="->", color="C3"))
        ax.plot([], [], color="C3", lw=1.5, label="confidence interval (estimated; arrow: open above)")
    ax.set_xlabel("assignments in the sample, n")
    ax.set_ylabel(f"throughput, {unit}")
    ax.set_title("Estimate against sample size")
    ax.legend(loc="best", fontsize="small")
    return ax


def baselines(ax: Axes, bars: Sequence[Baseline], title: str, est: Estimate | None,
              unit: str = "packets/s") -> Axes:
    """Bars of the baselines (grey: measured, with +-sd of repeated
    measurements) and the estimates (red: the optimum of placement means and
    the paper's UPB, each with its interval), each measured bar with its gap
    to the reference the bars were scored against."""
    shown = [b for b in bars if b.value is not None]
    colors = ["#999999" if b.label in ("measured", "modelled") else "#cc4444" for b in shown]
    errs = [[0.0 for _ in shown], [0.0 for _ in shown]]
    for i, b in enumerate(shown):
        if b.ci is not None and b.ci[0] is not None:
            errs[0][i] = max(0.0, b.value - b.ci[0])
            errs[1][i] = 0.0 if b.ci[1] is None or b.ci[1] == float("inf") else max(0.0, b.ci[1] - b.value)
        elif b.sd is not None and b.sd == b.sd:
            errs[0][i] = errs[1][i] = b.sd
    # packets/s run in millions, MB/s in tens: scale only what is large
    scale = 1e6 if shown and max(b.value for b in shown) >= 1e6 else 1.0
    ax.bar(range(len(shown)), [b.value / scale for b in shown], color=colors,
           yerr=[[e / scale for e in errs[0]], [e / scale for e in errs[1]]], capsize=4)
    ax.set_xticks(range(len(shown)), [f"{b.name}\n({b.label})" for b in shown], fontsize=7)
    for i, b in enumerate(shown):
        if b.gap_pct is not None and b.label in ("measured", "modelled"):
            ax.text(i, b.value / scale, f"{-b.gap_pct:+.1f}%", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(f"M{unit}" if scale > 1.0 else unit)
    ax.set_title(f"{title}: baselines vs the estimated optimum" if any(b.label == "estimated" for b in shown)
                 else f"{title}: baselines (no estimate of the optimum yet)", fontsize=9)
    return ax
