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
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logomesh.battle.record import (
    CancelledAt,
    Ending,
    FailedAt,
    Judged,
    PlayedBattle,
    ResultStatus,
    SandboxUsed,
    Scored,
    StageValues,
    played_battle,
)
from logomesh.battle.request import SEED_LIMIT, BattleRequest, BattleSetupError, StageFailed
from logomesh.battle.result import BattleResult
from logomesh.cancel import Cancelled, CancelToken
from logomesh.events import (
    BattleCancelled,
    BattleFailed,
    BattleFinished,
    BattleStarted,
    Event,
    EventSink,
    LedgerAppended,
    PurpleFinishReported,
    PurpleResponded,
    StageStarted,
    discard,
)
from logomesh.purple.exchange import PurpleError, PurpleExchange, canned_exchange
from logomesh.submission import Submission
from logomesh.tasks import TaskError, TaskSpec, load_task

if TYPE_CHECKING:
    from ledger import Ledger
    from logomesh.context import BattleContext
    from logomesh.sandbox import Sandbox
    from logomesh.scoring.measure import Measured

@dataclass(frozen=True)
class BattleOutcome(ResultStatus):
    result: BattleResult
    sequence: int | None
    db_path: Path


def _validate(request: BattleRequest, check_environment: bool = False) -> TaskSpec:
    """The task, a battle id the ledger lacks, and the environment (``preflight``) if asked."""
    from ledger import Ledger
    from ledger.store import DB_FILE

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
    if (request.home / DB_FILE).exists():
        with Ledger.open(request.home) as led:
            if led.get(request.battle_id) is not None:
                raise BattleSetupError(
                    f"battle id {request.battle_id!r} is already in the ledger; entries are never replaced: "
                    "choose another --battle-id"
                )
    if check_environment:
        from logomesh.battle.preflight import check_environment as environment_ready

        environment_ready(request.sandbox, (request.purple_url,) if request.purple_url is not None else (),
                          request.protocol, min(10.0, request.purple_timeout_s))
    return task


def _ask_purple(task: TaskSpec, request: BattleRequest) -> PurpleExchange:
    if request.mock_variant is not None:
        return canned_exchange(task, request.mock_variant, request.battle_id)
    from logomesh.purple.client import ExchangeSettings, request_submission

    assert request.purple_url is not None
    settings = ExchangeSettings(protocol=request.protocol, total_timeout_s=request.purple_timeout_s,
                                stream=request.purple_stream)
    try:
        return request_submission(request.purple_url, task, request.battle_id, settings, request.cancel)
    except PurpleError as exc:
        raise StageFailed("purple", f"purple agent {request.purple_url}: {exc}") from None


def _purple_stage(request: BattleRequest, task: TaskSpec, battle: BattleContext) -> PurpleExchange:
    """The purple agent's answer, byte for byte."""
    battle.emit(StageStarted(battle.battle_id, "purple"))
    battle.cancel.check()
    exchange = _ask_purple(task, request)
    battle.cancel.check()
    submission = exchange.submission
    battle.emit(
        PurpleResponded(
            battle.battle_id,
            len(submission.source.encode()),
            len(submission.tests.encode()),
            len(submission.rationale),
            exchange.response_sha256,
        )
    )
    if submission.finish is not None:
        battle.emit(PurpleFinishReported(battle.battle_id, submission.finish))
    return exchange


def _check_module(task: TaskSpec, submission: Submission) -> None:
    """An answer that is no module defining the task's entry point is a purple failure, not a score."""
    from logomesh.tasks.module_check import module_problem

    problem = module_problem(submission.source, task.entry_point)
    if problem is not None:
        raise StageFailed("purple", problem)


def judge_submission(
    request: BattleRequest, task: TaskSpec, submission: Submission, battle: BattleContext,
    values: StageValues | None = None,
) -> Judged:
    """Everything after the purple agent answered: sandbox, red agent, scoring. Replay re-runs exactly this.

    Measuring then scoring is ``scoring.pipeline.measure_and_score``, exactly as for ``logomesh score`` and
    ``calibrate``: one pipeline, so the same code gets the same result from each. The sandbox used and the
    measured values go into ``values`` as soon as they are known, so a battle that fails or is cancelled
    later still records them. ``battle`` (``request.context(emit)``) carries the id, event sink, cancel token
    and seed down to the red agent's search.
    """
    from logomesh.sandbox import SandboxBroken, SandboxUnavailable
    from logomesh.scoring import DEFAULT_CONFIG
    from logomesh.scoring.pipeline import Judging, measure_and_score

    values = values if values is not None else StageValues()
    battle.emit(StageStarted(battle.battle_id, "sandbox"))
    battle.cancel.check()
    judging = Judging(red=request.red, red_budget_s=request.red_budget_s,
                      config=DEFAULT_CONFIG.with_llm(request.review_llm))

    def record(measured: Measured) -> None:
        values.measured = measured

    try:
        scored = measure_and_score(task, submission, _recorded_sandbox(request.sandbox, battle.cancel, values),
                                   judging, battle, on_measured=record)
    except SandboxUnavailable as exc:
        raise StageFailed("sandbox", str(exc)) from None
    except SandboxBroken as exc:
        raise StageFailed("sandbox", f"the sandbox broke: {exc}") from None
    assert values.sandbox is not None  # set as the box opened
    return Judged(values.sandbox, scored.measured, scored.card)


