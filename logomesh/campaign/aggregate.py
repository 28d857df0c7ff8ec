"""Building a campaign report from its battles: cells, the leaderboard, paired comparisons, findings, failures.

What the numbers mean
---------------------
* **task mean**: the mean CIS of an agent's counted battles (scored + failed
  at stage purple, as 0) on one task; its repeats are one cluster.
* **mean CIS**: the mean over tasks of the agent's task means, with the 95%
  interval of ``stats.task_mean_interval`` (task = unit).
* **comparison**: for every pair of agents, the mean over shared tasks of the
  difference of their task means, with a seeded paired bootstrap interval over
  those tasks; and an exact McNemar test on which shared tasks each solved
  (every counted repeat passed every hidden test).
* **rank**: 1 + the number of agents whose comparison with this one excludes
  0 in their favour; agents with equal rank are tied. Rows are sorted by rank,
  then mean CIS, then name.
* **solved tasks**: tasks solved / tasks counted, with a Wilson interval;
  **pass@k / pass^k** (k = the plan's repeats) over tasks with k counted repeats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from logomesh.campaign.model import (
    AGENT_STAGE,
    SEVERITIES,
    UNKNOWN,
    BattleFinding,
    BattleRow,
    BattleSummary,
    CampaignReport,
    CancelledGroup,
    Cell,
    Comparison,
    FailureGroup,
    FamilyFindings,
    LeaderRow,
    PassAtK,
    Provenance,
    Retry,
)
from logomesh.campaign.plan import CampaignPlan
from logomesh.campaign.reading import findings_of, summarise
from logomesh.campaign.stats import (
    mcnemar_exact,
    paired_bootstrap,
    pass_at_k,
    pass_hat_k,
    stable_seed,
    task_mean_interval,
    wilson,
)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _cell(agent: str, task_id: str, planned: int, battles: Sequence[BattleSummary]) -> Cell:
    values = [b.cis for b in battles if b.cis is not None]
    passed = sum(b.hidden_passed for b in battles)
    total = sum(b.hidden_total for b in battles)
    return Cell(
        agent=agent, task_id=task_id, planned=planned, recorded=len(battles),
        scored=sum(1 for b in battles if b.outcome == "scored"),
        agent_failed=sum(1 for b in battles if b.outcome == "agent_failed"),
        infra_failed=sum(1 for b in battles if b.outcome == "infra_failed"),
        cancelled=sum(1 for b in battles if b.outcome == "cancelled"),
        mean_cis=_mean(values) if values else None, cis_min=min(values, default=None),
        cis_max=max(values, default=None), hidden_passed=passed, hidden_total=total,
        pass_interval=wilson(passed, total), findings=sum(b.findings for b in battles),
        solved=sum(1 for b in battles if b.passed),
    )


def _solved(cell: Cell) -> bool:
    return cell.counted > 0 and cell.solved == cell.counted


def _pass_k(cells: Sequence[Cell], k: int) -> PassAtK | None:
    usable = [c for c in cells if c.counted >= k]
    if k < 2 or not usable:
        return None
    return PassAtK(k=k, tasks=len(usable),
                   pass_at_k=_mean([pass_at_k(c.counted, c.solved, k) for c in usable]),
                   pass_hat_k=_mean([pass_hat_k(c.counted, c.solved, k) for c in usable]))


def _compare(first: str, second: str, cells: dict[tuple[str, str], Cell], task_ids: Sequence[str],
             seed: int) -> Comparison:
    shared = [t for t in task_ids if cells[first, t].mean_cis is not None and cells[second, t].mean_cis is not None]
    diffs = [(cells[first, t].mean_cis or 0.0) - (cells[second, t].mean_cis or 0.0) for t in shared]
    first_only = sum(1 for t in shared if _solved(cells[first, t]) and not _solved(cells[second, t]))
    second_only = sum(1 for t in shared if _solved(cells[second, t]) and not _solved(cells[first, t]))
    return Comparison(first=first, second=second, shared_tasks=len(shared),
                      mean_difference=_mean(diffs) if diffs else None,
                      interval=paired_bootstrap(diffs, stable_seed(seed, first, second)),
                      first_only=first_only, second_only=second_only,
                      mcnemar_p=mcnemar_exact(first_only, second_only))


def _leaderboard(plan: CampaignPlan, agents: Sequence[str], battles: Sequence[BattleSummary],
                 cells: dict[tuple[str, str], Cell]) -> tuple[list[LeaderRow], list[str], list[Comparison]]:
    means: dict[str, float] = {}
    for agent in agents:
        task_means = [c.mean_cis for t in plan.task_ids if (c := cells[agent, t]).mean_cis is not None]
        if task_means:
            means[agent] = _mean(task_means)
    order = sorted(means, key=lambda a: (-round(means[a], 12), a))
    comparisons = [_compare(a, b, cells, plan.task_ids, plan.seed)
                   for i, a in enumerate(order) for b in order[i + 1:]]
    beaten_by = {agent: 0 for agent in order}
    for comp in comparisons:
        verdict = comp.verdict
        if verdict == comp.first:
            beaten_by[comp.second] += 1
        elif verdict == comp.second:
            beaten_by[comp.first] += 1
    ranks = {agent: 1 + beaten_by[agent] for agent in order}
    rows: list[LeaderRow] = []
    for agent in order:
        mine = [b for b in battles if b.agent == agent]
        counted_cells = [cells[agent, t] for t in plan.task_ids if cells[agent, t].counted]
        task_means = [c.mean_cis or 0.0 for c in counted_cells]
        scored = sum(1 for b in mine if b.outcome == "scored")
        cancelled = sum(1 for b in mine if b.outcome == "cancelled")
        solved = sum(1 for c in counted_cells if _solved(c))
        rows.append(LeaderRow(
            rank=ranks[agent], agent=agent, mean_cis=means[agent], interval=task_mean_interval(task_means),
            tasks=len(counted_cells), battles=len(mine), scored=scored, failed=len(mine) - scored - cancelled,
            cancelled=cancelled, solved_tasks=solved, solved_interval=wilson(solved, len(counted_cells)),
            pass_k=_pass_k(counted_cells, plan.repeat),
            tied=sum(1 for r in ranks.values() if r == ranks[agent]) > 1,
        ))
    rows.sort(key=lambda r: (r.rank, -round(r.mean_cis, 12), r.agent))
    return rows, [a for a in agents if a not in means], comparisons


def _severity_order(names: set[str]) -> list[str]:
    return [s for s in SEVERITIES if s in names] + sorted(names.difference(SEVERITIES))


def _findings(findings: Sequence[BattleFinding]) -> tuple[dict[str, int], list[FamilyFindings]]:
    by_family: dict[str, dict[str, int]] = {}
    for finding in findings:
        counts = by_family.setdefault(finding.family_label, {})
        counts[finding.severity_label] = counts.get(finding.severity_label, 0) + 1
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


def build_report(plan: CampaignPlan, rows: Sequence[BattleRow], provenance: Provenance | None = None) -> CampaignReport:
    """Summarise ``rows`` against ``plan``; rows whose battle id the plan lacks are ignored."""
    jobs = plan.jobs()
    by_id: dict[str, BattleRow] = {}
    for row in rows:
        by_id.setdefault(row.battle_id, row)
    recorded_rows = [by_id[job.battle_id] for job in jobs if job.battle_id in by_id]
    battles = [summarise(row) for row in recorded_rows]
    agents = [agent.name for agent in plan.agents]
    cells = {
        (agent, task_id): _cell(agent, task_id, plan.repeat,
                                [b for b in battles if b.agent == agent and b.task_id == task_id])
        for agent in agents for task_id in plan.task_ids
    }
    leaderboard, unranked, comparisons = _leaderboard(plan, agents, battles, cells)
    findings = [f for row in recorded_rows for f in findings_of(row)]
    by_severity, by_family = _findings(findings)
    rank = {row.agent: i for i, row in enumerate(leaderboard)}
    task_order = sorted(plan.task_ids, key=lambda t: (
        -max((c.mean_cis for a in agents if (c := cells[a, t]).mean_cis is not None), default=-1.0), t))
    ordered_cells = [cells[a, t] for t in task_order
                     for a in sorted(agents, key=lambda a: (rank.get(a, len(rank)), agents.index(a)))]
    return CampaignReport(
        campaign_id=plan.campaign_id,
        agents=agents,
        task_ids=list(plan.task_ids),
        repeat=plan.repeat,
        planned=len(jobs),
        recorded=len(recorded_rows),
        missing=[job.battle_id for job in jobs if job.battle_id not in by_id],
        battles=battles,
        cells=ordered_cells,
        leaderboard=leaderboard,
        unranked=unranked,
        comparisons=comparisons,
        findings=findings,
        findings_by_severity=by_severity,
        findings_by_family=by_family,
        failures=_failures(battles),
        cancellations=_cancellations(battles),
        retries=[Retry(b.battle_id, b.attempts, b.outcome) for b in battles if b.attempts > 1],
        provenance=provenance,
    )
