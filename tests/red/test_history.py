"""The race probe's client-side history, kept by the driver's wire and judged on the host (issue 31, point 2).

The wire pair here is the real one (``harness/wire.py`` over a socketpair, as in ``tests/sandbox``); the model is
the task's reference, built by its red.py's ``subject``. The same paths run in the sandbox, on both backends, in
``test_linearizability_docker.py``.
"""

from __future__ import annotations

import copy
import decimal
import socket
import threading
from collections import OrderedDict, deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_pair import WIRE, wire_pair

from logomesh.context import BattleContext
from logomesh.red import run_attack
from logomesh.red.executor import ProbeRun, ProbeSpec, Trial
from logomesh.red.history import MAX_VALUE_DEPTH, Unjudged, clone, linearizability, plain, same, shape
from logomesh.red.scenarios import load_red
from logomesh.tasks import load_task_dir

TASKS = Path(__file__).resolve().parents[2] / "tasks"


RATE = load_task_dir(TASKS / "rate-limiter")
RATE_RED = load_red(RATE)


def rate_subject(limit: int) -> Any:
    made = RATE_RED.subject(RATE.reference, {"limit": limit})
    assert made is not None
    return made


class Box:
    """An object of the code's, answered over the wire: add() counts, fail() raises, me() answers an object."""

    def __init__(self) -> None:
        self.n = 0

    def add(self, step: int) -> int:
        self.n += step
        return self.n

    def fail(self) -> None:
        raise KeyError("missing")

    def me(self) -> Box:
        return self


@pytest.fixture()
def driver() -> Iterator[tuple[Any, Any]]:
    """(the driver's peer, a Box of the answerer's as the driver sees it)."""
    with wire_pair(Box) as made:
        yield made


def test_the_driver_keeps_each_call_with_its_answer_and_times(driver: tuple[Any, Any]) -> None:
    peer, box = driver
    box.add(1)
    assert peer.history is None  # nothing is kept unless a probe asks
    peer.history = []
    box.add(2)
    with pytest.raises(KeyError):
        box.fail()
    kept = peer.history
    assert [entry[4] for entry in kept] == [["return", ["int", "3"]], ["raise", "KeyError"]]
    assert all(entry[1] <= entry[2] for entry in kept) and kept[0][2] <= kept[1][1]  # one thread: in order
    assert kept[0][3][:3] == ["callattr", box._lm_ref, "add"] and kept[0][3][3] == [["int", "2"]]
    assert kept[0][0] == kept[1][0] == threading.get_ident()


def test_a_full_history_ends_in_none_and_is_never_judged(driver: tuple[Any, Any]) -> None:
    peer, box = driver
    limit = WIRE["MAX_HISTORY"]
    WIRE["MAX_HISTORY"] = 2
    try:
        peer.history = []
        for _ in range(4):
            box.add(1)
    finally:
        WIRE["MAX_HISTORY"] = limit
    assert len(peer.history) == 3 and peer.history[-1] is None
    raw = [[0, e[1], e[2], e[3], e[4]] for e in peer.history[:-1]] + [None]
    assert linearizability(raw, Box) == []


