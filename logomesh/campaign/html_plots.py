"""The HTML report's plots as inline SVG: per task, per agent, and findings per family. No scripts, no assets.

Every data string goes through :func:`html.escape`; the output is a pure
function of the report (the jitter of a dot is a hash of its battle id).
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence

from logomesh.campaign.model import BattleSummary, CampaignReport, FamilyFindings, LeaderRow
from logomesh.campaign.report_text import interval_text

AGENT_COLOURS = ("#0969da", "#bc4c00", "#1a7f37", "#8250df", "#bf3989", "#0a7b83", "#9a6700", "#57606a")
SEVERITY_COLOURS = {"critical": "#8b0000", "high": "#d73a49", "medium": "#f0883e", "low": "#e3b341"}
OTHER_COLOUR = "#8c959f"
FAILED = "#cf222e"
_LEFT, _RIGHT, _TOP = 170.0, 24.0, 16.0
WIDTH = 720.0


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def agent_colours(report: CampaignReport) -> dict[str, str]:
    """Each agent's colour, by rank order (the same in every plot and table)."""
    return {agent: AGENT_COLOURS[i % len(AGENT_COLOURS)] for i, agent in enumerate(report.rank_order())}


def _x(value: float, left: float, width: float) -> float:
    """A CIS value on the plot's 0..1 axis; values outside (an interval's ends) are drawn at the edge."""
    return left + width * min(1.0, max(0.0, value))


def _label(text: str, x: float, y: float, limit: int = 24) -> str:
    """A right-aligned row label; long names are shortened on the plot, whole in the tooltip."""
    short = text if len(text) <= limit else text[: limit - 1] + "…"
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="12" text-anchor="end">{e(short)}'
            f"<title>{e(text)}</title></text>")


def _jitter(battle_id: str, spread: float) -> float:
    digest = hashlib.sha256(battle_id.encode()).digest()
    return (int.from_bytes(digest[:4], "big") / 0xFFFFFFFF * 2.0 - 1.0) * spread


def _svg_open(height: float, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH:.0f} {height:.0f}" '
            f'width="{WIDTH:.0f}" height="{height:.0f}" role="img" aria-label="{e(label)}">')


def _axis(plot_w: float, top: float, bottom: float) -> list[str]:
    parts: list[str] = []
    for i in range(5):
        tick = i / 4
        x = _x(tick, _LEFT, plot_w)
        parts.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#d0d7de"/>')
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16:.1f}" font-size="11" text-anchor="middle">{tick:.2f}</text>')
    parts.append(f'<text x="{_LEFT + plot_w / 2:.1f}" y="{bottom + 32:.1f}" font-size="12" '
                 'text-anchor="middle">CIS</text>')
    return parts


def _legend(colours: dict[str, str], y: float) -> list[str]:
    parts, x = [], _LEFT
    for agent, colour in colours.items():
        parts.append(f'<circle cx="{x + 5:.1f}" cy="{y - 4:.1f}" r="5" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14:.1f}" y="{y:.1f}" font-size="12">{e(agent)}</text>')
        x += 30 + 7 * len(agent)
    return parts


