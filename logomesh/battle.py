"""``run_battle``: the orchestration spine of one battle.

task → purple agent → sandbox (hidden tests, purple's tests) → red agent →
scoring → ledger. Every stage emits typed events. Set-up errors (unknown task
or mock variant) raise ``BattleSetupError`` before anything starts; once the
battle has started, every failure is recorded in the ledger as a failed
battle with its stage and reason, and ``run_battle`` returns normally.

A battle stops within about a second once ``request.cancel`` (a ``CancelToken``)
is cancelled: it polls the token between steps, abandons the purple agent's
HTTP exchange and kills its sandbox from outside. It is recorded with status
``cancelled`` and the ``stage`` it stopped in.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logomesh.cancel import Cancelled, CancelToken, abandon_on_cancel
from logomesh.events import (
    BattleCancelled,
    BattleFailed,
    BattleFinished,
    BattleStarted,
    Event,
    EventSink,
    LedgerAppended,
    PurpleResponded,
    StageStarted,
    discard,
)
from logomesh.purple.exchange import PurpleError, PurpleExchange, canned_exchange
from logomesh.submission import Submission
from logomesh.tasks import TaskError, TaskSpec, load_task

if TYPE_CHECKING:
    from ledger import Ledger
    from logomesh.sandbox import Sandbox

SEED_LIMIT = 2**53
"""Seeds are recorded in JSON results; beyond this magnitude no JSON reader keeps them exact."""


class BattleSetupError(ValueError):
    """The battle cannot start (unknown task, unknown mock variant, no purple named)."""


class StageFailed(Exception):
    """A stage failed after the battle started; recorded with ``stage`` and a one-line reason."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason


@dataclass(frozen=True)
class BattleRequest:
    task_id: str
    battle_id: str
    seed: int
    home: Path
    purple_url: str | None = None
    mock_variant: str | None = None
    protocol: str | None = None
    sandbox: str = "auto"
    red_budget_s: float = 10.0
    red: bool = True
    campaign_id: str | None = None
    purple_timeout_s: float = 120.0
    purple_stream: bool = False
    """Ask with ``message/stream`` (SSE) instead of ``message/send``."""
    cancel: CancelToken | None = field(default=None, compare=False, repr=False)
    """Cancelling it stops the battle (see the module docstring); ``None``: nobody can."""

    @property
    def purple_label(self) -> str:
        return self.purple_url or f"mock:{self.mock_variant}"

    @property
    def token(self) -> CancelToken:
        """The battle's cancel token; a request made without one gets a token nobody holds."""
        if self.cancel is None:
            object.__setattr__(self, "cancel", CancelToken())
        assert self.cancel is not None
        return self.cancel


@dataclass(frozen=True)
class BattleOutcome:
    result: dict[str, Any]
    sequence: int | None
    db_path: Path

    @property
    def failed(self) -> bool:
        return bool(self.result.get("status") == "failed")

    @property
    def cancelled(self) -> bool:
        return bool(self.result.get("status") == "cancelled")


def default_battle_id(task_id: str, purple: str, seed: int) -> str:
    """A deterministic id for a battle whose caller named none."""
    digest = hashlib.sha256(f"{task_id}\x00{purple}\x00{seed}".encode()).hexdigest()[:12]
    return f"{task_id}-{digest}"


def free_battle_id(home: Path, base: str) -> str:
    """``base`` if the ledger under ``home`` lacks it, else the first free ``base-2``, ``base-3``, …"""
    from ledger import Ledger

    with Ledger.open(home) as led:
        candidate, n = base, 1
        while led.get(candidate) is not None:
            n += 1
            candidate = f"{base}-{n}"
    return candidate


