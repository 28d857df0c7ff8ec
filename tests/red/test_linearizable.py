"""The linearizability checker: known histories by hand, then properties against replays and brute force."""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logomesh.red.linearizable import Model, Operation, Outcome, check

Call = tuple[str, int]  # (method, argument)
S = TypeVar("S")


@dataclass(frozen=True)
class Register:
    """``("write", x) -> 0`` sets the value; ``("read", 0) -> x`` answers it. Starts at 0."""

    def init(self) -> int:
        return 0

    def step(self, state: int, input: Call, output: int) -> tuple[bool, int]:
        method, arg = input
        if method == "write":
            return True, arg
        return output == state, state

    def key(self, state: int) -> Hashable:
        return state


@dataclass(frozen=True)
class IntSet:
    """``("add", x) -> 0``; ``("has", x) -> 1 or 0``."""

    def init(self) -> frozenset[int]:
        return frozenset()

    def step(self, state: frozenset[int], input: Call, output: int) -> tuple[bool, frozenset[int]]:
        method, arg = input
        if method == "add":
            return True, state | {arg}
        return output == int(arg in state), state

    def key(self, state: frozenset[int]) -> Hashable:
        return state


@dataclass(frozen=True)
class Counter:
    """``("inc", 0) -> 0`` adds one; ``("get", 0) -> n`` answers the count."""

    def init(self) -> int:
        return 0

    def step(self, state: int, input: Call, output: int) -> tuple[bool, int]:
        if input[0] == "inc":
            return True, state + 1
        return output == state, state

    def key(self, state: int) -> Hashable:
        return state


History = list[Operation[Call, int]]


def op(process: int, invoke: int, complete: int, method: str, arg: int = 0, output: int = 0) -> Operation[Call, int]:
    return Operation(process, invoke, complete, (method, arg), output)


def w(process: int, invoke: int, complete: int, value: int) -> Operation[Call, int]:
    return op(process, invoke, complete, "write", value)


def r(process: int, invoke: int, complete: int, value: int) -> Operation[Call, int]:
    return op(process, invoke, complete, "read", output=value)


def replays(history: Sequence[Operation[Call, int]], model: Model[S, Call, int], order: Sequence[int]) -> bool:
    """Whether running ``order`` one call at a time through ``model`` gives every recorded answer."""
    state = model.init()
    for index in order:
        ok, state = model.step(state, history[index].input, history[index].output)
        if not ok:
            return False
    return True


def respects_real_time(history: Sequence[Operation[Call, int]], order: Sequence[int]) -> bool:
    """No call in ``order`` comes after one that was invoked strictly after it completed."""
    return not any(history[later].complete < history[earlier].invoke
                   for position, earlier in enumerate(order) for later in order[position + 1:])