def task_plot(report: CampaignReport) -> str:
    """Per task (in the report's order): each agent's task mean (filled) and its repeats (hollow), by colour."""
    colours = agent_colours(report)
    tasks = list(dict.fromkeys(c.task_id for c in report.cells))
    lane = 12.0
    row_h = max(28.0, lane * len(colours) + 10)
    plot_w = WIDTH - _LEFT - _RIGHT
    top = _TOP + 20
    bottom = top + row_h * max(1, len(tasks))
    parts = [_svg_open(bottom + 40, "CIS per task and agent"), *_legend(colours, _TOP + 4)]
    parts += _axis(plot_w, top, bottom)
    for i, task in enumerate(tasks):
        y0 = top + row_h * i
        if i:
            parts.append(f'<line x1="{_LEFT - 160:.1f}" y1="{y0:.1f}" x2="{WIDTH - _RIGHT:.1f}" y2="{y0:.1f}" '
                         'stroke="#eaeef2"/>')
        parts.append(_label(task, _LEFT - 8, y0 + row_h / 2 + 4))
        for j, agent in enumerate(colours):
            y = y0 + 5 + lane * (j + 0.5) + (row_h - 10 - lane * len(colours)) / 2
            colour = colours[agent]
            for b in report.battles:
                if b.agent == agent and b.task_id == task and b.cis is not None:
                    parts.append(f'<circle cx="{_x(b.cis, _LEFT, plot_w):.1f}" cy="{y:.1f}" r="3" fill="none" '
                                 f'stroke="{colour}" stroke-opacity="0.7"><title>{e(b.battle_id)}: CIS '
                                 f'{b.cis:.4f}</title></circle>')
            cell = next((c for c in report.cells if c.agent == agent and c.task_id == task), None)
            if cell is not None and cell.mean_cis is not None:
                parts.append(f'<circle cx="{_x(cell.mean_cis, _LEFT, plot_w):.1f}" cy="{y:.1f}" r="5" '
                             f'fill="{colour}"><title>{e(agent)} on {e(task)}: mean {cell.mean_cis:.4f} over '
                             f'{cell.counted} battles</title></circle>')
    parts.append("</svg>")
    return "\n".join(parts)


def _strip_row(agent: str, y: float, battles: Sequence[BattleSummary], row: LeaderRow | None, plot_w: float,
               colour: str) -> list[str]:
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
                     f'stroke-width="3"><title>{e(agent)}: mean {row.mean_cis:.4f}, 95% CI '
                     f'{interval_text(row.interval, 4)}</title></line>')
    for b in battles:
        if b.cis is None:
            continue
        cx, cy = _x(b.cis, _LEFT, plot_w), y + _jitter(b.battle_id, 10.0)
        paint = (f'fill="{colour}" fill-opacity="0.55"' if b.outcome == "scored"
                 else f'fill="none" stroke="{FAILED}" stroke-width="1.5"')
        label = f"{b.battle_id}: CIS {b.cis:.4f}" + ("" if b.outcome == "scored" else " (failed at stage purple)")
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" {paint}><title>{e(label)}</title></circle>')
    return parts


def score_plot(report: CampaignReport) -> str:
    """Per agent: every counted battle's CIS as a dot (hollow red: failed at stage purple), mean and 95% CI."""
    ranked = {row.agent: row for row in report.leaderboard}
    colours = agent_colours(report)
    order = report.rank_order()
    row_h = 40.0
    plot_w = WIDTH - _LEFT - _RIGHT
    bottom = _TOP + row_h * max(1, len(order))
    parts = [_svg_open(bottom + 40, "CIS per agent"), *_axis(plot_w, _TOP, bottom)]
    for i, agent in enumerate(order):
        mine = [b for b in report.battles if b.agent == agent]
        parts += _strip_row(agent, _TOP + row_h * (i + 0.5), mine, ranked.get(agent), plot_w, colours[agent])
    parts.append("</svg>")
    return "\n".join(parts)


def severity_colour(severity: str) -> str:
    return SEVERITY_COLOURS.get(severity, OTHER_COLOUR)


def findings_plot(families: Sequence[FamilyFindings], severities: Sequence[str]) -> str:
    """Findings per family as horizontal bars, stacked by severity (worst first)."""
    bar_h, gap, legend_h = 18.0, 8.0, 24.0
    plot_w = WIDTH - _LEFT - _RIGHT - 40
    most = max((f.total for f in families), default=1) or 1
    height = legend_h + (bar_h + gap) * len(families) + gap
    parts = [_svg_open(height, "findings per family")]
    x = _LEFT
    for severity in severities:
        parts.append(f'<rect x="{x:.1f}" y="4" width="12" height="12" fill="{severity_colour(severity)}"/>')
        parts.append(f'<text x="{x + 16:.1f}" y="14" font-size="11">{e(severity)}</text>')
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
                         f'fill="{severity_colour(severity)}"><title>{e(family.family)}: {count} '
                         f'{e(severity)}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 6:.1f}" y="{y + bar_h - 5:.1f}" font-size="11">{family.total}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