def _validate(request: BattleRequest) -> TaskSpec:
    from ledger import Ledger

    if (request.purple_url is None) == (request.mock_variant is None):
        raise BattleSetupError("name exactly one purple agent: --purple URL or --mock VARIANT")
    if not -SEED_LIMIT < request.seed < SEED_LIMIT:
        raise BattleSetupError(f"seed {request.seed} is too large: use a seed of magnitude below 2**53")
    try:
        task = load_task(request.task_id)
        if request.mock_variant is not None:
            task.labelled_submission(request.mock_variant)
    except TaskError as exc:
        raise BattleSetupError(str(exc)) from None
    with Ledger.open(request.home) as led:
        if led.get(request.battle_id) is not None:
            raise BattleSetupError(
                f"battle id {request.battle_id!r} is already in the ledger; entries are never replaced: "
                "choose another --battle-id"
            )
    return task


def _ask_purple(task: TaskSpec, request: BattleRequest) -> PurpleExchange:
    if request.mock_variant is not None:
        return canned_exchange(task, request.mock_variant, request.battle_id)
    from logomesh.purple.client import request_submission

    assert request.purple_url is not None
    try:
        return request_submission(request.purple_url, task, request.battle_id, protocol=request.protocol,
                                  total_timeout_s=request.purple_timeout_s, stream=request.purple_stream,
                                  cancel=request.token)
    except PurpleError as exc:
        raise StageFailed("purple", f"purple agent {request.purple_url}: {exc}") from None


def _cancelled_result(request: BattleRequest, stage: str, reason: str) -> dict[str, Any]:
    """A failed result's zeros, with status ``cancelled`` and the ``stage`` it stopped in (no ``failed_stage``)."""
    result = _failed_result(request, stage, reason)
    del result["failed_stage"]
    result.update(status="cancelled", stage=stage)
    return result


def _failed_result(request: BattleRequest, stage: str, reason: str) -> dict[str, Any]:
    zero = {"passed": 0, "failed": 0, "total": 0}
    return {
        "battle_id": request.battle_id,
        "task_id": request.task_id,
        "rationale_score": 0.0,
        "architecture_score": 0.0,
        "testing_score": 0.0,
        "logic_score": 0.0,
        "cis_score": 0.0,
        "red_penalty_applied": 0.0,
        "intent_penalty": 1.0,
        "red_analysis": {
            "attack_successful": False,
            "vulnerability_count": 0,
            "max_severity": "low",
            "vulnerabilities": [],
        },
        "tests": {"hidden": dict(zero), "purple": dict(zero)},
        "anchors": {},
        "llm_adjustments": {},
        "status": "failed",
        "failed_stage": stage,
        "reason": reason,
        "seed": request.seed,
        "purple_agent": request.purple_label,
    }


def _play(request: BattleRequest, task: TaskSpec, emit: EventSink, facts: dict[str, Any]) -> dict[str, Any]:
    """Run the stages; ``facts`` collects what the ledger entangles, even on failure."""
    battle_id = request.battle_id
    emit(StageStarted(battle_id, "purple"))
    request.token.check()
    exchange = _ask_purple(task, request)
    request.token.check()
    facts["inputs"]["purple_request"] = exchange.request_bytes
    facts["inputs"]["purple_response"] = exchange.response_bytes
    facts["attributes"]["purple_protocol"] = exchange.protocol
    submission = exchange.submission
    emit(
        PurpleResponded(
            battle_id,
            len(submission.source.encode()),
            len(submission.tests.encode()),
            len(submission.rationale),
            exchange.response_sha256,
        )
    )
    return judge(request, task, submission, emit, facts)


