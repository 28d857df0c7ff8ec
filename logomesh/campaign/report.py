"""A campaign's report: per agent and task, a leaderboard, findings, failures, gaps and retries.

Which battles count
-------------------
Every recorded battle of the plan gets one of four outcomes:

* **scored** (``status`` is not ``"failed"``): its ``cis_score`` counts.
* **agent failure** (failed at stage ``purple``): the agent did not deliver a
  submission, so the battle counts as **CIS 0** for its agent.
* **infrastructure failure** (failed at any other stage: ``sandbox``,
  ``engine``, ``ledger``, anything else, or a result without a finite numeric
  ``cis_score``): the agent is not to blame, so the battle is **excluded** from
  every mean and rate and listed separately. A battle whose worker was lost
  too often is recorded as an ``engine`` failure and lands here.
* **cancelled** (``status`` is ``"cancelled"``, with the ``stage`` it was
  stopped in): someone stopped it; neither the agent nor the infrastructure
  failed. Excluded from every mean and rate and counted in a column of its own.

What the numbers mean
---------------------
* **mean CIS, 95% CI**: the mean over the *counted* battles (scored + agent
  failures) with a two-sided Student t interval clipped to [0, 1]
  (``stats.bounded_mean_ci95`` says why that is sound). Per cell it runs over
  the repeats of one (agent, task); on the leaderboard over every counted
  battle of the agent, all tasks pooled. Below three counted battles there is
  no interval (``None``, shown as ``n/a``).
* **pass rate**: hidden tests passed / hidden tests run, both summed over the
  cell's *scored* battles (failed battles ran no tests and add nothing).
* **scored share**: scored battles / recorded battles of the cell.
* **leaderboard**: agents by mean CIS, highest first, ties broken by agent
  name; ``failed`` counts agent and infrastructure failures, so
  ``battles == scored + failed + cancelled``. Agents without a counted battle
  are not ranked (``unranked``).
* **findings**: every entry of ``red_analysis.vulnerabilities`` of the
  recorded battles, by severity and by family.
* **failures**: failed battles grouped by (stage, reason), each marked as
  ``agent`` or ``infrastructure``; cancelled battles are grouped apart, by stage.
* **missing**: battles the plan holds but the ledger does not (an interrupted
  campaign); **retries**: battles recorded after more than one attempt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from logomesh.campaign.plan import BattleJob, CampaignPlan
from logomesh.campaign.stats import bounded_mean_ci95
from logomesh.findings import SEVERITY_ORDER

Outcome = Literal["scored", "agent_failed", "infra_failed", "cancelled"]
FailureKind = Literal["agent", "infrastructure"]
AGENT_STAGE = "purple"
CANCELLED = "cancelled"
UNKNOWN = "unknown"
SEVERITIES: tuple[str, ...] = tuple(reversed(SEVERITY_ORDER))
"""Severities worst first: the order every report lists them in."""

POLICY = (
    "A battle failed at stage 'purple' counts as CIS 0 for its agent; battles failed at any other "
    "(infrastructure) stage are excluded from means and rates and listed separately; so are cancelled battles, "
    "counted apart."
)


@dataclass(frozen=True)
class BattleRow:
    """One recorded battle of the plan: its job's coordinates and the ledger's result."""

    battle_id: str
    agent: str
    task_id: str
    repeat: int
    result: dict[str, Any]
    attempts: int = 1


@dataclass(frozen=True)
class BattleSummary:
    """How the report reads one battle."""

    battle_id: str
    agent: str
    task_id: str
    repeat: int
    outcome: Outcome
    cis: float | None
    attempts: int
    findings: int
    stage: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Cell:
    """One (agent, task): its repeats summarised."""

    agent: str
    task_id: str
    planned: int
    recorded: int
    scored: int
    agent_failed: int
    infra_failed: int
    cancelled: int
    mean_cis: float | None
    ci_low: float | None
    ci_high: float | None
    hidden_passed: int
    hidden_total: int
    findings: int

    @property
    def counted(self) -> int:
        return self.scored + self.agent_failed

    @property
    def pass_rate(self) -> float | None:
        return self.hidden_passed / self.hidden_total if self.hidden_total else None

    @property
    def scored_share(self) -> float | None:
        return self.scored / self.recorded if self.recorded else None


@dataclass(frozen=True)
class LeaderRow:
    """One ranked agent; ``battles == scored + failed + cancelled`` (failed = agent and infrastructure failures).

    ``ci_low`` and ``ci_high`` are ``None`` below three counted battles.
    """

    rank: int
    agent: str
    mean_cis: float
    ci_low: float | None
    ci_high: float | None
    battles: int
    scored: int
    failed: int
    cancelled: int = 0


@dataclass(frozen=True)
class FamilyFindings:
    family: str
    total: int
    by_severity: dict[str, int]


@dataclass(frozen=True)
class FailureGroup:
    kind: FailureKind
    stage: str
    reason: str
    count: int
    battle_ids: list[str]


@dataclass(frozen=True)
class CancelledGroup:
    stage: str
    count: int
    battle_ids: list[str]


@dataclass(frozen=True)
class Retry:
    battle_id: str
    attempts: int
    outcome: Outcome


@dataclass(frozen=True)
class CampaignReport:
    campaign_id: str
    agents: list[str]
    task_ids: list[str]
    repeat: int
    planned: int
    recorded: int
    missing: list[str]
    battles: list[BattleSummary]
    cells: list[Cell]
    leaderboard: list[LeaderRow]
    unranked: list[str]
    findings_by_severity: dict[str, int]
    findings_by_family: list[FamilyFindings]
    failures: list[FailureGroup]
    cancellations: list[CancelledGroup]
    retries: list[Retry]

    @property
    def findings_total(self) -> int:
        return sum(self.findings_by_severity.values())

    @property
    def agent_failures(self) -> int:
        return sum(1 for b in self.battles if b.outcome == "agent_failed")

    @property
    def infra_failures(self) -> int:
        return sum(1 for b in self.battles if b.outcome == "infra_failed")

    @property
    def cancelled(self) -> int:
        return sum(1 for b in self.battles if b.outcome == "cancelled")


# ---------------------------------------------------------------- reading the ledger


def _attempts(attributes: object) -> int:
    raw = attributes.get("attempts") if isinstance(attributes, Mapping) else None
    try:
        return max(1, int(str(raw))) if raw is not None else 1
    except ValueError:
        return 1


def rows_from_ledger(plan: CampaignPlan, raw: Sequence[Mapping[str, Any]]) -> list[BattleRow]:
    """The plan's recorded battles, in plan order; ledger rows the plan does not hold are ignored.

    ``raw`` are ``runner.campaign_battles`` rows. Should a battle id appear twice,
    the first row wins (the ledger never replaces an entry).
    """
    by_id: dict[str, Mapping[str, Any]] = {}
    for row in raw:
        by_id.setdefault(str(row.get("battle_id")), row)
    rows: list[BattleRow] = []
    for job in plan.jobs():
        found = by_id.get(job.battle_id)
        if found is None:
            continue
        result = found.get("result")
        rows.append(
            BattleRow(
                battle_id=job.battle_id,
                agent=job.agent.name,
                task_id=job.task_id,
                repeat=job.repeat,
                result=dict(result) if isinstance(result, Mapping) else {},
                attempts=_attempts(found.get("attributes")),
            )
        )
    return rows


# ---------------------------------------------------------------- reading one result


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _label(value: object) -> str:
    return value if isinstance(value, str) and value else UNKNOWN


def _vulnerabilities(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    analysis = result.get("red_analysis")
    found = analysis.get("vulnerabilities") if isinstance(analysis, Mapping) else None
    if not isinstance(found, list):
        return []
    return [v if isinstance(v, Mapping) else {} for v in found]


def _hidden(result: Mapping[str, Any]) -> tuple[int, int]:
    tests = result.get("tests")
    hidden = tests.get("hidden") if isinstance(tests, Mapping) else None
    if not isinstance(hidden, Mapping):
        return 0, 0
    return _count(hidden.get("passed")), _count(hidden.get("total"))


def summarise(row: BattleRow) -> BattleSummary:
    """Classify one battle by the policy in the module docstring."""
    result = row.result
    outcome: Outcome = "scored"
    cis = _finite(result.get("cis_score"))
    stage: str | None = None
    reason: str | None = None
    if result.get("status") == CANCELLED:
        stage = _label(result.get("stage", result.get("failed_stage")))
        outcome, cis, reason = "cancelled", None, str(result.get("reason") or "")
    elif result.get("status") == "failed":
        stage, reason = _label(result.get("failed_stage")), str(result.get("reason") or "")
        outcome, cis = ("agent_failed", 0.0) if stage == AGENT_STAGE else ("infra_failed", None)
    elif cis is None:
        outcome, stage, reason = "infra_failed", "report", "the recorded result has no finite numeric cis_score"
    return BattleSummary(battle_id=row.battle_id, agent=row.agent, task_id=row.task_id, repeat=row.repeat,
                         outcome=outcome, cis=cis, attempts=row.attempts, findings=len(_vulnerabilities(result)),
                         stage=stage, reason=reason)


# ---------------------------------------------------------------- aggregation


def _interval(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    return bounded_mean_ci95(values)


def _cell(agent: str, task_id: str, planned: int, battles: Sequence[BattleSummary],
          rows: Mapping[str, BattleRow]) -> Cell:
    values = [b.cis for b in battles if b.cis is not None]
    passed = total = 0
    for b in battles:
        if b.outcome == "scored":
            p, t = _hidden(rows[b.battle_id].result)
            passed, total = passed + p, total + t
    mean, low, high = _interval(values)
    return Cell(
        agent=agent, task_id=task_id, planned=planned, recorded=len(battles),
        scored=sum(1 for b in battles if b.outcome == "scored"),
        agent_failed=sum(1 for b in battles if b.outcome == "agent_failed"),
        infra_failed=sum(1 for b in battles if b.outcome == "infra_failed"),
        cancelled=sum(1 for b in battles if b.outcome == "cancelled"),
        mean_cis=mean, ci_low=low, ci_high=high, hidden_passed=passed, hidden_total=total,
        findings=sum(b.findings for b in battles),
    )


def _leaderboard(agents: Sequence[str], battles: Sequence[BattleSummary]) -> tuple[list[LeaderRow], list[str]]:
    scored: list[tuple[float, str, float | None, float | None, int, int, int]] = []
    unranked: list[str] = []
    for agent in agents:
        mine = [b for b in battles if b.agent == agent]
        values = [b.cis for b in mine if b.cis is not None]
        if not values:
            unranked.append(agent)
            continue
        mean, low, high = bounded_mean_ci95(values)
        n_scored = sum(1 for b in mine if b.outcome == "scored")
        n_cancelled = sum(1 for b in mine if b.outcome == "cancelled")
        scored.append((mean, agent, low, high, len(mine), n_scored, n_cancelled))
    scored.sort(key=lambda item: (-round(item[0], 12), item[1]))
    board = [
        LeaderRow(rank=i, agent=agent, mean_cis=mean, ci_low=low, ci_high=high, battles=n, scored=s,
                  failed=n - s - c, cancelled=c)
        for i, (mean, agent, low, high, n, s, c) in enumerate(scored, start=1)
    ]
    return board, unranked


def _severity_order(names: set[str]) -> list[str]:
    return [s for s in SEVERITIES if s in names] + sorted(names.difference(SEVERITIES))


def _findings(rows: Sequence[BattleRow]) -> tuple[dict[str, int], list[FamilyFindings]]:
    by_family: dict[str, dict[str, int]] = {}
    for row in rows:
        for vuln in _vulnerabilities(row.result):
            counts = by_family.setdefault(_label(vuln.get("family")), {})
            severity = _label(vuln.get("severity"))
            counts[severity] = counts.get(severity, 0) + 1
    seen = {s for counts in by_family.values() for s in counts}
    order = _severity_order(seen | set(SEVERITIES))
    by_severity = {s: sum(c.get(s, 0) for c in by_family.values()) for s in order}
    families = [
        FamilyFindings(family, sum(counts.values()), {s: counts[s] for s in order if s in counts})
        for family, counts in by_family.items()
    ]
    families.sort(key=lambda f: (-f.total, f.family))
    return by_severity, families


def _failures(battles: Sequence[BattleSummary]) -> list[FailureGroup]:
    groups: dict[tuple[str, str], list[str]] = {}
    for b in battles:
        if b.outcome in ("agent_failed", "infra_failed"):
            groups.setdefault((b.stage or UNKNOWN, b.reason or ""), []).append(b.battle_id)
    out = [
        FailureGroup("agent" if stage == AGENT_STAGE else "infrastructure", stage, reason, len(ids), ids)
        for (stage, reason), ids in groups.items()
    ]
    out.sort(key=lambda g: (g.kind != "agent", -g.count, g.stage, g.reason))
    return out


def _cancellations(battles: Sequence[BattleSummary]) -> list[CancelledGroup]:
    by_stage: dict[str, list[str]] = {}
    for b in battles:
        if b.outcome == "cancelled":
            by_stage.setdefault(b.stage or UNKNOWN, []).append(b.battle_id)
    return sorted((CancelledGroup(stage, len(ids), ids) for stage, ids in by_stage.items()),
                  key=lambda g: (-g.count, g.stage))


def build_report(plan: CampaignPlan, rows: Sequence[BattleRow]) -> CampaignReport:
    """Summarise ``rows`` against ``plan``; rows whose battle id the plan lacks are ignored."""
    jobs: list[BattleJob] = plan.jobs()
    by_id: dict[str, BattleRow] = {}
    for row in rows:
        by_id.setdefault(row.battle_id, row)
    recorded_rows = [by_id[job.battle_id] for job in jobs if job.battle_id in by_id]
    recorded = {row.battle_id: row for row in recorded_rows}
    battles = [summarise(row) for row in recorded_rows]
    agents = [agent.name for agent in plan.agents]
    cells = [
        _cell(agent, task_id, plan.repeat, [b for b in battles if b.agent == agent and b.task_id == task_id],
              recorded)
        for agent in agents
        for task_id in plan.task_ids
    ]
    leaderboard, unranked = _leaderboard(agents, battles)
    by_severity, by_family = _findings(recorded_rows)
    return CampaignReport(
        campaign_id=plan.campaign_id,
        agents=agents,
        task_ids=list(plan.task_ids),
        repeat=plan.repeat,
        planned=len(jobs),
        recorded=len(recorded_rows),
        missing=[job.battle_id for job in jobs if job.battle_id not in recorded],
        battles=battles,
        cells=cells,
        leaderboard=leaderboard,
        unranked=unranked,
        findings_by_severity=by_severity,
        findings_by_family=by_family,
        failures=_failures(battles),
        cancellations=_cancellations(battles),
        retries=[Retry(b.battle_id, b.attempts, b.outcome) for b in battles if b.attempts > 1],
    )


# ---------------------------------------------------------------- JSON


def _r(value: float | None) -> float | None:
    """Round to 4 decimals; ``-0.0`` becomes ``0.0`` so equal reports serialise to equal bytes."""
    return None if value is None else round(value, 4) + 0.0


def _cell_json(cell: Cell) -> dict[str, Any]:
    return {
        "agent": cell.agent, "task_id": cell.task_id, "planned": cell.planned, "recorded": cell.recorded,
        "scored": cell.scored, "agent_failed": cell.agent_failed, "infra_failed": cell.infra_failed,
        "cancelled": cell.cancelled, "counted": cell.counted, "mean_cis": _r(cell.mean_cis), "ci_low": _r(cell.ci_low),
        "ci_high": _r(cell.ci_high), "hidden_passed": cell.hidden_passed, "hidden_total": cell.hidden_total,
        "pass_rate": _r(cell.pass_rate), "scored_share": _r(cell.scored_share), "findings": cell.findings,
    }


def _battle_json(b: BattleSummary) -> dict[str, Any]:
    return {
        "battle_id": b.battle_id, "agent": b.agent, "task_id": b.task_id, "repeat": b.repeat,
        "outcome": b.outcome, "cis": _r(b.cis), "attempts": b.attempts, "findings": b.findings,
        "stage": b.stage, "reason": b.reason,
    }


DEFINITIONS = {
    "policy": POLICY,
    "mean_cis": "mean CIS over counted battles (scored + purple-stage failures as 0); 95% Student t interval "
                "clipped to [0, 1], null below 3 counted battles",
    "leaderboard": "agents by mean CIS over all their counted battles, ties by name; failed = agent + infrastructure; "
                   "battles = scored + failed + cancelled",
    "cancelled": "battles stopped by a cancel, by the stage they were in: neither agent nor infrastructure failures, "
                 "excluded from means and rates",
    "pass_rate": "hidden tests passed / hidden tests run, summed over the cell's scored battles",
    "scored_share": "scored battles / recorded battles",
    "findings": "entries of red_analysis.vulnerabilities over recorded battles",
}


def report_json(report: CampaignReport) -> dict[str, Any]:
    """The report as JSON-safe data: deterministic order, floats rounded to 4 decimals, ``None`` where undefined."""
    return {
        "campaign_id": report.campaign_id,
        "agents": list(report.agents),
        "task_ids": list(report.task_ids),
        "repeat": report.repeat,
        "planned": report.planned,
        "recorded": report.recorded,
        "missing": {"count": len(report.missing), "battle_ids": list(report.missing)},
        "retries": {"count": len(report.retries),
                    "battles": [{"battle_id": r.battle_id, "attempts": r.attempts, "outcome": r.outcome}
                                for r in report.retries]},
        "leaderboard": [
            {"rank": row.rank, "agent": row.agent, "mean_cis": _r(row.mean_cis), "ci_low": _r(row.ci_low),
             "ci_high": _r(row.ci_high), "battles": row.battles, "scored": row.scored, "failed": row.failed,
             "cancelled": row.cancelled}
            for row in report.leaderboard
        ],
        "unranked": list(report.unranked),
        "cells": [_cell_json(cell) for cell in report.cells],
        "findings": {
            "total": report.findings_total,
            "by_severity": dict(report.findings_by_severity),
            "by_family": [{"family": f.family, "total": f.total, "by_severity": dict(f.by_severity)}
                          for f in report.findings_by_family],
        },
        "failures": {
            "agent": report.agent_failures,
            "infrastructure": report.infra_failures,
            "groups": [{"kind": g.kind, "stage": g.stage, "reason": g.reason, "count": g.count,
                        "battle_ids": list(g.battle_ids)} for g in report.failures],
        },
        "cancelled": {
            "count": report.cancelled,
            "groups": [{"stage": g.stage, "count": g.count, "battle_ids": list(g.battle_ids)}
                       for g in report.cancellations],
        },
        "battles": [_battle_json(b) for b in report.battles],
        "definitions": dict(DEFINITIONS),
    }


# ---------------------------------------------------------------- plain text


def printable(text: str) -> str:
    """``text`` with control characters escaped, so untrusted reasons cannot drive a terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _fit(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


NO_INTERVAL = "n/a"
"""Shown for a 95% interval over fewer than three counted battles."""


def ci_text(low: float | None, high: float | None, digits: int) -> str:
    """``[low, high]``, or ``n/a`` where there is no interval."""
    return NO_INTERVAL if low is None or high is None else f"[{low:.{digits}f}, {high:.{digits}f}]"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _width(names: Sequence[str], floor: int, cap: int) -> int:
    return max(floor, min(cap, max((len(printable(n)) for n in names), default=floor)))


def _summary_lines(report: CampaignReport) -> list[str]:
    lines = [
        f"Campaign {printable(report.campaign_id)}: {report.recorded}/{report.planned} battles recorded, "
        f"{len(report.missing)} missing, {len(report.retries)} retried",
        f"{len(report.agents)} agents × {len(report.task_ids)} tasks × {report.repeat} repeats. "
        "Failed at stage 'purple' = CIS 0;",
        "other failed stages are infrastructure failures, excluded from means.",
    ]
    return lines


def _leaderboard_lines(report: CampaignReport) -> list[str]:
    aw = _width([r.agent for r in report.leaderboard], 5, 19)
    lines = ["", "Leaderboard (mean CIS over all counted battles, 95% CI)",
             f"{'#':>3}  {'agent':<{aw}}  {'mean':>6}  {'95% CI':<16}  {'battles':>7}  {'scored':>6}  {'failed':>6}"
             f"  {'cxl':>3}"]
    for row in report.leaderboard:
        lines.append(f"{row.rank:>3}  {_fit(row.agent, aw):<{aw}}  {row.mean_cis:>6.4f}  "
                     f"{ci_text(row.ci_low, row.ci_high, 4):<16}  {row.battles:>7}  {row.scored:>6}  {row.failed:>6}  "
                     f"{row.cancelled:>3}")
    if not report.leaderboard:
        lines.append("  (no agent has a counted battle yet)")
    if report.unranked:
        lines.append("  unranked (no counted battle): " + ", ".join(printable(a) for a in report.unranked))
    return lines


def _cell_lines(report: CampaignReport) -> list[str]:
    aw = _width(report.agents, 5, 12)
    tw = _width(report.task_ids, 4, 15)
    lines = ["", "Per agent and task",
             f"{'agent':<{aw}}  {'task':<{tw}}  {'n':>2}  {'mean':>5}  {'95% CI':<14}  {'pass':>4}  "
             f"{'scored':>6}  {'fail':>5}  {'cxl':>3}"]
    for c in report.cells:
        fails = f"{c.agent_failed}/{c.infra_failed}"
        lines.append(f"{_fit(c.agent, aw):<{aw}}  {_fit(c.task_id, tw):<{tw}}  {c.counted:>2}  "
                     f"{_num(c.mean_cis, 3):>5}  {ci_text(c.ci_low, c.ci_high, 3):<14}  {_pct(c.pass_rate):>4}  "
                     f"{f'{c.scored}/{c.recorded}':>6}  {fails:>5}  {c.cancelled:>3}")
    lines += ["n = counted battles (scored + failed at stage purple, as 0); 95% CI n/a below 3;",
              "pass = hidden tests passed / run in scored battles; scored = scored / recorded;",
              "fail = failed at stage purple / infrastructure failures (excluded);",
              "cxl = cancelled (excluded)"]
    return lines


def _findings_lines(report: CampaignReport) -> list[str]:
    present = [s for s, n in report.findings_by_severity.items() if n]
    summary = ", ".join(f"{s} {report.findings_by_severity[s]}" for s in present)
    lines = ["", f"Findings: {report.findings_total}" + (f" ({summary})" if summary else "")]
    if not report.findings_by_family:
        return lines
    fw = _width([f.family for f in report.findings_by_family], 6, 24)
    lines.append(f"  {'family':<{fw}}  {'total':>5}" + "".join(f"  {_fit(s, 8):>8}" for s in present))
    for f in report.findings_by_family:
        lines.append(f"  {_fit(f.family, fw):<{fw}}  {f.total:>5}"
                     + "".join(f"  {f.by_severity.get(s, 0):>8}" for s in present))
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
    """The report as plain text without a final newline, about 80 columns wide (failure reasons print in full)."""
    lines = _summary_lines(report) + _leaderboard_lines(report) + _cell_lines(report)
    lines += _findings_lines(report) + _failure_lines(report) + _cancelled_lines(report)
    if report.missing:
        lines += _list_lines(f"Missing: {len(report.missing)} of {report.planned} planned battles are not in the "
                             "ledger", report.missing)
        lines.append(f"  (to play them: logomesh campaign run --resume {printable(report.campaign_id)})")
    if report.retries:
        lines += _list_lines(f"Retried: {len(report.retries)} battles needed more than one attempt",
                             [f"{r.battle_id} ({r.attempts} attempts, {r.outcome})" for r in report.retries])
    return "\n".join(lines)
