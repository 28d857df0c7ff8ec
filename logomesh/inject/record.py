"""The injection run on the record: one ledger entry per query, and one for the run's outcome.

Each query's entry holds its path, the run's seed (the secrets are drawn from it), the digest of the payload it
rendered, the digest of the agent's answer and the oracle's verdict in the result; the payload, the request and
response bytes (the answer's code is in the response) and the task as a battle keeps it
(``battle/record.py::task_inputs``) as inputs, so the entry is entangled with exactly what the agent read and said
and ``logomesh replay`` can re-judge it from the entry alone (``inject/replay.py``). The run's entry holds, per
objective, what ``report.py`` prints. Both go through ``ledger.Ledger.append``, like every battle: signed,
Merkle-chained, checked by ``logomesh verify ledger``. Their ``status`` (``injection-attempt``,
``injection-run``) tells every reader they are no battle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ledger import Ledger
from logomesh.battle.record import task_inputs
from logomesh.inject.attempts import AttemptRecord
from logomesh.tasks import TaskSpec

ATTEMPT_STATUS = "injection-attempt"
RUN_STATUS = "injection-run"
KIND_ATTRIBUTE = "kind"


def attempt_id(run_id: str, query: int) -> str:
    return f"{run_id}.q{query:04d}"


def attempt_json(run_id: str, task_id: str, record: AttemptRecord, search: str, seed: int) -> dict[str, Any]:
    """The signed result of one query: where it put what, what came back, what the oracle decided (with the
    secrets of ``seed``). The one builder: the run and ``replay`` (``inject/replay.py``) both call it."""
    return {
        "battle_id": attempt_id(run_id, record.query),
        "task_id": task_id,
        "status": ATTEMPT_STATUS,
        "kind": ATTEMPT_STATUS,
        "run_id": run_id,
        "search": search,
        "seed": seed,
        "query": record.query,
        "objective": record.objective,
        "path": list(record.path),
        "payload_sha256": record.payload_sha256,
        "answer_sha256": record.answer_sha256,
        "verdict": {"met": record.met, "severity": record.severity, "evidence": record.evidence},
        "error": record.error,
        **({"wording": record.attempt.wording, "rewrite": record.rewrite} if record.attempt.wording else {}),
    }


def append_attempt(ledger: Ledger, run_id: str, task: TaskSpec, record: AttemptRecord, search: str, seed: int,
                   agent: str) -> None:
    """Append one query's entry; returns once it is durable."""
    inputs = {**task_inputs(task), "injected_payload": record.payload}
    if record.request:
        inputs["purple_request"] = record.request
    if record.response:
        inputs["purple_response"] = record.response
    ledger.append(attempt_id(run_id, record.query), attempt_json(run_id, task.id, record, search, seed), inputs,
                  {KIND_ATTRIBUTE: ATTEMPT_STATUS, "run_id": run_id, "agent": agent})


def append_run_json(ledger: Ledger, run_id: str, run_json: Mapping[str, Any], agent: str) -> None:
    """Append the run's outcome (``run_json``: ``report.run_json``), after every query's entry."""
    result = {"battle_id": run_id, "status": RUN_STATUS, "kind": RUN_STATUS, **run_json}
    ledger.append(run_id, result, {}, {KIND_ATTRIBUTE: RUN_STATUS, "run_id": run_id, "agent": agent})
