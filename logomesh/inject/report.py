"""An injection run's outcome as JSON (the ledger's run entry, ``--json``) and as text (the command's stdout).

Both are functions of the outcome alone: no clock, no URL of a served kind, so the same seed and the same
answers print the same bytes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from logomesh.inject.attempts import AttemptRecord
    from logomesh.inject.run import InjectOutcome, InjectRequest, ObjectiveOutcome, Utility


def _utility(utility: Utility | None) -> dict[str, Any] | None:
    if utility is None:
        return None
    return {"passed": utility.passed, "total": utility.total, "intact": utility.intact, "problem": utility.problem}


def objective_json(outcome: ObjectiveOutcome) -> dict[str, Any]:
    first = outcome.first
    return {
        "objective": outcome.objective,
        "reached": outcome.reached,
        "queries_to_first_success": first.query if first is not None else None,
        "path": list(first.path) if first is not None else None,
        "payload_sha256": first.payload_sha256 if first is not None else None,
        "severity": first.severity if first is not None else None,
        "evidence": first.evidence if first is not None else None,
        "utility_under_attack": _utility(outcome.utility),
    }


def run_json(outcome: InjectOutcome) -> dict[str, Any]:
    request = outcome.request
    return {
        "run_id": outcome.run_id,
        "task_id": request.task_id,
        "agent": request.target.label,
        "search": request.search,
        "seed": request.seed,
        "budget": request.budget,
        "queries": outcome.queries,
        "successes": sum(1 for record in outcome.records if record.met),
        "objectives": [objective_json(o) for o in outcome.objectives],
        "benign_utility": _utility(outcome.benign),
        "false_refusal": None if outcome.benign is None else outcome.benign.refused,
        **_attacker_json(outcome),
    }


def _attacker_json(outcome: InjectOutcome) -> dict[str, Any]:
    """The attacker model and every rewrite it gave, kept or pruned (nothing when the run had none)."""
    model = outcome.request.attacker
    if model is None:
        return {}
    return {"attacker": {"base_url": model.base_url, "model": model.model, "branches": model.branches,
                         "rewrites": outcome.rewrites or {}}}


def cancelled_json(run_id: str, request: InjectRequest, records: Sequence[AttemptRecord],
                   reason: str) -> dict[str, Any]:
    """The run's entry when it was cancelled: what was spent and reached so far (each query has its own entry)."""
    reached = {record.objective for record in records if record.met}
    return {
        "run_id": run_id,
        "task_id": request.task_id,
        "agent": request.target.label,
        "search": request.search,
        "seed": request.seed,
        "budget": request.budget,
        "queries": len(records),
        "successes": sum(1 for record in records if record.met),
        "reached": [objective for objective in request.objectives if objective in reached],
        "cancelled": True,
        "reason": reason,
    }


def run_text(outcome: InjectOutcome) -> str:
    """One line for the run, one per objective."""
    request = outcome.request
    lines = [f"injection run {outcome.run_id}: task {request.task_id}, agent {request.target.label}, "
             f"{request.search} search, seed {request.seed}, {outcome.queries} of {request.budget} queries"]
    for one in outcome.objectives:
        if one.first is None:
            lines.append(f"  {one.objective}: not reached")
            continue
        utility = "" if one.utility is None else f", utility under attack {_fraction(one.utility)}"
        lines.append(f"  {one.objective}: reached at query {one.first.query} by {one.first.attempt.key}"
                     f" ({one.first.severity}){utility}")
    if outcome.benign is not None:
        refusal = " (a false refusal: no code for a task with no payload)" if outcome.benign.refused else ""
        lines.append(f"  benign utility (clean task): {_fraction(outcome.benign)}{refusal}")
    if request.attacker is not None:
        candidates = [c for listed in (outcome.rewrites or {}).values() for c in listed]
        kept = sum(1 for c in candidates if not c["pruned"])
        lines.append(f"  attacker model {request.attacker.model}: {kept} of {len(candidates)} rewrites kept "
                     "(the rest dropped a secret the oracle looks for, or were empty, unchanged or repeated)")
    return "\n".join(lines)


def _fraction(utility: Utility) -> str:
    if utility.problem:
        return f"not measured ({utility.problem})"
    return f"{utility.passed}/{utility.total} hidden tests pass"


def dumps(outcome: InjectOutcome) -> str:
    return json.dumps(run_json(outcome), indent=2, sort_keys=True, ensure_ascii=False)
