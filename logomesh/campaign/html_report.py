"""A campaign report as one self-contained HTML page: tables and inline SVG plots, no JS, no external assets.

Every string that comes from data (agent names, task ids, battle ids, failure
reasons, finding families) goes through :func:`html.escape`. The output is a
pure function of the report: no timestamps, no randomness (the jitter of the
strip plot is a hash of the battle id), so the same report gives the same bytes.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Sequence

from logomesh.campaign.model import BattleSummary, CampaignReport, Cell, FamilyFindings, LeaderRow
from logomesh.campaign.report_json import DEFINITIONS, report_json
from logomesh.campaign.report_text import ci_text

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;
color:#1f2328;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#59636e;font-size:.85rem}.reason{font-family:ui-monospace,monospace;font-size:.8rem;
white-space:pre-wrap;word-break:break-word}
svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}
"""

_SEVERITY_COLOURS = {"critical": "#8b0000", "high": "#d73a49", "medium": "#f0883e", "low": "#e3b341"}
_OTHER_COLOUR = "#8c959f"
_SCORED = "#0969da"
_FAILED = "#cf222e"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _f(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _x(value: float, left: float, width: float) -> float:
    """A CIS value on the plot's 0..1 axis; values outside (an interval's ends) are drawn at the edge."""
    return left + width * min(1.0, max(0.0, value))


def _label(text: str, x: float, y: float, limit: int = 24) -> str:
    """A right-aligned row label; long names are shortened on the plot, whole in the tooltip."""
    short = text if len(text) <= limit else text[: limit - 1] + "…"
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="12" text-anchor="end">{_e(short)}'
            f"<title>{_e(text)}</title></text>")


def _jitter(battle_id: str, spread: float) -> float:
    digest = hashlib.sha256(battle_id.encode()).digest()
    return (int.from_bytes(digest[:4], "big") / 0xFFFFFFFF * 2.0 - 1.0) * spread


# ---------------------------------------------------------------- tables


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """``rows`` hold already-escaped cell HTML; ``numeric`` right-aligns a column."""
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>", "<tbody>"]
    for row in rows:
        cells = "".join(f'<td class="n">{c}</td>' if num else f"<td>{c}</td>" for c, num in zip(row, numeric,
                                                                                                   strict=True))
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _leaderboard_table(board: Sequence[LeaderRow]) -> str:
    rows = [[str(r.rank), _e(r.agent), _f(r.mean_cis, 4), ci_text(r.ci_low, r.ci_high, 4),
             str(r.battles), str(r.scored), str(r.failed), str(r.cancelled)] for r in board]
    return _table(["#", "agent", "mean CIS", "95% CI", "battles", "scored", "failed", "cancelled"], rows,
                  [True, False, True, True, True, True, True, True])


def _cell_background(mean: float | None) -> str:
    if mean is None:
        return ""
    level = min(1.0, max(0.0, mean))
    return f' style="background:hsl({120 * level:.0f},60%,88%)"'


def _cells_table(cells: Sequence[Cell]) -> str:
    head = ["agent", "task", "n", "mean CIS", "95% CI", "hidden pass", "scored", "failed purple", "failed infra",
            "cancelled", "findings"]
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>", "<tbody>"]
    for c in cells:
        out.append(
            f"<tr><td>{_e(c.agent)}</td><td>{_e(c.task_id)}</td><td class=\"n\">{c.counted}</td>"
            f"<td class=\"n\"{_cell_background(c.mean_cis)}>{_f(c.mean_cis)}</td>"
            f"<td class=\"n\">{ci_text(c.cis_min, c.cis_max, 3)}</td>"
            f"<td class=\"n\">{_pct(c.pass_rate)} ({c.hidden_passed}/{c.hidden_total})</td>"
            f"<td class=\"n\">{c.scored}/{c.recorded}</td><td class=\"n\">{c.agent_failed}</td>"
            f"<td class=\"n\">{c.infra_failed}</td><td class=\"n\">{c.cancelled}</td>"
            f"<td class=\"n\">{c.findings}</td></tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _failures_table(report: CampaignReport) -> str:
    rows = [[str(g.count), _e(g.kind), _e(g.stage), f'<span class="reason">{_e(g.reason) or "(no reason)"}</span>',
             _e(", ".join(g.battle_ids[:5]) + (f" … and {len(g.battle_ids) - 5} more" if len(g.battle_ids) > 5
                                               else ""))]
            for g in report.failures]
    return _table(["count", "kind", "stage", "reason", "battles"], rows, [True, False, False, False, False])


# ---------------------------------------------------------------- plots


_LEFT, _RIGHT, _TOP, _ROW = 170.0, 24.0, 16.0, 40.0
_WIDTH = 720.0


def _axis(plot_w: float, bottom: float) -> list[str]:
    parts: list[str] = []
    for i in range(5):
        tick = i / 4
        x = _x(tick, _LEFT, plot_w)
        parts.append(f'<line x1="{x:.1f}" y1="{_TOP:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#d0d7de"/>')
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16:.1f}" font-size="11" text-anchor="middle">{tick:.2f}</text>')
    parts.append(f'<text x="{_LEFT + plot_w / 2:.1f}" y="{bottom + 32:.1f}" font-size="12" '
                 'text-anchor="middle">CIS</text>')
    return parts


