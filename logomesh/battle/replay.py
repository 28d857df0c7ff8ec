"""Replay a recorded entry from the inputs the ledger stored, and compare H(Δ).

A battle is re-scored here (``replay_battle``); ``logomesh/replay.py::replay_entry``, what ``logomesh replay``
calls, sends an injection attempt to ``inject/replay.py`` instead.

The task spec, hidden suite, reference solution, flawed variants, red.py and purple response come from the ledger's
content-addressed blobs, not from today's task library, so an edited task
folder cannot make an old battle look reproducible. The stages after the
purple agent answered run again (``spine.judge_submission``) with the recorded seed and
settings; the canonical hash of the new result must equal the signed one.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from logomesh.battle.record import scored_result
from logomesh.battle.request import BattleRequest
from logomesh.battle.result import BattleResult, RedSettings, ResultError
from logomesh.battle.spine import judge_submission
from logomesh.events import EventSink, discard
from logomesh.purple.exchange import PurpleError
from logomesh.scoring.reference import parse_library
from logomesh.submission import Submission, SubmissionError
from logomesh.tasks import TaskError, TaskSpec, default_tasks_dir, load_task_dir

if TYPE_CHECKING:
    from ledger.store import StoredBattle


class ReplayError(ValueError):
    """The battle cannot be replayed; the message says why."""


@dataclass(frozen=True)
class ReplayReport:
    """What a replay of one entry found, whatever its kind: what ``logomesh replay`` prints."""

    battle_id: str
    sequence: int
    signed_sha256: str
    replayed_sha256: str
    differences: tuple[str, ...]
    signed_scorer: str = ""  # the scorer configuration hash the entry was signed with ("" if not recorded)
    replayed_scorer: str = ""  # this build's

    @property
    def matches(self) -> bool:
        return self.signed_sha256 == self.replayed_sha256

    @property
    def scorer_changed(self) -> bool:
        """The entry was scored under another scoring configuration: differences are the judge's, not the entry's."""
        return bool(self.signed_scorer) and self.signed_scorer != self.replayed_scorer


@dataclass(frozen=True, kw_only=True)
class BattleReplay(ReplayReport):
    """A battle's replay, with the result it re-derived."""

    replayed: BattleResult


def stored_task(task_id: str, inputs: dict[str, bytes], workdir: Path) -> TaskSpec:
    if "reference_solution" not in inputs:
        raise ReplayError("this battle was recorded before hidden tests were judged against a stored reference "
                          "solution; replay it with the LogoMesh release that recorded it")
    root = workdir / task_id
    (root / "hidden").mkdir(parents=True)
    (root / "reference").mkdir()
    (root / "task.toml").write_bytes(inputs["task_spec"])
    (root / "reference" / "solution.py").write_bytes(inputs["reference_solution"])
    (root / "submissions").mkdir()
    if "red_module" in inputs:  # the task's red-agent scenarios, as the battle used them
        from logomesh.red.scenarios import MODULE_FILE

        (root / MODULE_FILE).write_bytes(inputs["red_module"])
    try:
        variants = json.loads(inputs.get("flawed_variants", b"{}"))
        for name, source in variants.items():  # the purple tests are measured against these, as in the battle
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name) or not isinstance(source, str):
                raise ReplayError(f"stored flawed variant {name!r} is not a plain variant name and source")
            record = {"label": name, "behaviour_defect": True, "sourceCode": source, "testCode": "", "rationale": ""}
            (root / "submissions" / f"{name}.json").write_text(json.dumps(record), encoding="utf-8")
        hidden = json.loads(inputs["hidden_tests"])
        for name, source in hidden.items():
            if "/" in name or "\\" in name or not name.startswith("test_"):
                raise ReplayError(f"stored hidden test name {name!r} is not a plain test file name")
            (root / "hidden" / name).write_text(source, encoding="utf-8")
        task = load_task_dir(root)
        if "intent_library" in inputs:  # the intents the battle was judged among, not today's library
            task = dataclasses.replace(task, intent_library=parse_library(inputs["intent_library"]))
        return task
    except ReplayError:
        raise
    except (AttributeError, TaskError, ValueError) as exc:
        raise ReplayError(f"the stored task does not load: {exc}") from None


