"""`assign report`: every figure as PNG and SVG, and a one-page HTML summary.

The page is laid out for a browser, not a console: the key figures in a
table whose numbers carry their exact values (`<data data-key="PATH"
value="...">`, PATH being the key of `assign estimate --json`, so a script
or a test reads them back), and the text the CLI prints (the optimum of
means, the paper's estimate) as tables of label and wrapped value."""
from __future__ import annotations

import html
import math
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
    # commands/estimate.py's optimum_section without its text: optimum_mean, chosen, gap_pct, ... (the
    # keys of `assign estimate --json`); None: not available
    optimum: dict | None = None
    unit: str = "packets/s"         # the workload's value unit (units.value_unit)


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

    page = _html(inp, est_text, key_figures(est, inp.optimum), drawn, skipped)
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


def key_figures(est, optimum: dict | None) -> dict:
    """The figures the page leads with, under the keys `assign estimate --json`
    gives them: the optimum of means and the chosen placement (optimum_section's
    keys), and the paper's estimate from single values (its gap as paper_gap_pct)."""
    d: dict = {}
    if optimum is not None:
        d.update({k: v for k, v in optimum.items() if k != "text"})
    if est is not None:
        e = est.to_dict()
        d.update({k: e[k] for k in ("best", "threshold", "upb", "upb_ci_low", "upb_ci_high", "one_sided",
                                    "confidence")})
        d["paper_gap_pct"], d["paper_gap_upper_pct"] = e["gap_pct"], e["gap_upper_pct"]
    return d


def _at(d: dict | None, path: str):
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _number(d: dict, path: str, unit: str, missing: str = "none") -> str:
    """A figure as a <data> element: its exact value for machines, formatted
    as the CLI prints it for people (missing: what an absent value reads)."""
    from .evt.estimate import _fmt

    v = _at(d, path)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        return f'<data data-key="{path}" value="">{html.escape(missing)}</data>'
    shown = f"{v:.2f}%" if unit == "%" else f"{_fmt(v)} {unit}"
    return f'<data data-key="{path}" value="{v!r}">{html.escape(shown)}</data>'


def _interval(d: dict, lo: str, hi: str, unit: str, one_sided: bool) -> str:
    if _at(d, lo) is None and _at(d, hi) is None:
        return "none"
    upper = "unbounded (one-sided)" if one_sided else "none"
    return f"[{_number(d, lo, unit)}, {_number(d, hi, unit, upper)}]"


def _key_rows(d: dict, value_label: str, unit: str) -> str:
    """Rows of the key-figures table: what each figure is, its value, its interval."""
    e = html.escape
    rows = []
    opt = d.get("optimum_mean")
    if isinstance(opt, dict):
        conf = opt.get("confidence") or d.get("confidence")
        status = opt.get("status")
        rows.append(("optimum of placement means (estimated)", _number(d, "optimum_mean.estimate", unit),
                     _interval(d, "optimum_mean.ci_low", "optimum_mean.ci_high", unit, bool(opt.get("one_sided")))
                     + (f" at {100 * conf:g}%" if conf else "") + (f"; status {e(str(status))}" if status else "")))
    elif "optimum_mean" in d:
        rows.append(("optimum of placement means (estimated)", "none", e(str(d.get("optimum_mean_error", "")))))
    chosen = d.get("chosen")
    if isinstance(chosen, dict):
        rows.append((f"chosen placement's mean ({e(str(chosen.get('kind', value_label)))}; `assign best`, "
                     f"draw {e(str(chosen.get('draw')))})", _number(d, "chosen.mean", unit),
                     _interval(d, "chosen.ci_low", "chosen.ci_high", unit, False)))
    if "gap_pct" in d:
        rows.append(("gap of the chosen placement to the optimum of means (estimated)",
                     _number(d, "gap_pct", "%", "none: no placement chosen yet (`assign best`)"),
                     f"at most {_number(d, 'gap_pct_high', '%')} at the ends of both intervals"
                     if _at(d, "gap_pct_high") is not None else ""))
    if "upb" in d:
        rows.append((f"best single value ({e(value_label)})", _number(d, "best", unit), ""))
        rows.append(("the paper's UPB from single values (estimated; with noise it bounds the luckiest "
                     "measurement)", _number(d, "upb", unit, "none: the fitted tail has no finite end point"),
                     _interval(d, "upb_ci_low", "upb_ci_high", unit, bool(d.get("one_sided")))
                     + (f" at {100 * d['confidence']:g}%" if d.get("confidence") else "")))
        rows.append(("the paper's gap, best single value to UPB (estimated)", _number(d, "paper_gap_pct", "%"),
                     f"to the interval's upper end: {_number(d, 'paper_gap_upper_pct', '%')}"
                     if _at(d, "paper_gap_upper_pct") is not None else ""))
    return "".join(f"<tr><th scope=\"row\">{label}</th><td class=\"num\">{value}</td><td>{extra}</td></tr>"
                   for label, value, extra in rows)