def test_concurrent_calls_over_the_wire_are_judged_against_the_reference(driver: tuple[Any, Any]) -> None:
    """Eight threads add over connections of their own; the counter the driver kept is linearizable, and the
    same history with one answer changed to a total no serial order reaches is not."""
    peer, box = driver
    peer.history = []
    barrier = threading.Barrier(8)  # all alive at once: a thread's ident is reused only after it ends
    threads = [threading.Thread(target=lambda: [barrier.wait(), *(box.add(1) for _ in range(5))]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    raw = _numbered(peer.history)
    assert len(raw) == 40 and len({entry[0] for entry in raw}) == 8
    assert linearizability(raw, Box) == []
    forged = copy.deepcopy(raw)
    forged[-1][4] = ["return", ["int", format(41, "x")]]
    [verdict] = linearizability(forged, Box)
    assert verdict.startswith("not linearizable") and "obj.add(1) -> 41" in verdict


def _numbered(history: list[Any]) -> list[Any]:
    """What ``probe_race`` sends: threads numbered by first call, times from the first call."""
    threads: dict[int, int] = {}
    start = min(entry[1] for entry in history)
    return [[threads.setdefault(e[0], len(threads)), e[1] - start, e[2] - start, e[3], e[4]] for e in history]


def _call(thread: int, start: int, end: int, answer: Any, name: str = "allow", args: Any = None) -> list[Any]:
    sent = ["callattr", ["a", 5], name, [["str", "k"]] if args is None else args, []]
    return [thread, start, end, sent, answer]


TRUE, FALSE = ["return", ["bool", True]], ["return", ["bool", False]]
REFUSAL_THEN_GRANT = [_call(0, 0, 10, FALSE), _call(1, 20, 30, TRUE)]  # limit 1: a refusal before any grant
OVERLAPPING = [_call(0, 0, 10, FALSE), _call(1, 5, 30, TRUE)]  # the grant may have come first


@pytest.mark.parametrize(("history", "limit", "fine"), [
    (REFUSAL_THEN_GRANT, 1, False),
    (OVERLAPPING, 1, True),
    ([_call(0, 0, 10, TRUE), _call(1, 20, 30, FALSE)], 1, True),
    ([_call(0, 0, 10, TRUE), _call(1, 20, 30, TRUE)], 1, False),  # two grants, limit one
    ([_call(0, 0, 10, TRUE), _call(1, 20, 30, TRUE)], 2, True),
    ([_call(0, 0, 10, TRUE), _call(0, 10, 20, FALSE), _call(1, 10, 40, TRUE)], 1, False),  # ties: concurrent
    ([_call(0, 0, 10, ["raise", "ValueError"])], 1, False),  # the reference answers, it does not raise
])
def test_rate_limiter_histories(history: list[Any], limit: int, fine: bool) -> None:
    verdict = linearizability(history, rate_subject(limit))
    assert (verdict == []) is fine, verdict


def test_an_answer_that_is_not_plain_data_is_a_failed_observation() -> None:
    """An object of the code's (``["a", n]``) or a value past the limits: no serial order of the reference
    answers it, so it is never read as "linearizable"."""
    deep: Any = ["bool", True]
    for _ in range(MAX_VALUE_DEPTH + 2):
        deep = ["list", [deep]]
    for odd in (["a", 9], deep, ["float"]):
        [verdict] = linearizability([_call(0, 0, 10, ["return", odd])], rate_subject(1))
        assert "not linearizable" in verdict


@pytest.mark.parametrize("raw", [
    None, [], "history", [None],
    [_call(0, 0, 10, TRUE), None],  # cut short
    [_call(0, 0, 10, TRUE), [1, 20, 30, ["callattr", ["a", 6], "allow", [["str", "k"]], []], TRUE]],  # 2 objects
    [_call(0, 0, 10, TRUE, args=[["d", 3]])],  # an argument the host cannot rebuild
    [_call(0, 10, 0, TRUE)],  # completed before it was made
    [_call(0, 0, 10, TRUE, name="__class__")[:4]],
    [[0, 0, 10, ["getattr", ["a", 5], "x", [], []], TRUE]],
    [_call(0, 0, 10, ["return"])],
])
def test_a_history_the_host_cannot_read_gives_no_verdict(raw: Any) -> None:
    assert linearizability(raw, rate_subject(1)) == []


# -- values -----------------------------------------------------------------------------------------
PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    | st.binary(max_size=4) | st.decimals(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
    | st.frozensets(st.integers(), max_size=3),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(value=PLAIN)
def test_plain_reads_exactly_what_the_wire_encodes(value: Any) -> None:
    encoded = WIRE["Peer"]("d", socket.socket(), lambda op, name: False).encode(value)
    assert same(plain(encoded), value)
    assert not same(plain(encoded), [value])


@pytest.mark.parametrize("encoded", [["a", 1], ["d", 2], ["m", 1, "f"], ["int", "zz"], ["list", 3], "str", []])
def test_plain_refuses_references_and_malformed_values(encoded: Any) -> None:
    with pytest.raises(Unjudged):
        plain(encoded)


class Holder:
    """State as a reference keeps it: a lock, containers, a function."""

    def __init__(self, items: Any) -> None:
        self.lock = threading.Lock()
        self.rlock = threading.RLock()
        self.items = items
        self.order: OrderedDict[Any, Any] = OrderedDict(a=[1], b=deque([2], maxlen=3))
        self.clock = lambda: 5.0


@settings(max_examples=100, deadline=None)
@given(value=PLAIN)
def test_clone_is_an_independent_deep_copy(value: Any) -> None:
    original = Holder([value, {"k": [value]}])
    copied = clone(original, {})
    assert copied is not original and type(copied) is Holder
    assert shape(copied) == shape(original) and same(copied.items, original.items)
    assert copied.lock is not original.lock and copied.rlock is not original.rlock
    assert copied.clock is original.clock  # shared, as deepcopy shares a function
    copied.items[1]["k"].append(0)
    copied.order["b"].append(3)
    copied.order.move_to_end("a")
    assert original.items[1]["k"] == [value] and list(original.order) == ["a", "b"] and original.order["b"] == \
        deque([2])
    with original.lock:  # the copy's lock is free whatever the original's holds
        assert copied.lock.acquire(blocking=False)


def test_shape_tells_apart_what_a_call_could_tell_apart() -> None:
    a, b = OrderedDict(x=1, y=2), OrderedDict(y=2, x=1)
    assert shape(a) != shape(b)  # an LRU's recency is state
    assert shape({1: True}) != shape({1: 1})  # True is not 1
    assert shape(decimal.Decimal("1.0")) == shape(decimal.Decimal("1.0"))
    with pytest.raises(Unjudged):
        shape(socket.socket)  # a class it cannot describe


# -- the agent ----------------------------------------------------------------------------------------
def _race_trial(threads: int, calls: int, limit: int, refusal_first: bool) -> Trial:
    """What the rate limiter's race scenario records: ``threads`` x ``calls`` allow('k') answers, exactly
    ``limit`` grants; the history either serial-consistent, or with one refusal that completed before any call
    that was granted began (which only a race produces)."""
    answers = [True] * limit + [False] * (threads * calls - limit)
    if refusal_first:
        answers = [False, *answers[:-1]]
        if limit < len(answers):  # the grant count stays exact where there are refusals to trade
            answers[limit] = True
    history = [_call(i % threads, 100 * i, 100 * i + 50, TRUE if a else FALSE) for i, a in enumerate(answers)]
    return Trial("ok", result={"observed": {"answers": answers, "errors": []}, "history": history})


class RaceRunner:
    """Answers the race probe with canned histories; every other probe finds nothing to look at."""

    def __init__(self, serial_wrong: bool) -> None:
        self.serial_wrong = serial_wrong

    def __call__(self, spec: ProbeSpec, seed: int) -> ProbeRun:
        if spec.probe != "race":
            return ProbeRun(tuple(Trial("exception", exc="ValueError") for _ in range(spec.trials)))
        args = spec.args
        threads, calls, limit = int(args["threads"]), int(args["calls"]), int(args["limit"])
        concurrent = float(args["chance"]) > 0
        trial = _race_trial(threads, calls, limit, refusal_first=concurrent or self.serial_wrong)
        return ProbeRun(tuple(trial for _ in range(spec.trials)))


@pytest.mark.parametrize("serial_wrong", [False, True])
def test_an_unexplained_history_is_a_race_only_where_the_serial_control_is_explained(serial_wrong: bool) -> None:
    """A refusal before a grant under concurrency is a race (CWE-362); the same code answering so with one thread
    is wrong without any race, and the race family leaves it to the families that judge serial behaviour."""
    report = run_attack(RATE, RATE.reference, RaceRunner(serial_wrong), BattleContext(seed=3), budget_s=20)
    races = [f for f in report.findings if f.family == "race"]
    serial = [f for f in report.findings if f.family == "stateful-model"]
    if serial_wrong:  # wrong without concurrency: said so once, as a divergence from the model, never dropped
        assert races == []
        assert [(f.severity, f.cwe, f.summary) for f in serial] == [
            ("medium", "CWE-840", "RateLimiter: stateful-model (the race probe's serial control)")]
        assert serial[0].evidence == "9 grants for one key at one clock reading; the limit is 10"  # the control's
        assert serial[0].confirmations == 2
    else:
        assert len(races) == 1 and races[0].cwe == "CWE-362" and "not linearizable" in races[0].evidence
        assert serial == []