@contextlib.contextmanager
def _recorded_sandbox(kind: str, cancel: CancelToken, values: StageValues) -> Iterator[Sandbox]:
    """A killable sandbox whose image and backend go into ``values`` as soon as it is open."""
    with _killable_sandbox(kind, cancel) as box:
        values.sandbox = SandboxUsed(box.image_id, box.backend)
        yield box


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
    from logomesh.sandbox.warm import fresh_box

    box = fresh_box(kind)
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


def play_battle(request: BattleRequest, task: TaskSpec, emit: EventSink = discard) -> PlayedBattle:
    """Every stage but the ledger; a failure in any stage becomes a failed result, never an exception.

    A cancel becomes a ``cancelled`` result naming the stage it stopped. Whatever the stages returned before
    a failure or cancel is still recorded. Campaign workers call this and hand the outcome to the one ledger
    writer.
    """
    tracker = _StageTracker(emit)
    battle = request.context(tracker)
    tracker(BattleStarted(request.battle_id, task.id, request.purple_label, request.seed))
    values = StageValues()
    ending: Ending
    try:
        values.exchange = _purple_stage(request, task, battle)
        _check_module(task, values.exchange.submission)
        ending = Scored(judge_submission(request, task, values.exchange.submission, battle, values).card)
    except Cancelled as exc:
        ending = _cancelled(battle, tracker.stage, exc.reason)
    except Exception as exc:  # a crash in any stage is still a recorded, failed battle
        stage, reason = (exc.stage, exc.reason) if isinstance(exc, StageFailed) else (
            "engine", f"internal error: {type(exc).__name__}: {exc}".splitlines()[0])
        if battle.cancel.cancelled:  # the failure is the cancel's doing: a killed box, an abandoned request
            ending = _cancelled(battle, tracker.stage, battle.cancel.reason)
        else:
            battle.emit(BattleFailed(battle.battle_id, stage, reason))
            ending = FailedAt(stage, reason)
    return played_battle(request, task, values, ending)


def _cancelled(battle: BattleContext, stage: str, reason: str) -> CancelledAt:
    battle.emit(BattleCancelled(battle.battle_id, stage, reason))
    return CancelledAt(stage, reason)


def run_battle(request: BattleRequest, emit: EventSink = discard) -> BattleOutcome:
    """Run one battle and append its result, scored or failed, to the ledger under ``request.home``.

    A battle that cannot start (``preflight``: bad inputs, no sandbox, an agent that does not answer) raises
    ``BattleSetupError`` and is not recorded; once started, every ending is recorded.
    """
    from logomesh.battle.preflight import check_inputs

    check_inputs(request)
    task = _validate(request, check_environment=True)
    return record_battle(request.home, request.battle_id, play_battle(request, task, emit), emit)


def record_battle(
    home: Path, battle_id: str, played: PlayedBattle, emit: EventSink = discard, ledger: Ledger | None = None
) -> BattleOutcome:
    """Append ``played`` to the ledger (``ledger`` if the caller holds one open, else the one under ``home``)."""
    from ledger import Ledger

    emit(StageStarted(battle_id, "ledger"))
    with contextlib.ExitStack() as stack:
        led = ledger if ledger is not None else stack.enter_context(Ledger.open(home))
        receipt = led.append(battle_id, played.result.to_json(), played.inputs, played.attributes,
                             played.intent_vector)
    emit(LedgerAppended(battle_id, receipt.sequence, receipt.result_sha256, str(receipt.db_path)))
    emit(BattleFinished(battle_id, played.result.cis_score, played.result.status))
    return BattleOutcome(result=played.result, sequence=receipt.sequence, db_path=receipt.db_path)


def result_json(result: Mapping[str, Any]) -> str:
    """The result as stable, indented JSON for ``--json`` output."""
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)