def _strip_row(agent: str, y: float, battles: Sequence[BattleSummary], row: LeaderRow | None,
               plot_w: float) -> list[str]:
    parts = [_label(agent, _LEFT - 8, y + 4)]
    if row is not None:
        if row.ci_low is not None and row.ci_high is not None:
            lo, hi = _x(row.ci_low, _LEFT, plot_w), _x(row.ci_high, _LEFT, plot_w)
            parts.append(f'<line x1="{lo:.1f}" y1="{y:.1f}" x2="{hi:.1f}" y2="{y:.1f}" stroke="#1f2328" '
                         'stroke-width="1.5"/>')
            for end in (lo, hi):
                parts.append(f'<line x1="{end:.1f}" y1="{y - 5:.1f}" x2="{end:.1f}" y2="{y + 5:.1f}" '
                             'stroke="#1f2328"/>')
        mean = _x(row.mean_cis, _LEFT, plot_w)
        parts.append(f'<line x1="{mean:.1f}" y1="{y - 12:.1f}" x2="{mean:.1f}" y2="{y + 12:.1f}" stroke="#1f2328" '
                     f'stroke-width="3"><title>{_e(agent)}: mean {row.mean_cis:.4f}, 95% CI '
                     f'{ci_text(row.ci_low, row.ci_high, 4)}</title></line>')
    for b in battles:
        if b.cis is None:
            continue
        cx, cy = _x(b.cis, _LEFT, plot_w), y + _jitter(b.battle_id, 10.0)
        paint = (f'fill="{_SCORED}" fill-opacity="0.55"' if b.outcome == "scored"
                 else f'fill="none" stroke="{_FAILED}" stroke-width="1.5"')
        label = f"{b.battle_id}: CIS {b.cis:.4f}" + ("" if b.outcome == "scored" else " (failed at stage purple)")
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" {paint}><title>{_e(label)}</title></circle>')
    return parts


def score_plot(report: CampaignReport) -> str:
    """Per agent: every counted battle's CIS as a dot (hollow red: failed at stage purple), mean and 95% CI."""
    ranked = {row.agent: row for row in report.leaderboard}
    order = [row.agent for row in report.leaderboard] + list(report.unranked)
    plot_w = _WIDTH - _LEFT - _RIGHT
    bottom = _TOP + _ROW * max(1, len(order))
    height = bottom + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {_WIDTH:.0f} {height:.0f}" role="img" aria-label="CIS per agent">']
    parts += _axis(plot_w, bottom)
    for i, agent in enumerate(order):
        mine = [b for b in report.battles if b.agent == agent]
        parts += _strip_row(agent, _TOP + _ROW * (i + 0.5), mine, ranked.get(agent), plot_w)
    parts.append("</svg>")
    return "\n".join(parts)


def _severity_colour(severity: str) -> str:
    return _SEVERITY_COLOURS.get(severity, _OTHER_COLOUR)