# (name, model, history, linearizable, order when linearizable, or (prefix, stuck) when not)
TABLE: list[tuple[str, Model[Any, Call, int], History, bool, tuple[tuple[int, ...], ...]]] = [
    ("overlapping writes, read sees the first", Register(), [w(0, 0, 10, 1), w(1, 0, 10, 2), r(2, 20, 30, 1)],
     True, ((1, 0, 2),)),
    ("overlapping writes, read sees the second", Register(), [w(0, 0, 10, 1), w(1, 0, 10, 2), r(2, 20, 30, 2)],
     True, ((0, 1, 2),)),
    ("read overlapping a write sees the old value", Register(), [w(0, 0, 10, 1), r(1, 5, 15, 0)], True, ((1, 0),)),
    ("read overlapping a write sees the new value", Register(), [w(0, 0, 10, 1), r(1, 5, 15, 1)], True, ((0, 1),)),
    ("equal times are concurrent", Register(), [w(0, 0, 10, 1), r(1, 10, 20, 0)], True, ((1, 0),)),
    ("stale read after a completed write", Register(), [w(0, 0, 10, 1), r(1, 11, 20, 0)],
     False, ((0,), (1,))),
    ("read of a value overwritten before it began", Register(),
     [w(0, 0, 10, 1), w(0, 20, 30, 2), r(1, 40, 50, 1)], False, ((0, 1), (2,))),
    ("stale read after a fresh one", Register(), [w(0, 0, 10, 1), r(1, 20, 30, 1), r(1, 40, 50, 0)],
     False, ((0, 1), (2,))),
    ("reads disagree on the order of two writes", Register(),
     [w(0, 0, 10, 1), w(1, 0, 10, 2), r(2, 20, 30, 2), r(2, 40, 50, 1)], False, ((0, 1, 2), (3,))),
    ("the first longest prefix found is the one named", Register(),
     [w(0, 0, 10, 1), w(1, 0, 10, 2), r(2, 20, 30, 5)], False, ((0, 1), (2,))),
    ("two concurrent reads of values never written", Register(),
     [w(0, 0, 10, 1), r(1, 20, 30, 3), r(2, 20, 30, 4)], False, ((0,), (1, 2))),
    ("a first call nobody can answer", Register(), [r(0, 0, 10, 5), w(1, 20, 30, 5)], False, ((), (0,))),
    ("set: membership during the add, either answer", IntSet(),
     [op(0, 0, 10, "add", 1), op(1, 5, 15, "has", 1, 1), op(2, 5, 15, "has", 1, 0)], True, ((2, 0, 1),)),
    ("set: missing after the add completed", IntSet(),
     [op(0, 0, 10, "add", 1), op(1, 20, 30, "has", 2, 0), op(1, 40, 50, "has", 1, 0)], False, ((0, 1), (2,))),
    ("counter: a read between two increments", Counter(),
     [op(0, 0, 10, "inc"), op(1, 0, 30, "get", output=1), op(0, 20, 30, "inc"), op(1, 40, 50, "get", output=2)],
     True, ((0, 1, 2, 3),)),
    ("counter: a read that went backwards", Counter(),
     [op(0, 0, 10, "inc"), op(0, 20, 30, "inc"), op(1, 0, 35, "get", output=2), op(1, 40, 50, "get", output=1)],
     False, ((0, 1, 2), (3,))),
]


@pytest.mark.parametrize(("name", "model", "history", "expected", "detail"), TABLE, ids=[row[0] for row in TABLE])
def test_known_histories(name: str, model: Model[Any, Call, int], history: History, expected: bool,
                         detail: tuple[tuple[int, ...], ...]) -> None:
    outcome = check(history, model)
    assert outcome.linearizable is expected
    if expected:
        assert outcome.order == detail[0] and outcome.prefix == () and outcome.stuck == ()
        assert replays(history, model, outcome.order) and respects_real_time(history, outcome.order)
    else:
        assert (outcome.prefix, outcome.stuck) == detail and outcome.order == ()
    assert outcome.steps > 0


def test_empty_history_is_linearizable_with_an_empty_order() -> None:
    assert check([], Register()) == Outcome(True, order=(), steps=0)


def test_malformed_histories_are_rejected() -> None:
    with pytest.raises(ValueError, match="before its invocation"):
        check([w(0, 10, 9, 1)], Register())
    with pytest.raises(ValueError, match="same process"):
        check([w(0, 0, 10, 1), r(0, 5, 15, 1)], Register())
    assert check([w(0, 0, 10, 1), r(0, 10, 15, 1)], Register()).linearizable is True  # touching is not overlapping


def concurrent_increments(processes: int, rounds: int, final: int) -> History:
    """``processes`` threads each incrementing ``rounds`` times, all threads' n-th calls overlapping; a last read."""
    history = [op(p, 100 * k, 100 * k + 90, "inc") for k in range(rounds) for p in range(processes)]
    return [*history, op(processes, 100 * rounds, 100 * rounds + 10, "get", output=final)]


def test_a_budget_too_small_gives_no_verdict_and_a_large_one_decides() -> None:
    history = concurrent_increments(6, 3, final=19)  # 18 increments, then a read of 19: must search every order
    small = check(history, Counter(), budget=100)
    assert small == Outcome(None, steps=100)
    full = check(history, Counter())
    assert full.linearizable is False and full.steps > 100
    assert full.prefix == tuple(range(18)) and full.stuck == (18,)
    assert check(concurrent_increments(6, 3, final=18), Counter()).linearizable is True