def _text_table(lines: list[str]) -> str:
    """The CLI's text as a table: a line `label: value` is a row (indented
    lines under the one above them), any other line a row of its own; every
    cell wraps."""
    e = html.escape
    rows = []
    for line in lines:
        body = line.strip()
        if not body:
            continue
        cls = "sub" if line[:1] == " " else "top"
        label, sep, value = body.partition(": ")
        if sep and label and len(label) <= 100:
            rows.append(f'<tr class="{cls}"><th scope="row">{e(label)}</th><td>{e(value.strip())}</td></tr>')
        else:
            rows.append(f'<tr class="{cls}"><td colspan="2">{e(body)}</td></tr>')
    return f'<table class="text">{"".join(rows)}</table>'


def _html(inp: ReportInput, est_text: str, figs_json: dict, drawn: list[tuple[str, str]],
          skipped: list[str]) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(b.name)}</td><td class=\"num\">{'' if b.value is None else f'{b.value:,.0f}'}</td>"
        f"<td>{e(b.note)}</td></tr>"
        for b in inp.baselines)
    facts = "".join(f"<tr><th scope=\"row\">{e(k)}</th><td>{e(v)}</td></tr>" for k, v in inp.facts)
    figs = "".join(
        f'<figure><img src="{e(os.path.basename(p))}" alt="{e(c)}"><figcaption>{e(c)} '
        f'(<a href="{e(os.path.basename(p)[:-4])}.svg">SVG</a>)</figcaption></figure>'
        for p, c in drawn)
    skip = "".join(f"<li>{e(s)}</li>" for s in skipped)
    key = _key_rows(figs_json, inp.value_label, inp.unit)
    # the cluster's per-worker table keeps its columns; long lines wrap
    workers = (f'<h2>Cluster workers: are they identical machines?</h2>'
               f'<div class="console">{e(chr(10).join(inp.workers))}</div>' if inp.workers else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(inp.title)}</title>
<style>
body {{ font-family: sans-serif; line-height: 1.4; max-width: 1200px; margin: 1em auto; padding: 0 1em; }}
h1 {{ font-size: 1.5em; overflow-wrap: anywhere; }}
table {{ border-collapse: collapse; margin: .5em 0 1em; max-width: 100%; }}
td, th {{ border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top;
  overflow-wrap: anywhere; }}
th {{ font-weight: normal; background: #f6f6f6; }}
td.num {{ white-space: nowrap; text-align: right; }}
table.key th, table.text th {{ width: 32%; }}
table.text tr.sub th {{ padding-left: 1.8em; }}
table.text tr.top th, table.text tr.top td[colspan] {{ font-weight: bold; }}
.console {{ font-family: monospace; white-space: pre-wrap; overflow-wrap: anywhere; background: #f4f4f4;
  padding: .6em; }}
.figs {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 520px), 1fr)); gap: 1em; }}
figure {{ margin: 0; }} img {{ max-width: 100%; height: auto; }}
</style></head><body>
<h1>{e(inp.title)}</h1>
<p>Values are <b>{e(inp.value_label)}</b>; the optimum of placement means, UPB, their intervals and the GPD
fits are <b>estimated</b>.</p>
<table>{facts}</table>
<h2>Key figures</h2>
{f'<table class="key"><tr><th>figure</th><th>value</th><th>interval, or what bounds it</th></tr>{key}</table>'
 if key else "<p>none: no estimate could be made (see below)</p>"}
<h2>The optimum of placement means, the chosen placement and its gap</h2>
{_text_table(inp.optimum_text) if inp.optimum_text else "<p>not available</p>"}
<h2>The paper's estimate from single values</h2>
<p>With measurement noise, the paper's UPB bounds the luckiest measurement, not a placement's mean; kept for
comparison.</p>
{_text_table(est_text.splitlines())}
{workers}
<h2>Baselines (scored by the same backend: {e(inp.value_label)})</h2>
<table><tr><th>assignment</th><th>{e(inp.unit)}</th><th>note</th></tr>{rows}</table>
<h2>Figures</h2>
<div class="figs">{figs}</div>
{f"<h2>Not drawn</h2><ul>{skip}</ul>" if skipped else ""}
</body></html>
"""
