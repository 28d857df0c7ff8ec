"""A campaign report as JSON-safe data: deterministic order, floats rounded to 4 decimals, ``null`` where undefined.

This is the form ``logomesh verify report`` recomputes and compares, and the
form the HTML report embeds.
"""

from __future__ import annotations

from typing import Any

from logomesh.campaign.model import (
    POLICY,
    BattleFinding,
    BattleSummary,
    CampaignReport,
    Cell,
    Comparison,
    LeaderRow,
    Provenance,
)
from logomesh.campaign.stats import BOOTSTRAP_RESAMPLES, MIN_PAIRED_TASKS, Interval

REPORT_FORMAT = "logomesh-campaign-report/2"


def r4(value: float | None) -> float | None:
    """Round to 4 decimals; ``-0.0`` becomes ``0.0`` so equal reports serialise to equal bytes."""
    return None if value is None else round(value, 4) + 0.0


def interval_json(interval: Interval) -> dict[str, Any]:
    return {"low": r4(interval.low), "high": r4(interval.high), "n": interval.n, "reason": interval.reason}


def _cell_json(cell: Cell) -> dict[str, Any]:
    return {
        "agent": cell.agent, "task_id": cell.task_id, "planned": cell.planned, "recorded": cell.recorded,
        "scored": cell.scored, "agent_failed": cell.agent_failed, "infra_failed": cell.infra_failed,
        "cancelled": cell.cancelled, "counted": cell.counted, "mean_cis": r4(cell.mean_cis),
        "cis_min": r4(cell.cis_min), "cis_max": r4(cell.cis_max), "hidden_passed": cell.hidden_passed,
        "hidden_total": cell.hidden_total, "pass_rate": r4(cell.pass_rate),
        "pass_rate_ci": interval_json(cell.pass_interval), "solved": cell.solved,
        "scored_share": r4(cell.scored_share), "findings": cell.findings,
    }


def _battle_json(b: BattleSummary) -> dict[str, Any]:
    return {
        "battle_id": b.battle_id, "agent": b.agent, "task_id": b.task_id, "repeat": b.repeat,
        "outcome": b.outcome, "cis": r4(b.cis), "attempts": b.attempts, "findings": b.findings,
        "stage": b.stage, "reason": b.reason, "sequence": b.sequence, "seed": b.seed,
        "components": {k: r4(v) for k, v in b.components.items()},
        "penalties": {k: r4(v) for k, v in b.penalties.items()},
        "hidden_passed": b.hidden_passed, "hidden_total": b.hidden_total,
    }


def _leader_json(row: LeaderRow) -> dict[str, Any]:
    pass_k = None if row.pass_k is None else {
        "k": row.pass_k.k, "tasks": row.pass_k.tasks, "pass_at_k": r4(row.pass_k.pass_at_k),
        "pass_hat_k": r4(row.pass_k.pass_hat_k)}
    return {
        "rank": row.rank, "tied": row.tied, "agent": row.agent, "mean_cis": r4(row.mean_cis),
        "ci": interval_json(row.interval), "tasks": row.tasks, "battles": row.battles, "scored": row.scored,
        "failed": row.failed, "cancelled": row.cancelled, "solved_tasks": row.solved_tasks,
        "solved_ci": interval_json(row.solved_interval), "pass_k": pass_k,
    }


def _comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "first": c.first, "second": c.second, "shared_tasks": c.shared_tasks,
        "mean_difference": r4(c.mean_difference), "ci": interval_json(c.interval), "verdict": c.verdict,
        "solved_first_only": c.first_only, "solved_second_only": c.second_only,
        "mcnemar_p": r4(c.mcnemar_p),
    }


def _finding_json(f: BattleFinding) -> dict[str, Any]:
    return {"battle_id": f.battle_id, "agent": f.agent, "task_id": f.task_id, "family": f.family_label,
            "severity": f.severity_label, "cwe": f.finding.cwe, "summary": f.finding.summary,
            "reproducer": f.finding.reproducer}


def provenance_json(p: Provenance | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "logomesh_version": p.logomesh_version, "campaign_seed": p.campaign_seed, "red_enabled": p.red_enabled,
        "red_budget_s": p.red_budget_s, "sandbox": p.sandbox, "scoring_config_sha256": list(p.scoring_config_sha256),
        "task_library_sha256": p.task_library_sha256, "task_inputs": dict(p.task_inputs),
        "checkpoint": {"tree_size": p.checkpoint_size, "root": p.checkpoint_root, "note": p.checkpoint_note,
                       "timestamp": p.checkpoint_time},
    }


DEFINITIONS = {
    "policy": POLICY,
    "mean_cis": "mean over tasks of the agent's mean CIS per task (counted battles: scored + purple-stage failures "
                "as 0); 95% Student t interval on the task means (the task is the unit, repeats are a cluster; "
                "equals the CR1 cluster-robust interval with equal repeats), clipped to [0, 1]; refused below 2 "
                "tasks or when every task has the same mean",
    "comparisons": f"first minus second: mean over shared tasks of the difference of task means, 95% percentile "
                   f"paired bootstrap over tasks ({BOOTSTRAP_RESAMPLES} resamples, seeded by the campaign seed and "
                   f"the agents' names), refused below {MIN_PAIRED_TASKS} shared tasks; verdict 'tie' when the "
                   "interval contains 0 or is refused; exact McNemar p on the shared tasks each agent solved",
    "rank": "1 + the number of agents whose comparison excludes 0 in their favour; equal ranks are ties",
    "solved": "a task is solved when every counted repeat passed every hidden test; solved_ci is a Wilson interval "
              "over tasks; pass_at_k / pass_hat_k (k = repeats) are the unbiased estimators over tasks with k "
              "counted repeats",
    "pass_rate": "hidden tests passed / hidden tests run, summed over the cell's scored battles; Wilson interval",
    "cancelled": "battles stopped by a cancel: neither agent nor infrastructure failures, excluded from means",
    "scored_share": "scored battles / recorded battles",
    "findings": "entries of red_analysis.vulnerabilities over recorded battles",
    "provenance": "the signed checkpoint the report was computed from; 'logomesh verify report FILE' recomputes "
                  "every number from the ledger entries under it",
}


def report_json(report: CampaignReport) -> dict[str, Any]:
    """The report as JSON-safe data."""
    return {
        "format": REPORT_FORMAT,
        "campaign_id": report.campaign_id,
        "provenance": provenance_json(report.provenance),
        "agents": list(report.agents),
        "task_ids": list(report.task_ids),
        "repeat": report.repeat,
        "planned": report.planned,
        "recorded": report.recorded,
        "missing": {"count": len(report.missing), "battle_ids": list(report.missing)},
        "retries": {"count": len(report.retries),
                    "battles": [{"battle_id": r.battle_id, "attempts": r.attempts, "outcome": r.outcome}
                                for r in report.retries]},
        "leaderboard": [_leader_json(row) for row in report.leaderboard],
        "unranked": list(report.unranked),
        "comparisons": [_comparison_json(c) for c in report.comparisons],
        "cells": [_cell_json(cell) for cell in report.cells],
        "findings": {
            "total": report.findings_total,
            "by_severity": dict(report.findings_by_severity),
            "by_family": [{"family": f.family, "total": f.total, "by_severity": dict(f.by_severity)}
                          for f in report.findings_by_family],
            "list": [_finding_json(f) for f in report.findings],
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
