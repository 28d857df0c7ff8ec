"""A deterministic engine for console tests: replays a scripted list of real engine events.

It has ``run_battle``'s signature and its failure contract (a crash inside the
battle is caught, reported with ``BattleFailed`` and returned as a failed
result), so the console's adapter is exercised exactly as with the real engine.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from logomesh.battle.request import BattleRequest
from logomesh.battle.result import BattleResult, ResultEnding
from logomesh.battle.scores import Scores
from logomesh.battle.spine import BattleOutcome
from logomesh.events import (
    BattleFailed,
    BattleFinished,
    BattleStarted,
    CorrectnessBand,
    Event,
    EventSink,
    FindingConfirmed,
    LedgerAppended,
    MctsNodeAdded,
    MctsNodeUpdated,
    PenaltyApplied,
    SandboxOutput,
    ScoreComponent,
    StageStarted,
    TestResult,
)
from logomesh.tasks import TaskSpec

BATTLE = "b-1"
# one architecture violation, as the scorer records it (Violation.to_json)
NO_LOCK = {"kind": "missing_required", "constraint": "threading.Lock", "line": 0, "detail": "no lock"}


def make_task(root: Path, task_id: str = "demo-task", variants: Sequence[str] = ("good", "no-lock")) -> TaskSpec:
    """A small task on disk with labelled submissions, enough for the setup form."""
    (root / "submissions").mkdir(parents=True, exist_ok=True)
    for name in variants:
        body = {"label": name, "behaviour_defect": name != "good", "sourceCode": "x = 1\n", "testCode": "",
                "rationale": "r"}
        (root / "submissions" / f"{name}.json").write_text(json.dumps(body))
    return TaskSpec(id=task_id, title="Demo task", description="Count things exactly once.", entry_point="Counter",
                    root=root)


def search_events(battle_id: str, nodes: int, seed: int = 7) -> list[Event]:
    """``nodes`` node additions, each followed by updates along its path, seeded."""
    rng = random.Random(seed)
    events: list[Event] = []
    visits: dict[int, int] = {}
    parents: dict[int, int | None] = {}
    for node_id in range(nodes):
        parent = None if node_id == 0 else rng.randrange(node_id)
        parents[node_id] = parent
        events.append(MctsNodeAdded(battle_id, node_id, parent, f"probe-{node_id % 5}"))
        current: int | None = node_id
        while current is not None:
            visits[current] = visits.get(current, 0) + 1
            events.append(MctsNodeUpdated(battle_id, current, visits[current], round(rng.random(), 3)))
            current = parents[current]
    return events


def full_battle(battle_id: str = BATTLE, nodes: int = 12) -> list[Event]:
    """A complete scored battle: sandbox, search with a finding, the four components, a penalty, the end."""
    return [
        BattleStarted(battle_id, "demo-task", "mock:good", 3),
        StageStarted(battle_id, "sandbox"),
        SandboxOutput(battle_id, "hidden:test_basic", "stdout", "ran 3 tests\nOK"),
        SandboxOutput(battle_id, "hidden:test_edge", "stderr", "Traceback: boom " + "x" * 900),
        TestResult(battle_id, "hidden", "test_basic", "passed"),
        TestResult(battle_id, "hidden", "test_edge", "failed", "AssertionError: 2 != 1"),
        StageStarted(battle_id, "red"),
        *search_events(battle_id, nodes),
        FindingConfirmed(battle_id, "concurrency", "high", "CWE-362", "lost update under threads", node_id=3),
        StageStarted(battle_id, "scoring"),
        ScoreComponent(battle_id, "rationale", 0.8125, {"similarity": 0.8125}),
        ScoreComponent(battle_id, "architecture", 0.5, {"violations": [NO_LOCK], "checked": 4}),
        ScoreComponent(battle_id, "testing", 0.75, {"hidden_passed": 1, "hidden_total": 2}),
        ScoreComponent(battle_id, "logic", 0.6, {"edge_cases": 3}),
        PenaltyApplied(battle_id, "red", 0.8, "high severity finding"),
        StageStarted(battle_id, "ledger"),
        LedgerAppended(battle_id, 1, "ab" * 32, "/tmp/battles.db"),
        BattleFinished(battle_id, 0.4321, "scored"),
    ]


BANDED_X = 0.665625 * 0.8  # x: raw (the scripted components, weighted alike) times the red factor
BANDED_CIS = 0.5 * BANDED_X  # one hidden test failed: the lower band, CIS = 0.5×x


def banded_battle(battle_id: str = BATTLE, nodes: int = 12) -> list[Event]:
    """``full_battle`` ending as the engine ends one: x placed in its correctness band, the CIS that gives."""
    ending = [event for event in full_battle(battle_id, nodes) if not isinstance(event, BattleFinished)]
    return [*ending, CorrectnessBand(battle_id, False, 0.5, BANDED_X, BANDED_CIS, "not every hidden test passed"),
            BattleFinished(battle_id, BANDED_CIS, "scored")]


def scored_result(battle_id: str, cis: float) -> BattleResult:
    return BattleResult(battle_id, "demo-task", 0, "mock:demo", ResultEnding("scored"),
                        Scores.from_json({"cis_score": cis}))


class ScriptedEngine:
    """Replays ``events`` (optionally pausing between them), then returns a scored outcome."""

    def __init__(self, events: Sequence[Event] | Iterator[Event], cis: float = 0.4321, pause_s: float = 0.0,
                 hold_after: int | None = None) -> None:
        self.events = events
        self.cis = cis
        self.pause_s = pause_s
        self.hold_after = hold_after  # stop after this many events until ``release`` is set
        self.release = threading.Event()
        self.emitted = 0
        self.requests: list[BattleRequest] = []
        self.done = threading.Event()

    def __call__(self, request: BattleRequest, emit: EventSink) -> BattleOutcome:
        self.requests.append(request)
        try:
            for event in self.events:
                if self.emitted == self.hold_after:
                    self.release.wait(120)  # held until the test releases it; the bound only ends a hang
                emit(event)
                self.emitted += 1
                if self.pause_s:
                    time.sleep(self.pause_s)
        except Exception as exc:  # run_battle's contract: a crash is a recorded battle, cancelled if cancelled
            reason = f"internal error: {type(exc).__name__}: {exc}"
            emit(BattleFailed(request.battle_id, "engine", reason))
            emit(StageStarted(request.battle_id, "ledger"))
            emit(BattleFinished(request.battle_id, 0.0, "failed"))
            ending = (ResultEnding("cancelled", "engine", request.cancel.reason) if request.cancel.cancelled else
                      ResultEnding("failed", "engine", reason))
            self.done.set()
            result = BattleResult(request.battle_id, "demo-task", 0, "mock:demo", ending,
                                  Scores.from_json({"cis_score": 0.0}))
            return BattleOutcome(result, 2, request.home / "battles.db")
        self.done.set()
        return BattleOutcome(scored_result(request.battle_id, self.cis), 1, request.home / "battles.db")


def endless_search(battle_id: str) -> Iterator[Event]:
    """Node events forever: only a cancel stops an engine replaying this."""
    node_id = 0
    while True:
        yield MctsNodeAdded(battle_id, node_id, None if node_id == 0 else node_id - 1, "probe")
        node_id += 1