def stored_submission(raw: bytes, protocol: str) -> Submission:
    """The submission inside a stored purple response, read as the battle read it (``ReplayError`` if it cannot be)."""
    if protocol == "in-process":
        try:
            return Submission.from_text(raw.decode("utf-8"), raw)
        except (UnicodeDecodeError, SubmissionError) as exc:
            raise ReplayError(f"the stored purple response is not a submission: {exc}") from None
    from logomesh.purple.a2a_parse import extract_submission, parse_reply

    problem = "no parse attempted"
    for sse in (False, True):
        try:
            return extract_submission(parse_reply(raw, sse=sse), raw)
        except (PurpleError, SubmissionError) as exc:
            problem = str(exc)
    raise ReplayError(f"the stored purple response cannot be re-read: {problem}")


def _request_for(result: BattleResult, home: Path, sandbox: str) -> BattleRequest:
    agent = result.purple_agent
    mock = agent.removeprefix("mock:") if agent.startswith("mock:") else None
    red = result.red if result.red is not None else RedSettings(False, 0.0)
    return BattleRequest(
        task_id=result.task_id,
        battle_id=result.battle_id,
        seed=result.seed,
        home=home,
        purple_url=None if mock else agent,
        mock_variant=mock,
        sandbox=sandbox,
        red_budget_s=red.budget_s or 10.0,
        red=red.enabled,
    )


def stored_entry(home: Path, entry_id: str) -> StoredBattle:
    """The ledger's entry ``entry_id`` under ``home``; ``ReplayError`` (one line) when there is none."""
    from ledger import Ledger
    from ledger.store import DB_FILE

    if not (home / DB_FILE).exists():  # a replay reads: it creates no ledger
        raise ReplayError(f"no ledger at {home / DB_FILE}: check --home")
    with Ledger.open(home) as led:
        stored = led.get(entry_id)
    if stored is None:
        raise ReplayError(f"no battle {entry_id!r} in the ledger at {home} (see the console or 'verify ledger')")
    return stored


def replay_battle(home: Path, battle_id: str, sandbox: str = "auto", emit: EventSink = discard) -> BattleReplay:
    """Re-score ``battle_id`` from its stored inputs; raises ``ReplayError`` when that is impossible."""
    return replay_stored_battle(home, stored_entry(home, battle_id), sandbox, emit)


def replay_stored_battle(home: Path, stored: StoredBattle, sandbox: str, emit: EventSink = discard) -> BattleReplay:
    """Re-score the battle entry ``stored`` (read from the ledger under ``home``)."""
    from ledger.canonical import canonical_sha256

    battle_id = stored.battle_id
    try:
        result = BattleResult.from_json(stored.result)
    except ResultError as exc:
        raise ReplayError(f"entry {battle_id!r} is no battle result ({exc}); only scored battles can be replayed"
                          ) from None
    if not result.ending.scored:
        raise ReplayError(f"battle {battle_id!r} {result.status} at stage {result.ending.stage or '?'}; "
                          "only scored battles can be replayed")
    with tempfile.TemporaryDirectory(prefix="logomesh-replay-") as workdir:
        task = stored_task(result.task_id, stored.inputs, Path(workdir))
        submission = stored_submission(stored.inputs["purple_response"], stored.attributes.get("purple_protocol", ""))
        request = _request_for(result, home, sandbox)
        judged = judge_submission(request, task, submission, request.context(emit))
    replayed = scored_result(request, judged.card, submission.finish)
    signed, now = stored.result, replayed.to_json()
    changed = {k for k in set(signed) | set(now) if signed.get(k) != now.get(k)}
    basis = judged.measured.reference_observations
    if "reference_observations" in stored.inputs and basis != stored.inputs["reference_observations"]:
        changed.add("reference_observations")  # the verdicts' basis moved, even where no verdict did
    differences = tuple(sorted(changed))
    signed_ref, replayed_ref = result.scores.intent_reference, replayed.scores.intent_reference
    if "intent_library" not in stored.inputs and signed_ref != replayed_ref:
        raise ReplayError(
            f"battle {battle_id!r} was recorded before entries stored the task library its intent check judged "
            f"among, and today's library ({default_tasks_dir()}) gives another reference set ({replayed_ref[:12]}, "
            f"not {signed_ref[:12]}): replay it with --tasks-dir set to the library it was recorded with")
    return BattleReplay(
        battle_id=battle_id,
        sequence=stored.sequence,
        signed_sha256=stored.result_sha256,
        replayed_sha256=canonical_sha256(now),
        differences=differences,
        replayed=replayed,
        signed_scorer=stored.attributes.get("scorer_config_sha256", ""),
        replayed_scorer=judged.card.config.sha256(),
    )
