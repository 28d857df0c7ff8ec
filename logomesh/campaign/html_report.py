"""A campaign report as one self-contained HTML page: provenance, tables, inline SVG plots and the report's JSON.

No script runs and nothing is fetched: the only ``<script>`` is an inert
``application/json`` block holding ``report_json`` (what ``verify report``
reads back). Every string that comes from data goes through :func:`html.escape`.
The output is a pure function of the report, so the same report gives the same
bytes. The layout uses the window: a grid of panels from 1280 px up, one
column on narrow screens, wide tables scrolling inside their panel.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from logomesh.campaign.html_plots import agent_colours, e, findings_plot, score_plot, severity_colour, task_plot
from logomesh.campaign.model import CampaignReport, Provenance
from logomesh.campaign.report_json import DEFINITIONS, report_json
from logomesh.campaign.report_text import NO_INTERVAL, interval_text, num, pct, rank_text
from logomesh.campaign.stats import Interval
from logomesh.plural import counted

EMBED_ID = "logomesh-report"

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1800px;padding:1rem 1.5rem;
color:#1f2328;background:#fff;line-height:1.35}
h1{font-size:1.45rem;margin:.2rem 0}h2{font-size:1.1rem;margin:0 0 .4rem;border-bottom:1px solid #d0d7de;
padding-bottom:.2rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,34rem),1fr));gap:1.2rem 1.6rem;
margin:1rem 0}
.wide{grid-column:1/-1}
section{min-width:0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.85rem;margin:.3rem 0;width:100%}
th,td{border:1px solid #d0d7de;padding:.2rem .45rem;text-align:left;vertical-align:top}
th{background:#f6f8fa;white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.id{white-space:nowrap}
.note{color:#59636e;font-size:.8rem;margin:.2rem 0}
.why{color:#59636e;font-size:.75rem;display:block;white-space:normal;max-width:16rem;margin-left:auto}
.mono{font-family:ui-monospace,monospace;font-size:.78rem;word-break:break-all}
.reason{font-family:ui-monospace,monospace;font-size:.78rem;white-space:pre-wrap;word-break:break-word}
.better{color:#1a7f37;font-weight:600}.tie{color:#59636e}
.swatch{display:inline-block;width:.7rem;height:.7rem;border-radius:50%;margin-right:.35rem;vertical-align:-.05rem}
.sev{display:inline-block;padding:0 .35rem;border-radius:.6rem;color:#fff;font-size:.75rem}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .9rem;margin:.2rem 0;font-size:.85rem}
dl.prov dt{color:#59636e}dl.prov dd{margin:0;min-width:0}
svg{width:100%;height:auto;font-family:system-ui,sans-serif}
"""


def _interval_cell(interval: Interval, digits: int) -> str:
    if interval.ok:
        return interval_text(interval, digits)
    return f'{NO_INTERVAL}<span class="why">{e(interval.reason or "")}</span>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], kinds: str) -> str:
    """``rows`` hold already-escaped cell HTML; ``kinds`` per column: n (number), i (identifier), t (text)."""
    cls = {"n": ' class="n"', "i": ' class="id"', "t": ""}
    out = ['<div class="scroll"><table>',
           "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead>", "<tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td{cls[k]}>{c}</td>" for c, k in zip(row, kinds, strict=True)) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _agent(name: str, colours: dict[str, str]) -> str:
    colour = colours.get(name, "#8c959f")
    return f'<span class="swatch" style="background:{colour}"></span>{e(name)}'


def _leaderboard(report: CampaignReport, colours: dict[str, str]) -> str:
    if not report.leaderboard:
        return "<p>No agent has a counted battle.</p>"
    rows = []
    for r in report.leaderboard:
        passk = "—" if r.pass_k is None else f"{r.pass_k.pass_at_k:.3f} / {r.pass_k.pass_hat_k:.3f}"
        rows.append([rank_text(r.rank, r.tied), _agent(r.agent, colours), f"{r.mean_cis:.4f}",
                     _interval_cell(r.interval, 4), str(r.tasks), str(r.battles),
                     f"{r.solved_tasks}/{r.tasks} {_interval_cell(r.solved_interval, 2)}", passk,
                     str(r.failed), str(r.cancelled)])
    k = next((r.pass_k.k for r in report.leaderboard if r.pass_k is not None), None)
    head = ["#", "agent", "mean CIS", "95% CI", "tasks", "battles", "solved (95% CI)",
            f"pass@{k} / pass^{k}" if k else "pass@k / pass^k", "failed", "cancelled"]
    return _table(head, rows, "ninnnnnnnn")


