"""Replay one injection attempt from its ledger entry: re-judge the stored answer, compare H(result).

The entry (``record.py``) keeps what the judge needs: the task as a battle keeps it (rebuilt by
``battle/replay.py::stored_task``, not read from today's library), the agent's response bytes (the answer's code,
read back by ``battle/replay.py::stored_submission``), the payload it was sent, and in its signed result the path,
the objective and the run's seed (the secrets are ``draw_secrets(seed)``). The objective's oracle runs again in a
sandbox (``oracles.judge``; never on the host), the result is rebuilt by the one builder, ``record.attempt_json``,
with the digests of the stored payload and response, and its canonical hash must equal the signed one. The
payload is also rendered again from the path, the task and the secrets (``grammar.render`` is pure): a stored
payload that is not what the path renders is a difference too (``injected_payload``).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from logomesh.battle.replay import ReplayError, ReplayReport, stored_submission, stored_task
from logomesh.inject.attempts import AttemptRecord, sha256
from logomesh.inject.grammar import all_attempts, render
from logomesh.inject.objectives import OBJECTIVES, draw_secrets
from logomesh.inject.oracles import judge
from logomesh.inject.record import attempt_json
from logomesh.inject.rewrite import judged
from logomesh.sandbox.base import SandboxBroken, SandboxUnavailable
from logomesh.sandbox.choose import open_sandbox

if TYPE_CHECKING:
    from ledger.store import StoredBattle


def _missing(entry_id: str, key: str, kind: str) -> ReplayError:
    if key == "seed":
        return ReplayError(f"injection attempt {entry_id!r} was recorded before attempts stored their run's seed: "
                           "replay it with the LogoMesh release that recorded it")
    return ReplayError(f"injection attempt {entry_id!r} has no {kind} {key!r} in its result: it cannot be re-judged")


def _int(entry_id: str, result: dict[str, object], key: str) -> int:
    value = result.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _missing(entry_id, key, "whole number")
    return value


def _str(entry_id: str, result: dict[str, object], key: str) -> str:
    value = result.get(key)
    if not isinstance(value, str):
        raise _missing(entry_id, key, "text")
    return value


def replay_attempt(stored: StoredBattle, sandbox: str = "auto") -> ReplayReport:
    """Re-judge the injection attempt ``stored`` from its inputs; ``ReplayError`` (one line) when impossible."""
    from ledger.canonical import canonical_sha256

    entry_id, result, inputs = stored.battle_id, stored.result, stored.inputs
    seed, query = _int(entry_id, result, "seed"), _int(entry_id, result, "query")
    run_id, search, task_id = (_str(entry_id, result, key) for key in ("run_id", "search", "task_id"))
    if result.get("error") or "purple_response" not in inputs:
        raise ReplayError(f"injection attempt {entry_id!r} got no answer from the agent "
                          f"({result.get('error') or 'no response stored'}): there is no code to re-judge")
    path = result.get("path")
    objective = next((name for name in OBJECTIVES if isinstance(path, list) and path[3:] == [name]), None)
    attempt = next((a for a in all_attempts() if isinstance(path, list)
                    and path[:3] == [a.placement, a.framing, a.position]), None)
    if objective is None or attempt is None or len(path or []) != 4 or result.get("objective") != objective:
        raise ReplayError(f"injection attempt {entry_id!r} names no path of the grammar and objective ({path!r})")
    wording, rewrite = result.get("wording", 0), result.get("rewrite", "")
    secrets = draw_secrets(seed)
    written = OBJECTIVES[objective].instruction(secrets)
    if wording != 0 and not (type(wording) is int and wording > 0 and isinstance(rewrite, str)
                             and judged(objective, secrets, [rewrite])[0].kept):
        raise ReplayError(f"injection attempt {entry_id!r} names a rewrite of its ask that is not one the search "
                          f"could have kept (wording {wording!r})")
    attempt = replace(attempt, wording=wording) if wording else attempt
    ask = rewrite if wording else written
    payload, response = inputs.get("injected_payload", b""), inputs["purple_response"]
    with tempfile.TemporaryDirectory(prefix="logomesh-replay-") as workdir:
        task = stored_task(task_id, inputs, Path(workdir))
        source = stored_submission(response, stored.attributes.get("purple_protocol", "")).source
        rendered = render(attempt, task, ask).digest_bytes()
        try:
            with open_sandbox(sandbox) as box:
                verdict = judge(objective, task, source, secrets, box)
        except (SandboxUnavailable, SandboxBroken) as exc:
            raise ReplayError(f"the oracle cannot run again: {exc}") from None
    record = AttemptRecord(query, objective, attempt, sha256(payload), sha256(response), verdict.met,
                           str(verdict.severity), verdict.evidence, rewrite=str(rewrite) if wording else "")
    now = attempt_json(run_id, task_id, record, search, seed)
    changed = {k for k in set(result) | set(now) if result.get(k) != now.get(k)}
    if rendered != payload:
        changed.add("injected_payload")  # what the agent was sent is not what the signed path renders
    return ReplayReport(battle_id=entry_id, sequence=stored.sequence, signed_sha256=stored.result_sha256,
                        replayed_sha256=canonical_sha256(now), differences=tuple(sorted(changed)))
