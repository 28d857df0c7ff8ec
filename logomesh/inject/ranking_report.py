"""An injection campaign's ranking as JSON (``--json``) and as a table (the command's stdout).

Both are functions of the ranking alone: no clock, no port of a served kind (a kind's label is its name and
seed), so the same campaign seed and the same answers print the same bytes. Each run is named by its run id,
the ledger entry that holds it (``logomesh verify ledger`` checks them, ``logomesh replay <run>.qNNNN``
re-judges one query).
"""

from __future__ import annotations

import json
from typing import Any

from logomesh.campaign.report_text import interval_text, pct, printable
from logomesh.campaign.stats import Interval
from logomesh.inject.ranking import (
    NO_INTERVAL,
    WILSON_PER_TASK,
    FirstSuccess,
    Ranking,
    Standing,
    UtilityCount,
    first_success_query,
    unseparated,
)
from logomesh.plural import counted


def _interval(interval: Interval, method: str) -> dict[str, Any]:
    return {"low": interval.low, "high": interval.high, "n": interval.n, "method": method,
            "reason": interval.reason}


def _utility(count: UtilityCount) -> dict[str, int]:
    return {"intact": count.intact, "measured": count.measured, "unmeasured": count.unmeasured,
            "refused": count.refused}


def _first(first: FirstSuccess) -> dict[str, Any]:
    return {"median": first.median, "runs_with_success": first.with_success, "runs": first.runs}


def standing_json(s: Standing) -> dict[str, Any]:
    return {
        "rank": s.rank,
        "agent": s.agent,
        "label": s.label,
        "success_rate": s.success_rate,
        "interval": _interval(s.interval, s.method),
        "not_separable_from": list(s.not_separable_from),
        "objectives_reached": s.reached,
        "objectives_tried": s.tried,
        "runs": s.runs,
        "queries": s.queries,
        "no_answer": s.no_answer,
        "queries_to_first_success": _first(s.first_success),
        "utility_under_attack": _utility(s.under_attack),
        "benign_utility": _utility(s.benign),
        "tasks": [{"task_id": t.task_id, "success_rate": t.rate, "objectives_reached": t.reached,
                   "objectives_tried": t.tried, "run_ids": list(t.run_ids)} for t in s.tasks],
    }


def ranking_json(ranking: Ranking) -> dict[str, Any]:
    campaign = ranking.campaign
    return {
        "campaign": {
            "agents": [{"name": a.name, "label": a.target.label} for a in campaign.agents],
            "task_ids": list(campaign.task_ids),
            "objectives": list(campaign.objectives),
            "budget": campaign.budget,
            "seeds": list(campaign.run_seeds),
            "search": campaign.search,
            "utility": campaign.utility,
        },
        "ranking": [standing_json(s) for s in ranking.standings],
        "pairs": [{"more_resistant": p.first, "less_resistant": p.second, "separable": p.separable}
                  for p in ranking.pairs],
        "runs": [{"run_id": r.outcome.run_id, "agent": r.agent, "task_id": r.outcome.request.task_id,
                  "seed": r.outcome.request.seed, "queries": r.outcome.queries,
                  "reached": [o.objective for o in r.outcome.objectives if o.reached],
                  "first_success_query": first_success_query(r.outcome)} for r in ranking.runs],
    }


def dumps(ranking: Ranking) -> str:
    return json.dumps(ranking_json(ranking), indent=2, sort_keys=True, ensure_ascii=False)


def _median(first: FirstSuccess) -> str:
    if first.median is None:
        return f"— (0/{first.runs} runs)"
    return f"{first.median:g} ({first.with_success}/{first.runs} runs)"


def _count(count: UtilityCount) -> str:
    if not count.measured:
        return "—"
    return f"{count.intact}/{count.measured}"


def ranking_text(ranking: Ranking) -> str:
    """The ranking table, a line per pair not separable, and what the marks mean."""
    campaign = ranking.campaign
    width = max(5, min(24, max(len(printable(s.agent)) for s in ranking.standings)))
    lines = [
        f"Injection campaign: {counted(len(campaign.agents), 'agent')} x {counted(len(campaign.task_ids), 'task')}"
        f" x {counted(campaign.seeds, 'seed')} ({', '.join(map(str, campaign.run_seeds))}), "
        f"{campaign.search} search, budget {counted(campaign.budget, 'query', 'queries')} a run, "
        f"objectives {', '.join(campaign.objectives)}",
        "",
        "Ranking by resistance: attack success rate (objectives reached / tried, mean over tasks), lower is more "
        "resistant;",
        "95% CI with the task as the unit (* one trial per task: every task at the same rate 0 or 1).",
        f"{'#':>3}  {'agent':<{width}}  {'success':>7}  {'95% CI':<15}  {'reached':>9}  {'queries':>7}  "
        f"{'1st success (median)':<20}  {'utility attacked':>16}  {'benign':>6}",
    ]
    for s in ranking.standings:
        mark = "*" if s.method == WILSON_PER_TASK else " "
        lines.append(
            f"{s.rank:>3}  {printable(s.agent)[:width]:<{width}}  {pct(s.success_rate):>7}  "
            f"{interval_text(s.interval, 2) + mark:<15}  {f'{s.reached}/{s.tried}':>9}  {s.queries:>7}  "
            f"{_median(s.first_success):<20}  {_count(s.under_attack):>16}  {_count(s.benign):>6}")
    notes = [f"  {printable(s.agent)}: no interval: {s.interval.reason}" for s in ranking.standings
             if s.method == NO_INTERVAL]
    notes += [f"  {printable(s.agent)}: false refusals: gave no code for {s.benign.refused} of "
              f"{s.benign.measured + s.benign.unmeasured} clean tasks" for s in ranking.standings if s.benign.refused]
    notes += [f"  {printable(s.agent)}: {counted(s.no_answer, 'query', 'queries')} of {s.queries} got no answer "
              "(counted as not reached)" for s in ranking.standings if s.no_answer]
    overlaps = unseparated(ranking)
    if overlaps:
        notes += [f"  not separable: {printable(p.first)} and {printable(p.second)} (their intervals overlap)"
                  for p in overlaps]
    elif len(ranking.standings) > 1:
        notes.append("  every pair of agents is separable (no two intervals overlap)")
    return "\n".join(lines + notes)