def judge(
    request: BattleRequest, task: TaskSpec, submission: Submission, emit: EventSink, facts: dict[str, Any]
) -> dict[str, Any]:
    """Everything after the purple agent answered: sandbox, red agent, scoring. Replay re-runs exactly this.

    Measuring is ``scoring.measure`` and scoring is ``score_submission``, exactly as for ``logomesh score``
    and ``calibrate``: one pipeline, so the same code gets the same result from each.
    """
    from logomesh.sandbox import SandboxBroken, SandboxUnavailable
    from logomesh.scoring import DEFAULT_CONFIG, score_submission
    from logomesh.scoring.measure import measure

    battle_id, cancel = request.battle_id, request.token
    emit(StageStarted(battle_id, "sandbox"))
    cancel.check()
    try:
        with _killable_sandbox(request.sandbox, cancel) as box:
            facts["attributes"]["sandbox_image"] = box.image_id
            facts["attributes"]["sandbox_backend"] = box.backend
            measured = measure(task, submission, box, red=request.red, red_budget_s=request.red_budget_s,
                               seed=request.seed, battle_id=battle_id, emit=emit, cancel=cancel)
            facts["inputs"]["reference_observations"] = measured.reference_observations
            if measured.findings:  # what the red agent measured: signed with the inputs, outside H(Δ)
                facts["inputs"]["red_evidence"] = json.dumps(
                    [{"family": f.family, "summary": f.summary, "evidence": f.evidence} for f in measured.findings],
                    sort_keys=True, ensure_ascii=False).encode("utf-8")
    except SandboxUnavailable as exc:
        raise StageFailed("sandbox", str(exc)) from None
    except SandboxBroken as exc:
        raise StageFailed("sandbox", f"the sandbox broke: {exc}") from None

    cancel.check()
    emit(StageStarted(battle_id, "scoring"))

    def quiet_once_cancelled(event: Event) -> None:
        if not cancel.cancelled:
            emit(event)

    card = abandon_on_cancel(  # scoring only computes: a cancel need not wait for the model
        lambda: score_submission(task, submission, measured.hidden, measured.purple, measured.findings,
                                 config=DEFAULT_CONFIG, battle_id=battle_id, emit=quiet_once_cancelled,
                                 mutants=measured.mutants, red=measured.red),
        cancel, name="logomesh-scoring")
    facts["attributes"]["scorer_config_sha256"] = DEFAULT_CONFIG.sha256()
    for name, model in sorted(DEFAULT_CONFIG.model_ids().items()):
        facts["attributes"][f"model:{name}"] = model
    facts["intent_vector"] = list(card.intent_vector)
    result: dict[str, Any] = {"battle_id": battle_id, "task_id": task.id}
    result.update(card.result_fields())
    result.update(
        {
            "status": "scored",
            "seed": request.seed,
            "purple_agent": request.purple_label,
            "red_enabled": request.red,
            "red_budget_s": request.red_budget_s if request.red else 0.0,
        }
    )
    return result


class _BoxCloser:
    """Closes a sandbox once, from whichever thread comes first: the battle's, or the cancel's."""

    def __init__(self, box: Sandbox) -> None:
        self._box = box
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        with self._lock:  # the battle's close waits for a cancel's: the box is gone when the battle ends
            if not self._closed:
                self._closed = True
                self._box.close()


@contextlib.contextmanager
def _killable_sandbox(kind: str, cancel: CancelToken) -> Iterator[Sandbox]:
    """An open sandbox that a cancel kills from outside: its run in progress ends at once, as crashed."""
    from logomesh.sandbox import make_sandbox

    box = make_sandbox(kind)
    closer = _BoxCloser(box)
    try:
        with cancel.hook(closer.close):
            cancel.check()
            yield box
    finally:
        closer.close()