def test_memoisation_keeps_equivalent_orders_from_being_searched_again() -> None:
    """Twelve concurrent increments have 12! orders but only 2**12 sets of placed calls."""
    history = [op(p, 0, 10, "inc") for p in range(12)] + [op(12, 20, 30, "get", output=13)]
    outcome = check(history, Counter())
    assert outcome.linearizable is False and outcome.steps <= 12 * 2**12


# --- properties -------------------------------------------------------------------------------------------

register_calls = st.one_of(st.tuples(st.just("write"), st.integers(0, 2)), st.tuples(st.just("read"), st.just(0)))


@st.composite
def widened_runs(draw: st.DrawFn) -> History:
    """A sequential run of the register, each call widened around its point; one process's calls in turn."""
    calls = draw(st.lists(st.tuples(st.integers(0, 3), register_calls), max_size=12))
    points = [10 * (position + 1) for position in range(len(calls))]  # the linearization points, increasing
    state, history = 0, []
    free_from: dict[int, int] = {}  # per process, the earliest time its next call may be invoked
    for position, (process, call) in enumerate(calls):
        point = points[position]
        later = [points[j] for j in range(position + 1, len(calls)) if calls[j][0] == process]
        output = state if call[0] == "read" else 0
        state = call[1] if call[0] == "write" else state
        invoke = max(free_from.get(process, 0), point - draw(st.integers(0, 40)))
        complete = min(point + draw(st.integers(0, 40)), later[0] - 1 if later else point + 40)
        history.append(Operation(process, invoke, complete, call, output))
        free_from[process] = complete + 1
    return history


@settings(max_examples=200, deadline=None)
@given(widened_runs())
def test_widened_sequential_runs_are_linearizable_and_the_witness_replays(history: History) -> None:
    outcome = check(history, Register())
    assert outcome.linearizable is True
    assert sorted(outcome.order) == list(range(len(history)))
    assert replays(history, Register(), outcome.order) and respects_real_time(history, outcome.order)


@st.composite
def small_histories(draw: st.DrawFn) -> History:
    """Up to six calls of the register at arbitrary times with arbitrary answers: either verdict is common."""
    history = []
    for process in range(draw(st.integers(0, 6))):
        invoke = draw(st.integers(0, 30))
        complete = invoke + draw(st.integers(0, 15))
        if draw(st.booleans()):
            history.append(w(process, invoke, complete, draw(st.integers(1, 2))))
        else:
            history.append(r(process, invoke, complete, draw(st.integers(0, 2))))
    return history


def brute_force(history: History) -> bool:
    return any(respects_real_time(history, order) and replays(history, Register(), order)
               for order in itertools.permutations(range(len(history))))


@settings(max_examples=200, deadline=None)
@given(small_histories())
def test_small_histories_agree_with_brute_force(history: History) -> None:
    outcome = check(history, Register())
    assert outcome.linearizable is brute_force(history)
    if outcome.linearizable:
        assert replays(history, Register(), outcome.order) and respects_real_time(history, outcome.order)
        return
    prefix, rest = outcome.prefix, [i for i in range(len(history)) if i not in outcome.prefix]
    assert replays(history, Register(), prefix) and respects_real_time(history, prefix)
    assert not any(history[j].complete < history[i].invoke for i in prefix for j in rest)  # nothing skipped
    ready = [i for i in rest if not any(history[j].complete < history[i].invoke for j in rest)]
    assert list(outcome.stuck) == sorted(ready, key=lambda i: (history[i].invoke, i))
    assert outcome.stuck and all(not replays(history, Register(), [*prefix, i]) for i in outcome.stuck)


@settings(max_examples=100, deadline=None)
@given(st.one_of(small_histories(), widened_runs()))
def test_checking_twice_gives_equal_outcomes(history: History) -> None:
    first, second = check(history, Register()), check(list(history), Register())
    assert first == second
    assert first.steps <= 200_000 and (first.order == () or first.linearizable is True)