def _comparisons(report: CampaignReport, colours: dict[str, str]) -> str:
    if not report.comparisons:
        return "<p>One ranked agent: nothing to compare.</p>"
    rows = []
    for c in report.comparisons:
        verdict = ('<span class="tie">tie</span>' if c.verdict == "tie"
                   else f'<span class="better">{e(c.verdict)} better</span>')
        rows.append([f"{_agent(c.first, colours)} − {_agent(c.second, colours)}", str(c.shared_tasks),
                     num(c.mean_difference, 4), _interval_cell(c.interval, 4), verdict,
                     f"{c.first_only} / {c.second_only}", num(c.mcnemar_p, 3)])
    return _table(["first − second", "shared tasks", "mean difference", "95% CI (paired bootstrap)", "verdict",
                   "solved only by first / second", "McNemar exact p"], rows, "innninn")


def _provenance(p: Provenance | None) -> str:
    if p is None:
        return "<p>Built without a ledger checkpoint: no provenance.</p>"
    items = [
        ("ledger checkpoint", f"tree size {p.checkpoint_size}, signed {e(p.checkpoint_time or '—')}"),
        ("root hash", f'<span class="mono">{e(p.checkpoint_root or "—")}</span>'),
        ("LogoMesh", e(p.logomesh_version)),
        ("scoring config", "<br>".join(f'<span class="mono">{e(c)}</span>' for c in p.scoring_config_sha256)
         or "none recorded"),
        ("red budget", f"{p.red_budget_s:g} s" if p.red_enabled else "red agent off"),
        ("sandbox", e(p.sandbox)),
        ("campaign seed", f"{p.campaign_seed} (each battle's seed in its row)"),
        ("task library", f'<span class="mono">{e(p.task_library_sha256 or "none recorded")}</span>'),
    ]
    body = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in items)
    return (f'<dl class="prov">{body}</dl><p class="note">Check every number against the signed ledger: '
            "<code>logomesh verify report FILE</code>.</p>")


def _cells(report: CampaignReport, colours: dict[str, str]) -> str:
    rows = [[e(c.task_id), _agent(c.agent, colours), str(c.counted), num(c.mean_cis, 3),
             "—" if c.cis_min is None else f"{c.cis_min:.3f}–{c.cis_max or 0.0:.3f}",
             f"{pct(c.pass_rate)} ({c.hidden_passed}/{c.hidden_total})", _interval_cell(c.pass_interval, 2),
             f"{c.scored}/{c.recorded}", str(c.agent_failed), str(c.infra_failed), str(c.cancelled), str(c.findings)]
            for c in report.cells]
    return _table(["task", "agent", "n", "mean CIS", "range", "hidden pass", "pass 95% CI", "scored",
                   "failed purple", "failed infra", "cancelled", "findings"], rows, "iinnnnnnnnnn")


def _battles(report: CampaignReport, colours: dict[str, str]) -> str:
    rows = []
    for b in report.battles:
        status = b.outcome if b.stage is None else f"{b.outcome} ({b.stage})"
        rows.append([_agent(b.agent, colours), e(b.task_id), str(b.repeat), e(status),
                     *(num(b.components.get(k), 3) for k in ("R", "A", "T", "L")),
                     *(num(b.penalties.get(k), 2) for k in ("red", "intent", "behaviour")),
                     num(b.cis, 4), "—" if b.sequence is None else str(b.sequence), "—" if b.seed is None
                     else str(b.seed)])
    return _table(["agent", "task", "repeat", "status", "R", "A", "T", "L", "red −", "intent ×", "behaviour ×",
                   "CIS", "ledger seq", "seed"], rows, "iini" + "n" * 10)


def _findings_summary(report: CampaignReport) -> list[str]:
    if not report.findings:
        return ["<p>No findings.</p>"]
    present = [s for s, n in report.findings_by_severity.items() if n]
    summary = ", ".join(f"{e(s)} {report.findings_by_severity[s]}" for s in present)
    return [f"<p>{report.findings_total} findings ({summary}).</p>",
            findings_plot(report.findings_by_family, present)]


def _findings(report: CampaignReport, colours: dict[str, str]) -> str:
    if not report.findings:
        return "<p>No findings.</p>"
    rows = [[f'<span class="sev" style="background:{severity_colour(f.severity_label)}">{e(f.severity_label)}</span>',
             e(f.family_label), e(f.finding.cwe or "—"), _agent(f.agent, colours), e(f.task_id),
             f'<span class="reason">{e(f.finding.reproducer) or "—"}</span>', e(f.finding.summary)]
            for f in report.findings]
    return _table(["severity", "family", "CWE", "agent", "task", "reproducer", "summary"], rows, "iiiiitt")