class _StageTracker:
    """Passes events on and remembers the last stage started: where a cancel stopped the battle."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self.stage = "start"

    def __call__(self, event: Event) -> None:
        if isinstance(event, StageStarted):
            self.stage = event.stage
        self._emit(event)


@dataclass(frozen=True)
class PlayedBattle:
    """A battle played but not yet recorded: its result and what the ledger entangles with it."""

    result: dict[str, Any]
    inputs: dict[str, bytes]
    attributes: dict[str, str]
    intent_vector: list[float] | None

    @property
    def failed(self) -> bool:
        return bool(self.result.get("status") == "failed")

    @property
    def cancelled(self) -> bool:
        return bool(self.result.get("status") == "cancelled")


def play_battle(request: BattleRequest, task: TaskSpec, emit: EventSink = discard) -> PlayedBattle:
    """Every stage but the ledger; a failure in any stage becomes a failed result, never an exception.

    A cancel becomes a ``cancelled`` result naming the stage it stopped. Campaign workers call this and
    hand the outcome to the one ledger writer.
    """
    tracker = _StageTracker(emit)
    emit = tracker
    emit(BattleStarted(request.battle_id, task.id, request.purple_label, request.seed))
    facts: dict[str, Any] = {
        "inputs": {"task_spec": task.spec_bytes, "hidden_tests": task.hidden_bytes,
                   "reference_solution": task.reference_bytes, "flawed_variants": _variants_bytes(task),
                   **_red_module(task)},
        "attributes": _attributes(request),
        "intent_vector": None,
    }
    try:
        result = _play(request, task, emit, facts)
    except Cancelled as exc:
        result = _cancelled(request, tracker.stage, exc.reason, emit)
    except Exception as exc:  # a crash in any stage is still a recorded, failed battle
        stage, reason = (exc.stage, exc.reason) if isinstance(exc, StageFailed) else (
            "engine", f"internal error: {type(exc).__name__}: {exc}".splitlines()[0])
        if request.token.cancelled:  # the failure is the cancel's doing: a killed box, an abandoned request
            result = _cancelled(request, tracker.stage, request.token.reason, emit)
        else:
            emit(BattleFailed(request.battle_id, stage, reason))
            result = _failed_result(request, stage, reason)
    return PlayedBattle(result, facts["inputs"], facts["attributes"], facts["intent_vector"])


def _cancelled(request: BattleRequest, stage: str, reason: str, emit: EventSink) -> dict[str, Any]:
    emit(BattleCancelled(request.battle_id, stage, reason))
    return _cancelled_result(request, stage, reason)


def _red_module(task: TaskSpec) -> dict[str, bytes]:
    """The task's red.py (its red-agent scenarios), when it has one: an input of the red agent's findings."""
    from logomesh.red.scenarios import MODULE_FILE

    path = task.root / MODULE_FILE
    return {"red_module": path.read_bytes()} if path.is_file() else {}


def _variants_bytes(task: TaskSpec) -> bytes:
    """The task's flawed variants (name -> source), against which the purple tests are measured."""
    from logomesh.scoring.testing import flawed_variants

    return json.dumps(flawed_variants(task), sort_keys=True, ensure_ascii=False).encode("utf-8")


def failed_played(request: BattleRequest, stage: str, reason: str) -> PlayedBattle:
    """A battle that failed before any stage could run (for callers that play battles elsewhere)."""
    return PlayedBattle(_failed_result(request, stage, reason), {}, _attributes(request), None)


def _attributes(request: BattleRequest) -> dict[str, str]:
    """The attributes every entry carries, scored or failed."""
    attributes = {"purple_agent": request.purple_label, "seed": str(request.seed)}
    if request.campaign_id:
        attributes["campaign_id"] = request.campaign_id
    return attributes


def run_battle(request: BattleRequest, emit: EventSink = discard) -> BattleOutcome:
    """Run one battle and append its result, scored or failed, to the ledger under ``request.home``."""
    task = _validate(request)
    return record_battle(request.home, request.battle_id, play_battle(request, task, emit), emit)


def record_battle(
    home: Path, battle_id: str, played: PlayedBattle, emit: EventSink = discard, ledger: Ledger | None = None
) -> BattleOutcome:
    """Append ``played`` to the ledger (``ledger`` if the caller holds one open, else the one under ``home``)."""
    from ledger import Ledger

    emit(StageStarted(battle_id, "ledger"))
    with contextlib.ExitStack() as stack:
        led = ledger if ledger is not None else stack.enter_context(Ledger.open(home))
        receipt = led.append(battle_id, played.result, played.inputs, played.attributes, played.intent_vector)
    emit(LedgerAppended(battle_id, receipt.sequence, receipt.result_sha256, str(receipt.db_path)))
    emit(BattleFinished(battle_id, float(played.result["cis_score"]), str(played.result["status"])))
    return BattleOutcome(result=played.result, sequence=receipt.sequence, db_path=receipt.db_path)


def result_json(result: Mapping[str, Any]) -> str:
    """The result as stable, indented JSON for ``--json`` output."""
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)
