"""The cancel token's own contract: hooks, abandoning work, and the MCTS step check."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from pathlib import Path as PathLib

import pytest

from logomesh.cancel import Cancelled, CancelToken, abandon_on_cancel
from logomesh.red.mcts import Action, Evaluation, Mcts, MctsConfig, Path


def test_a_hook_runs_on_cancel_off_the_cancelling_thread_and_only_while_registered() -> None:
    token = CancelToken()
    ran: list[str] = []
    done = threading.Event()
    with token.hook(lambda: ran.append("outside")):
        pass  # unregistered again before the cancel
    def note() -> None:
        ran.append(threading.current_thread().name)
        done.set()

    with token.hook(note):
        token.cancel("stop")
        assert done.wait(5)
    assert ran == ["logomesh-cancel"]
    assert token.cancelled and token.reason == "stop"
    with pytest.raises(Cancelled, match="stop"):
        token.check()


def test_cancel_returns_before_a_slow_hook_ends_and_a_failing_hook_does_not_stop_the_others() -> None:
    token = CancelToken()
    release, second = threading.Event(), threading.Event()

    def slow() -> None:
        release.wait(10)

    def failing() -> None:
        raise RuntimeError("boom")

    with token.hook(slow), token.hook(failing), token.hook(second.set):
        token.cancel()
        assert not second.is_set()  # cancel returned while the first hook still held the hook thread
        release.set()
        assert second.wait(5)


def test_a_hook_registered_after_the_cancel_runs_at_once_and_cancel_is_once() -> None:
    token = CancelToken()
    token.cancel("first")
    token.cancel("second")
    ran: list[int] = []
    with token.hook(lambda: ran.append(1)):
        assert ran == [1]
    assert token.reason == "first"


def test_abandon_on_cancel_returns_the_value_or_the_error_of_work_not_cancelled() -> None:
    token = CancelToken()
    assert abandon_on_cancel(lambda: 42, token) == 42

    def broken() -> int:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        abandon_on_cancel(broken, token)


def test_abandon_on_cancel_stops_waiting_for_work_that_goes_on() -> None:
    token = CancelToken()
    release = threading.Event()
    threading.Timer(0.1, token.cancel).start()
    with pytest.raises(Cancelled):
        abandon_on_cancel(lambda: release.wait(30), token)
    assert not release.is_set()  # the work was still running when the caller got Cancelled
    release.set()


class _Endless:
    """A search problem that never runs out of leaves."""

    def actions(self, path: Path) -> Sequence[Action]:
        return [Action(f"a{i}") for i in range(3)] if len(path) < 3 else []

    def evaluate(self, path: Path, rng: random.Random) -> Evaluation:
        return Evaluation(rng.random())


class _CancelsAfter(_Endless):
    """``_Endless`` that cancels ``cancel`` during its ``after``-th evaluation."""

    def __init__(self, cancel: CancelToken, after: int) -> None:
        self.cancel = cancel
        self.after = after
        self.evaluations = 0

    def evaluate(self, path: Path, rng: random.Random) -> Evaluation:
        self.evaluations += 1
        if self.evaluations == self.after:
            self.cancel.cancel()
        return super().evaluate(path, rng)


def test_the_search_checks_its_token_before_every_iteration() -> None:
    cancel = CancelToken()
    problem = _CancelsAfter(cancel, 7)
    search = Mcts(problem, MctsConfig(max_time_seconds=60), seed=1, cancel=cancel)
    with pytest.raises(Cancelled):
        search.run()
    assert problem.evaluations == 7
    assert search.root.visits == 7  # seven iterations ran, none after the cancel


def test_the_never_token_is_one_token_nobody_can_cancel() -> None:
    from logomesh.battle.request import BattleRequest
    from logomesh.context import BattleContext

    never = CancelToken.never()
    assert CancelToken.never() is never
    with pytest.raises(TypeError, match="cannot be cancelled"):
        never.cancel()
    never.check()  # still not cancelled
    assert not never.cancelled
    assert BattleContext(seed=0).cancel is never
    assert BattleRequest(task_id="t", battle_id="b", seed=0, home=PathLib(".")).cancel is never
    assert BattleContext(seed=0, cancel=CancelToken()).cancel is not never