def _failures(report: CampaignReport) -> str:
    if not report.failures:
        return "<p>No failed battles.</p>"
    rows = [[str(g.count), e(g.kind), e(g.stage), f'<span class="reason">{e(g.reason) or "(no reason)"}</span>',
             e(", ".join(g.battle_ids[:5]) + (f" … and {len(g.battle_ids) - 5} more" if len(g.battle_ids) > 5
                                              else ""))]
            for g in report.failures]
    return _table(["count", "kind", "stage", "reason", "battles"], rows, "nittt")


def _list(title: str, items: Sequence[str]) -> list[str]:
    if not items:
        return []
    return [f'<section class="wide"><h2>{e(title)}</h2><ul>', *(f"<li>{e(item)}</li>" for item in items),
            "</ul></section>"]


def _overview(report: CampaignReport) -> str:
    when = report.provenance.checkpoint_time if report.provenance else None
    return (
        f"<p>{report.recorded} of {report.planned} planned battles recorded "
        f"({counted(len(report.agents), 'agent')} × {counted(len(report.task_ids), 'task')} × "
        f"{counted(report.repeat, 'repeat')}); "
        f"{len(report.missing)} missing, {len(report.retries)} retried; "
        f"{report.agent_failures} failed at stage purple, {report.infra_failures} infrastructure failures, "
        f"{report.cancelled} cancelled." + (f" As of the ledger checkpoint signed {e(when)}." if when else "")
        + f'</p>\n<p class="note">{e(DEFINITIONS["policy"])}</p>'
    )


def embedded_json(report: CampaignReport) -> str:
    """The report's JSON in an inert data block (never run); ``<``, ``>`` and ``&`` as JSON escapes, so no data
    string can close the block. ``logomesh verify report`` reads it back."""
    data = json.dumps(report_json(report), sort_keys=True, ensure_ascii=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{EMBED_ID}">{data}</script>'


def render_html(report: CampaignReport) -> str:
    """The whole report as one HTML document."""
    title = f"LogoMesh campaign {report.campaign_id}"
    colours = agent_colours(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        _overview(report),
        '<div class="grid">',
        '<section class="wide"><h2>Leaderboard</h2>', _leaderboard(report, colours),
        f'<p class="note">{e(DEFINITIONS["mean_cis"])}. {e(DEFINITIONS["rank"])}; = marks a tie.</p>',
    ]
    if report.unranked:
        parts.append(f"<p>Unranked (no counted battle): {e(', '.join(report.unranked))}</p>")
    parts += [
        "</section>",
        '<section class="wide"><h2>Paired comparisons</h2>', _comparisons(report, colours),
        f'<p class="note">{e(DEFINITIONS["comparisons"])}.</p></section>',
        "<section><h2>Provenance</h2>", _provenance(report.provenance), "</section>",
        "<section><h2>CIS per agent</h2>",
        '<p class="note">Each dot is one battle (hollow red: failed at stage purple, counted as 0); '
        "the bar is the mean over tasks, the whisker its 95% CI.</p>",
        score_plot(report), "</section>",
        "<section><h2>CIS per task</h2>",
        '<p class="note">Filled: the agent\'s mean on the task; hollow: each repeat. Tasks by best mean.</p>',
        task_plot(report), "</section>",
        "<section><h2>Findings per family</h2>", *_findings_summary(report), "</section>",
        '<section class="wide"><h2>Per task and agent</h2>', _cells(report, colours), "</section>",
        '<section class="wide"><h2>Battles</h2>', _battles(report, colours),
        '<p class="note">R, A, T, L: rationale, architecture, testing and logic scores; red −: the share the '
        "red agent's findings take off (× (1 − red)); intent ×, behaviour ×: the penalty multipliers; "
        "ledger seq: the entry's sequence number.</p></section>",
        '<section class="wide"><h2>Findings</h2>', _findings(report, colours), "</section>",
        '<section class="wide"><h2>Failures</h2>', _failures(report), "</section>",
    ]
    parts += _list(f"Cancelled battles ({report.cancelled})",
                   [f"{g.count} in stage {g.stage}: {', '.join(g.battle_ids)}" for g in report.cancellations])
    parts += _list(f"Missing battles ({len(report.missing)})", report.missing)
    parts += _list(f"Retried battles ({len(report.retries)})",
                   [f"{r.battle_id}: {r.attempts} attempts, {r.outcome}" for r in report.retries])
    parts += ["</div>", embedded_json(report), "</body></html>"]
    return "\n".join(parts) + "\n"
