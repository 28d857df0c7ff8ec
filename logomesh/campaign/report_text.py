"""A campaign report as plain text, at most about 105 columns wide: what ``campaign report`` prints by default."""

from __future__ import annotations

from collections.abc import Sequence

from logomesh.campaign.model import CampaignReport, Provenance
from logomesh.campaign.stats import Interval
from logomesh.plural import counted

NO_INTERVAL = "n/a"
"""Shown where an interval cannot be computed; the report says why beside it."""


def printable(text: str) -> str:
    """``text`` with control characters escaped, so untrusted reasons cannot drive a terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _fit(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def ci_text(low: float | None, high: float | None, digits: int) -> str:
    """``[low, high]``, or ``n/a`` where there is no interval."""
    return NO_INTERVAL if low is None or high is None else f"[{low:.{digits}f}, {high:.{digits}f}]"


def interval_text(interval: Interval, digits: int) -> str:
    return ci_text(interval.low, interval.high, digits)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _width(names: Sequence[str], floor: int, cap: int) -> int:
    return max(floor, min(cap, max((len(printable(n)) for n in names), default=floor)))


def rank_text(rank: int, tied: bool) -> str:
    return f"={rank}" if tied else str(rank)


def provenance_lines(p: Provenance | None) -> list[str]:
    if p is None:
        return ["Provenance: none (built without a ledger checkpoint)"]
    configs = ", ".join(c[:12] for c in p.scoring_config_sha256) or "none recorded"
    red = f"{p.red_budget_s:g} s" if p.red_enabled else "off"
    root = (p.checkpoint_root or "")[:16]
    return [
        f"Computed from signed checkpoint: tree size {p.checkpoint_size}, root {root}…, at {p.checkpoint_time}",
        f"LogoMesh {p.logomesh_version}; scoring config {configs}; red budget {red}; sandbox {p.sandbox}; "
        f"campaign seed {p.campaign_seed}; task library {(p.task_library_sha256 or 'none')[:12]}",
    ]


def _summary_lines(report: CampaignReport) -> list[str]:
    return [
        f"Campaign {printable(report.campaign_id)}: {report.recorded}/{report.planned} battles recorded, "
        f"{len(report.missing)} missing, {len(report.retries)} retried",
        f"{counted(len(report.agents), 'agent')} × {counted(len(report.task_ids), 'task')} × "
        f"{counted(report.repeat, 'repeat')}. "
        "Failed at stage 'purple' = CIS 0;",
        "other failed stages are infrastructure failures, excluded from means.",
        *provenance_lines(report.provenance),
    ]


def _leaderboard_lines(report: CampaignReport) -> list[str]:
    aw = _width([r.agent for r in report.leaderboard], 5, 19)
    lines = ["", "Leaderboard (mean over tasks of task-mean CIS; 95% CI with the task as the unit; "
                 "= marks a tie)",
             f"{'#':>3}  {'agent':<{aw}}  {'mean':>6}  {'95% CI':<16}  {'tasks':>5}  {'battles':>7}  "
             f"{'solved':>6}  {'failed':>6}  {'cxl':>3}"]
    notes: list[str] = []
    for row in report.leaderboard:
        lines.append(f"{rank_text(row.rank, row.tied):>3}  {_fit(row.agent, aw):<{aw}}  {row.mean_cis:>6.4f}  "
                     f"{interval_text(row.interval, 4):<16}  {row.tasks:>5}  {row.battles:>7}  "
                     f"{f'{row.solved_tasks}/{row.tasks}':>6}  {row.failed:>6}  {row.cancelled:>3}")
        if row.interval.reason:
            notes.append(f"  {printable(row.agent)}: no interval: {printable(row.interval.reason)}")
        if row.pass_k is not None:
            notes.append(f"  {printable(row.agent)}: pass@{row.pass_k.k} {row.pass_k.pass_at_k:.3f}, "
                         f"pass^{row.pass_k.k} {row.pass_k.pass_hat_k:.3f} over {row.pass_k.tasks} tasks")
    if not report.leaderboard:
        lines.append("  (no agent has a counted battle yet)")
    lines += notes
    if report.unranked:
        lines.append("  unranked (no counted battle): " + ", ".join(printable(a) for a in report.unranked))
    return lines


def _comparison_lines(report: CampaignReport) -> list[str]:
    if not report.comparisons:
        return []
    lines = ["", "Paired comparisons (first − second over shared tasks, 95% paired bootstrap CI;",
             "solved = shared tasks only the first / only the second solved, McNemar exact p)"]
    for c in report.comparisons:
        verdict = "tie" if c.verdict == "tie" else f"{printable(c.verdict)} better"
        mcnemar = "—" if c.mcnemar_p is None else f"{c.mcnemar_p:.3f}"
        lines.append(f"  {_fit(c.first, 16)} − {_fit(c.second, 16)}: {num(c.mean_difference, 4)} "
                     f"{interval_text(c.interval, 4)} on {c.shared_tasks} tasks → {verdict}; "
                     f"solved {c.first_only}/{c.second_only}, p {mcnemar}")
        if c.interval.reason:
            lines.append(f"    no interval: {printable(c.interval.reason)}")
    return lines


def _cell_lines(report: CampaignReport) -> list[str]:
    aw = _width(report.agents, 5, 12)
    tw = _width(report.task_ids, 4, 18)
    lines = ["", "Per task and agent (tasks by best mean, agents by rank)",
             f"{'task':<{tw}}  {'agent':<{aw}}  {'n':>2}  {'mean':>5}  {'range':<11}  {'pass':>4}  "
             f"{'pass 95% CI':<12}  {'scored':>6}  {'fail':>5}  {'cxl':>3}"]
    for c in report.cells:
        spread = "—" if c.cis_min is None else f"{c.cis_min:.3f}–{c.cis_max or 0.0:.3f}"
        lines.append(f"{_fit(c.task_id, tw):<{tw}}  {_fit(c.agent, aw):<{aw}}  {c.counted:>2}  "
                     f"{num(c.mean_cis, 3):>5}  {spread:<11}  {pct(c.pass_rate):>4}  "
                     f"{interval_text(c.pass_interval, 2):<12}  {f'{c.scored}/{c.recorded}':>6}  "
                     f"{f'{c.agent_failed}/{c.infra_failed}':>5}  {c.cancelled:>3}")
    lines += ["n = counted battles (scored + failed at stage purple, as 0); range = min–max over repeats;",
              "pass = hidden tests passed / run (Wilson CI); fail = purple / infrastructure; cxl = cancelled"]
    return lines


def _battle_lines(report: CampaignReport) -> list[str]:
    lines = ["", "Battles",
             f"{'seq':>5}  {'agent':<12}  {'task':<16}  {'r':>2}  {'status':<12}  {'R':>4} {'A':>4} {'T':>4} "
             f"{'L':>4}  {'red':>4} {'int':>4} {'beh':>4}  {'CIS':>6}"]
    for b in report.battles:
        comp = " ".join(f"{num(b.components.get(k), 2):>4}" for k in ("R", "A", "T", "L"))
        pen = " ".join(f"{num(b.penalties.get(k), 2):>4}" for k in ("red", "intent", "behaviour"))
        seq = "—" if b.sequence is None else str(b.sequence)
        lines.append(f"{seq:>5}  {_fit(b.agent, 12):<12}  {_fit(b.task_id, 16):<16}  {b.repeat:>2}  "
                     f"{b.outcome:<12}  {comp}  {pen}  {num(b.cis, 4):>6}")
    lines.append("R A T L: component scores; red: share taken off (× (1 − red)); int, beh: penalty multipliers")
    return lines


def _findings_lines(report: CampaignReport) -> list[str]:
    present = [s for s, n in report.findings_by_severity.items() if n]
    summary = ", ".join(f"{s} {report.findings_by_severity[s]}" for s in present)
    lines = ["", f"Findings: {report.findings_total}" + (f" ({summary})" if summary else "")]
    for f in report.findings:
        lines.append(f"  {_fit(f.severity_label, 8):<8}  {_fit(f.family_label, 20):<20}  "
                     f"{_fit(f.finding.cwe or '—', 8):<8}  {_fit(f.agent, 12):<12}  {_fit(f.task_id, 16):<16}  "
                     f"{_fit(f.finding.reproducer, 28)}")
    return lines


def _failure_lines(report: CampaignReport) -> list[str]:
    lines = ["", f"Failures: {report.agent_failures} agent (stage purple, counted as CIS 0), "
                 f"{report.infra_failures} infrastructure (excluded)"]
    for g in report.failures:
        kind = "agent" if g.kind == "agent" else "infra"
        lines.append(f"  {g.count:>4}×  {kind:<5}  {printable(g.stage)}: {printable(g.reason) or '(no reason)'}")
    return lines


def _cancelled_lines(report: CampaignReport) -> list[str]:
    if not report.cancelled:
        return []
    lines = ["", f"Cancelled: {report.cancelled} (neither agent nor infrastructure failures; excluded)"]
    lines.extend(f"  {g.count:>4}×  in stage {printable(g.stage)}" for g in report.cancellations)
    return lines


def _list_lines(title: str, items: Sequence[str], limit: int = 10) -> list[str]:
    lines = ["", title]
    lines.extend(f"  {printable(item)}" for item in items[:limit])
    if len(items) > limit:
        lines.append(f"  … and {len(items) - limit} more")
    return lines


def render_table(report: CampaignReport) -> str:
    """The report as plain text without a final newline (failure reasons print in full)."""
    lines = _summary_lines(report) + _leaderboard_lines(report) + _comparison_lines(report) + _cell_lines(report)
    lines += _battle_lines(report) + _findings_lines(report) + _failure_lines(report) + _cancelled_lines(report)
    if report.missing:
        lines += _list_lines(f"Missing: {len(report.missing)} of {report.planned} planned battles are not in the "
                             "ledger", report.missing)
        lines.append(f"  (to play them: logomesh campaign run --resume {printable(report.campaign_id)})")
    if report.retries:
        lines += _list_lines(f"Retried: {len(report.retries)} battles needed more than one attempt",
                             [f"{r.battle_id} ({r.attempts} attempts, {r.outcome})" for r in report.retries])
    return "\n".join(lines)