def findings_plot(families: Sequence[FamilyFindings], severities: Sequence[str]) -> str:
    """Findings per family as horizontal bars, stacked by severity (worst first)."""
    bar_h, gap, legend_h = 18.0, 8.0, 24.0
    plot_w = _WIDTH - _LEFT - _RIGHT - 40
    most = max((f.total for f in families), default=1) or 1
    height = legend_h + (bar_h + gap) * len(families) + gap
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {_WIDTH:.0f} {height:.0f}" role="img" aria-label="findings per family">']
    x = _LEFT
    for severity in severities:
        parts.append(f'<rect x="{x:.1f}" y="4" width="12" height="12" fill="{_severity_colour(severity)}"/>')
        parts.append(f'<text x="{x + 16:.1f}" y="14" font-size="11">{_e(severity)}</text>')
        x += 24 + 7 * len(severity)
    for i, family in enumerate(families):
        y = legend_h + gap + i * (bar_h + gap)
        parts.append(_label(family.family, _LEFT - 8, y + bar_h - 5))
        x = _LEFT
        for severity in severities:
            count = family.by_severity.get(severity, 0)
            if not count:
                continue
            w = plot_w * count / most
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{bar_h:.1f}" '
                         f'fill="{_severity_colour(severity)}"><title>{_e(family.family)}: {count} '
                         f'{_e(severity)}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 6:.1f}" y="{y + bar_h - 5:.1f}" font-size="11">{family.total}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# ---------------------------------------------------------------- page


def _overview(report: CampaignReport) -> str:
    return (
        f"<p>{report.recorded} of {report.planned} planned battles recorded "
        f"({len(report.agents)} agents × {len(report.task_ids)} tasks × {report.repeat} repeats); "
        f"{len(report.missing)} missing, {len(report.retries)} retried; "
        f"{report.agent_failures} failed at stage purple, {report.infra_failures} infrastructure failures, "
        f"{report.cancelled} cancelled.</p>\n"
        f'<p class="note">{_e(DEFINITIONS["policy"])} Pass rate: {_e(DEFINITIONS["pass_rate"])}.</p>'
    )


def _findings_section(report: CampaignReport) -> list[str]:
    parts = ["<h2>Findings per family</h2>"]
    if not report.findings_by_family:
        return [*parts, "<p>No findings.</p>"]
    present = [s for s, n in report.findings_by_severity.items() if n]
    summary = ", ".join(f"{_e(s)} {report.findings_by_severity[s]}" for s in present)
    return [*parts, f"<p>Findings: {report.findings_total} ({summary}).</p>",
            findings_plot(report.findings_by_family, present)]


def _list_section(title: str, items: Sequence[str]) -> list[str]:
    if not items:
        return []
    return [f"<h2>{_e(title)}</h2>", "<ul>", *(f"<li>{_e(item)}</li>" for item in items), "</ul>"]


def render_html(report: CampaignReport) -> str:
    """The whole report as one HTML document."""
    title = f"LogoMesh campaign {report.campaign_id}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _overview(report),
        "<h2>Leaderboard</h2>",
        _leaderboard_table(report.leaderboard) if report.leaderboard else "<p>No agent has a counted battle.</p>",
    ]
    if report.unranked:
        parts.append(f"<p>Unranked (no counted battle): {_e(', '.join(report.unranked))}</p>")
    parts += [
        "<h2>CIS per agent</h2>",
        '<p class="note">Each dot is one battle (hollow red: failed at stage purple, counted as 0); '
        "the bar is the mean, the whisker its 95% CI (none below three counted battles).</p>",
        score_plot(report),
        "<h2>Per agent and task</h2>",
        _cells_table(report.cells),
    ]
    parts += _findings_section(report)
    parts.append("<h2>Failures</h2>")
    parts.append(_failures_table(report) if report.failures else "<p>No failed battles.</p>")
    parts += _list_section(f"Cancelled battles ({report.cancelled})",
                           [f"{g.count} in stage {g.stage}: {', '.join(g.battle_ids)}" for g in report.cancellations])
    parts += _list_section(f"Missing battles ({len(report.missing)})", report.missing)
    parts += _list_section(f"Retried battles ({len(report.retries)})",
                           [f"{r.battle_id}: {r.attempts} attempts, {r.outcome}" for r in report.retries])
    parts.append(embedded_json(report))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


EMBED_ID = "logomesh-report"


def embedded_json(report: CampaignReport) -> str:
    """The report's JSON in an inert data block (never run); ``<``, ``>`` and ``&`` as JSON escapes, so no data
    string can close the block. ``logomesh verify report`` reads it back."""
    data = json.dumps(report_json(report), sort_keys=True, ensure_ascii=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{EMBED_ID}">{data}</script>'

