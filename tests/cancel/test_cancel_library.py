"""A cancelled battle stops in the stage it was in, kills its box, and is recorded as cancelled (both backends).

Each test runs a real battle (real purple agent over HTTP on loopback, a real box, the real ledger)
and cancels its token while the battle is busy in one stage. What proves the stop is what happened
after the cancel (no test result, no finding, no further search; the box killed from outside), not the clock;
the latency itself is measured by benchmarks/console_bench.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cancel_helpers import (
    HANG_GUARD_S,
    PURPLE_WAIT_S,
    SLEEPER,
    BoxSpy,
    Trigger,
    box_gone,
    hanging_purple,
    make_home,
    nodes_after_cancel,
    purple_serving,
    search_started,
    stage_is,
)

import logomesh.sandbox
from ledger import Ledger
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import run_battle
from logomesh.cancel import CANCEL_REASON, CancelToken
from logomesh.events import BattleCancelled, BattleFailed, FindingConfirmed, TestResult

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[BoxSpy]:
    spy = BoxSpy(logomesh.sandbox.open_sandbox)
    monkeypatch.setattr(logomesh.sandbox, "open_sandbox", spy)
    yield spy


@pytest.fixture
def purple(tmp_path: Path) -> Iterator[str]:
    with purple_serving(tmp_path / "responses", {"sleeper": SLEEPER}) as url:
        yield url


def _check_recorded(home: Path, request: BattleRequest, trigger: Trigger, stage: str) -> None:
    """The outcome, the ledger entry and the events all say: cancelled in ``stage``, nothing after it."""
    assert trigger.cancelled_at is not None and trigger.cancelled_after is not None
    with Ledger.open(home) as led:
        stored = led.get(request.battle_id)
    assert stored is not None
    result = stored.result
    assert (result["status"], result["stage"], result["reason"]) == ("cancelled", stage, CANCEL_REASON)
    assert "failed_stage" not in result and result["cis_score"] == 0.0
    cancelled = [e for e in trigger.events if isinstance(e, BattleCancelled)]
    assert [(e.stage, e.reason) for e in cancelled] == [(stage, CANCEL_REASON)]
    after = trigger.events[trigger.cancelled_after:]
    assert not any(isinstance(e, TestResult | FindingConfirmed | BattleFailed) for e in after), after


def _run(request: BattleRequest, trigger: Trigger) -> float:
    """Run the battle; seconds from the cancel to ``run_battle`` returning (for a hang guard only)."""
    outcome = run_battle(request, trigger)
    stopped = time.monotonic()
    assert outcome.cancelled and not outcome.failed
    assert trigger.cancelled_at is not None
    return stopped - trigger.cancelled_at


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_while_the_purple_agent_is_answering(tmp_path: Path, spy: BoxSpy, backend: str) -> None:
    home = make_home(tmp_path)
    token = CancelToken()
    with hanging_purple() as url:
        request = BattleRequest(task_id="rate-limiter", battle_id="cancel-purple", seed=0, home=home,
                                purple_url=url, sandbox=backend, purple_timeout_s=PURPLE_WAIT_S, cancel=token)
        trigger = Trigger(token, stage_is("purple"), delay_s=0.3)
        assert _run(request, trigger) < HANG_GUARD_S  # only the abandoned request ends this battle at all
    _check_recorded(home, request, trigger, "purple")
    assert spy.boxes == []  # it never got as far as a sandbox


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_while_the_hidden_tests_run_kills_the_box(tmp_path: Path, spy: BoxSpy, purple: str,
                                                         backend: str) -> None:
    home = make_home(tmp_path)
    token = CancelToken()
    request = BattleRequest(task_id="rate-limiter", battle_id="sleeper", seed=0, home=home, purple_url=purple,
                            sandbox=backend, cancel=token)
    trigger = Trigger(token, stage_is("sandbox"), delay_s=0.5, after=spy.opened)  # the suite is under way
    _run(request, trigger)
    _check_recorded(home, request, trigger, "sandbox")
    assert len(spy.boxes) == 1 and box_gone(*spy.boxes[0])
    assert spy.killed_from_outside()  # not left to time its tests out and closed by the battle afterwards


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_during_the_red_search_kills_the_box(tmp_path: Path, spy: BoxSpy, purple: str, backend: str) -> None:
    home = make_home(tmp_path)
    token = CancelToken()
    request = BattleRequest(task_id="lru-cache", battle_id="lru-cache:no-lock:cancel", seed=0, home=home,
                            purple_url=purple, sandbox=backend, red_budget_s=120.0, cancel=token)
    trigger = Trigger(token, search_started, delay_s=0.2)
    _run(request, trigger)
    _check_recorded(home, request, trigger, "red")
    assert nodes_after_cancel(trigger) <= 1  # the search stopped (left alone, it plays ~26 leaves)
    assert len(spy.boxes) == 1 and box_gone(*spy.boxes[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_while_scoring(tmp_path: Path, spy: BoxSpy, purple: str, backend: str) -> None:
    home = make_home(tmp_path)
    token = CancelToken()
    request = BattleRequest(task_id="rate-limiter", battle_id="rate-limiter:good:cancel", seed=0, home=home,
                            purple_url=purple, sandbox=backend, red=False, cancel=token)
    trigger = Trigger(token, stage_is("scoring"))  # cancelled as scoring begins
    _run(request, trigger)
    _check_recorded(home, request, trigger, "scoring")
    assert len(spy.boxes) == 1 and box_gone(*spy.boxes[0])


def test_a_token_cancelled_before_the_battle_records_it_cancelled_at_once(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    token = CancelToken()
    token.cancel()
    request = BattleRequest(task_id="rate-limiter", battle_id="rate-limiter:good:early", seed=0, home=home,
                            mock_variant="good", cancel=token)
    outcome = run_battle(request)
    assert outcome.result.to_json()["status"] == "cancelled" and outcome.result.to_json()["stage"] == "purple"
    assert outcome.sequence is not None


@pytest.mark.bwrap
def test_an_uncancelled_battle_is_untouched_by_its_token(tmp_path: Path) -> None:
    """The token is polled, never in the way: a battle nobody cancels scores as before."""
    home = make_home(tmp_path)
    request = BattleRequest(task_id="rate-limiter", battle_id="rate-limiter:good:kept", seed=0, home=home,
                            mock_variant="good", sandbox="bwrap", red=False, cancel=CancelToken())
    outcome = run_battle(request)
    assert outcome.result.to_json()["status"] == "scored", outcome.result.to_json().get("reason")
    assert "stage" not in outcome.result.to_json()
