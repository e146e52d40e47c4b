"""`assign report`: every figure as PNG and SVG, and a one-page HTML summary."""
from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from matplotlib.figure import Figure

from . import figures
from .baselines import Baseline
from .evt import EstimateError, estimate, minimum_sample

PREFIX_SIZES = (500, 1000, 1500, 2000, 3000, 4000, 5000, 7500, 10000, 20000, 50000)


@dataclass
class ReportInput:
    title: str
    value_label: str                # "measured" or "modelled"
    values: list[float]             # in draw order
    confidence: float = 0.95
    threshold: float | None = None
    baselines: list[Baseline] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    workers: list[str] = field(default_factory=list)  # a cluster run: machine_check.run_lines
    optimum_text: list[str] = field(default_factory=list)  # the optimum of means, chosen placement, gap, cost
    unit: str = "packets/s"         # the workload's value unit (workloads.value_unit)


@dataclass
class ReportOutput:
    html: str
    figures: list[str]              # PNG paths
    skipped: list[str]              # figures not drawn, with the reason
    estimate_text: str


def estimates_by_size(values: list[float], confidence: float, threshold: float | None = None) -> list[dict]:
    """Estimate on prefixes of the sample (what an iterative search would
    have seen), at the sizes in PREFIX_SIZES and the full n."""
    n = len(values)
    smallest = minimum_sample(0.05)
    sizes = sorted({s for s in PREFIX_SIZES if smallest <= s < n} | {n})
    out = []
    for s in sizes:
        try:
            out.append(estimate(values[:s], threshold=None, confidence=confidence).to_dict())
        except EstimateError:
            continue
    return out


def _save(fig: Figure, out_dir: str, stem: str) -> str:
    fig.tight_layout()
    png = os.path.join(out_dir, stem + ".png")
    fig.savefig(png, dpi=110)
    fig.savefig(os.path.join(out_dir, stem + ".svg"))
    return png


def build(inp: ReportInput, out_dir: str) -> ReportOutput:
    from .evt import plots as evt_plots

    os.makedirs(out_dir, exist_ok=True)
    values = inp.values
    est = None
    try:
        est = estimate(values, threshold=inp.threshold, confidence=inp.confidence)
        est_text = est.format_text(inp.value_label)
    except EstimateError as e:
        est_text = f"No EVT estimate: {e}"

    panels: list[tuple[str, str, Callable]] = [
        ("ordered_sample", "Ordered sample",
         lambda ax: figures.ordered_sample(ax, values, est.threshold if est else None, inp.value_label,
                                            inp.unit)),
        ("mean_excess", "Mean-excess plot with the chosen threshold",
         lambda ax: evt_plots.mean_excess(ax, values, _need(est).threshold)),
        ("gpd_qq", "GPD quantile plot", lambda ax: evt_plots.gpd_qq(ax, _need(est), values)),
        ("profile_upb", "Profile likelihood of UPB", lambda ax: evt_plots.profile_upb(ax, _need(est), values)),
        ("threshold_stability", "UPB against the threshold",
         lambda ax: evt_plots.threshold_stability(ax, values, inp.confidence)),
        ("ecdf", "Empirical CDF",
         lambda ax: figures.ecdf(ax, values, inp.value_label, est.upb if est else None, inp.unit)),
        ("capture_probability", "P(capture top P%) against n",
         lambda ax: figures.capture_probability(ax, len(values))),
        ("estimate_vs_n", "Estimate against sample size",
         lambda ax: figures.estimate_vs_n(ax, _need_points(estimates_by_size(values, inp.confidence)),
                                          inp.value_label, inp.unit)),
    ]
    drawn: list[tuple[str, str]] = []
    skipped: list[str] = []
    for stem, caption, draw in panels:
        fig = Figure(figsize=(7.0, 4.4))
        ax = fig.subplots()
        try:
            draw(ax)
        except (EstimateError, ValueError) as e:
            skipped.append(f"{caption}: {e}")
            continue
        drawn.append((_save(fig, out_dir, stem), caption))

    page = _html(inp, est_text, drawn, skipped)
    html_path = os.path.join(out_dir, "index.html")
    with open(html_path, "w") as f:
        f.write(page)
    return ReportOutput(html_path, [p for p, _ in drawn], skipped, est_text)


def _need(est):
    if est is None:
        raise ValueError("needs an EVT estimate, and there is none")
    return est


def _need_points(points: list[dict]) -> list[dict]:
    if not points:
        raise ValueError("no prefix of the sample is large enough for an estimate")
    return points


def _html(inp: ReportInput, est_text: str, drawn: list[tuple[str, str]], skipped: list[str]) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(b.name)}</td><td>{'' if b.value is None else f'{b.value:,.0f}'}</td><td>{e(b.note)}</td></tr>"
        for b in inp.baselines)
    facts = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in inp.facts)
    figs = "".join(
        f'<figure><img src="{e(os.path.basename(p))}" alt="{e(c)}"><figcaption>{e(c)} '
        f'(<a href="{e(os.path.basename(p)[:-4])}.svg">SVG</a>)</figcaption></figure>'
        for p, c in drawn)
    skip = "".join(f"<li>{e(s)}</li>" for s in skipped)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(inp.title)}</title>
<style>
body {{ font-family: sans-serif; max-width: 1500px; margin: 1em auto; }}
pre {{ background: #f4f4f4; padding: .6em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .2em .6em; text-align: left; }}
.figs {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(640px, 1fr)); gap: 1em; }}
figure {{ margin: 0; }} img {{ width: 100%; }}
</style></head><body>
<h1>{e(inp.title)}</h1>
<p>Values are <b>{e(inp.value_label)}</b>; the optimum of placement means, UPB, their intervals and the GPD
fits are <b>estimated</b>.</p>
<table>{facts}</table>
<h2>The optimum of placement means, the chosen placement and its gap</h2>
<pre>{e(chr(10).join(inp.optimum_text) or "not available")}</pre>
<h2>The paper's estimate from single values</h2>
<p>With measurement noise, the paper's UPB bounds the luckiest measurement, not a placement's mean; kept for
comparison.</p>
<pre>{e(est_text)}</pre>
{f"<h2>Cluster workers: are they identical machines?</h2><pre>{e(chr(10).join(inp.workers))}</pre>"
 if inp.workers else ""}
<h2>Baselines (scored by the same backend: {e(inp.value_label)})</h2>
<table><tr><th>assignment</th><th>{e(inp.unit)}</th><th>note</th></tr>{rows}</table>
<h2>Figures</h2>
<div class="figs">{figs}</div>
{f"<h2>Not drawn</h2><ul>{skip}</ul>" if skipped else ""}
</body></html>
"""
