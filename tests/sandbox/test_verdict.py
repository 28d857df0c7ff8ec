"""Observation encoding and host-side verdicts, table-driven (no sandbox: both are plain functions).

``observe.encode`` runs in the box in real battles; here it runs in-process on
values built to imitate others (look-alikes), to show what it records.
"""

from __future__ import annotations

import decimal
from typing import Any

import pytest

from logomesh.sandbox.base import Observed, ObservedSuite, TimeBound
from logomesh.sandbox.discover import SuiteSourceError, timing_bounds
from logomesh.sandbox.harness import observe
from logomesh.sandbox.verdict import canonical, judge_suite, judge_test, observations_bytes, same


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class SneakyInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class SneakyList(list[Any]):
    def __eq__(self, other: object) -> bool:
        return True


class LyingMeta(type):
    @property
    def __mro__(cls) -> tuple[type, ...]:  # type: ignore[override]
        return (ValueError, BaseException, object)


class NotReallyValueError(RuntimeError, metaclass=LyingMeta):
    pass


ENCODED = [
    (True, ["bool", True]),
    (1, ["int", "1"]),
    (1.5, ["float", "1.5"]),
    ("x", ["str", "x"]),
    (b"\x00\xff", ["bytes", "00ff"]),
    (None, ["none"]),
    ([1, (2,)], ["list", [["int", "1"], ["tuple", [["int", "2"]]]]]),
    (decimal.Decimal("1.50"), ["decimal", "1.50"]),
    (10**30000, ["int", "0x" + format(10**30000, "x")]),
]


@pytest.mark.parametrize(("value", "expected"), ENCODED, 
                         ids=[f"{type(v).__name__}{i}" for i, (v, _) in enumerate(ENCODED)])
def test_plain_values_are_encoded_exactly(value: Any, expected: Any) -> None:
    assert observe.encode(value, observe.Recorder()) == expected


@pytest.mark.parametrize("lookalike", [AlwaysEqual(), SneakyInt(1), SneakyList([True])],
                         ids=["always-equal", "int-subclass", "list-subclass"])
def test_look_alikes_are_opaque_and_never_the_same_as_a_plain_value(lookalike: Any) -> None:
    encoded = observe.encode(lookalike, observe.Recorder())
    assert encoded[0] == "ref"
    for plain in (["bool", True], ["int", "1"], ["list", [["bool", True]]]):
        assert not same(canonical(encoded), plain)


def test_identity_is_kept_by_reference_numbers() -> None:
    recorder = observe.Recorder()
    first, second = object(), object()
    assert [observe.encode(v, recorder) for v in (first, second, first)] == [["ref", 0], ["ref", 1], ["ref", 0]]


def test_cycles_and_huge_values_are_bounded() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert observe.encode(loop, observe.Recorder()) == ["list", [["cycle"]]]
    recorder = observe.Recorder()
    observe.RECORDER, saved = recorder, observe.RECORDER
    try:
        observe.see(list(range(observe.MAX_NODES + 1)))
        assert recorder.records == [["too-large"]]
    finally:
        observe.RECORDER = saved


def test_exceptions_are_named_by_their_real_builtin_ancestor() -> None:
    class Custom(KeyError):
        pass

    assert observe.exception_name(Custom()) == "KeyError"
    assert observe.exception_name(NotReallyValueError()) == "RuntimeError"  # the metaclass's __mro__ is ignored
    assert observe.exception_name(TypeError(), (TypeError, ValueError)) == "TypeError|ValueError"
    assert observe.exception_name(ValueError(), (TypeError, ValueError)) == "TypeError|ValueError"
    assert observe.exception_name(KeyError(), (TypeError, ValueError)) == "KeyError"


SAME = [
    (["float", "0.1"], ["float", repr(0.1 + 1e-17)], True),
    (["float", "0.1"], ["float", "0.1000001"], False),
    (["float", "nan"], ["float", "nan"], True),
    (["float", "nan"], ["float", "0.0"], False),
    (["float", "inf"], ["float", "inf"], True),
    (["decimal", "1.0"], ["decimal", "1.00"], True),
    (["decimal", "1.0"], ["decimal", "1.01"], False),
    (["bool", True], ["int", "1"], False),
    (["int", "1"], ["float", "1.0"], False),
    (["list", [["int", "1"]]], ["tuple", [["int", "1"]]], False),
    (["str", "a"], ["str", "a"], True),
]


@pytest.mark.parametrize(("got", "want", "equal"), SAME, ids=[f"{g}-{w}" for g, w, _ in SAME])
def test_observation_equality_is_type_strict(got: Any, want: Any, equal: bool) -> None:
    assert same(got, want) is equal


def test_sets_and_dicts_compare_without_order() -> None:
    a = ["set", [["str", "x"], ["str", "y"]]]
    b = ["set", [["str", "y"], ["str", "x"]]]
    assert same(canonical(a), canonical(b))
    d1 = ["dict", [[["str", "k"], ["int", "1"]], [["str", "j"], ["int", "2"]]]]
    d2 = ["dict", [[["str", "j"], ["int", "2"]], [["str", "k"], ["int", "1"]]]]
    assert same(canonical(d1), canonical(d2))
    assert not same(canonical(["list", a[1]]), canonical(["list", b[1]]))


def _obs(name: str, *observations: Any, duration: float = 0.01, status: str = "observed",
         cpu: float | None = 0.01) -> Observed:
    return Observed(name, status, tuple(observations), "", duration, cpu)  # type: ignore[arg-type]


def test_verdicts_follow_the_reference_and_the_monitor() -> None:
    want = _obs("t", ["value", ["int", "3"]])
    assert judge_test(_obs("t", ["value", ["int", "3"]]), want).status == "passed"
    assert judge_test(_obs("t", ["value", ["int", "4"]]), want).status == "failed"
    assert judge_test(_obs("t"), want).status == "failed"  # nothing observed is no pass
    assert judge_test(_obs("t", ["value", ["int", "3"]], ["value", ["int", "3"]]), want).status == "failed"
    assert judge_test(_obs("t", status="timeout"), want).status == "timeout"
    wall = TimeBound(0.08, 2.0, "wall")
    assert judge_test(_obs("t", ["value", ["int", "3"]], duration=0.01), want, wall).status == "failed"
    assert judge_test(_obs("t", ["value", ["int", "3"]], duration=3.0), want, wall).status == "failed"
    assert judge_test(_obs("t", ["value", ["int", "3"]], duration=0.1), want, wall).status == "passed"
    assert judge_test(_obs("t", ["value", ["int", "3"]]), _obs("t", status="crashed")).status == "error"


def test_a_bound_is_judged_on_the_clock_it_names() -> None:
    """Work is bounded in the code's CPU time, so a machine busy with other work does not fail it; waiting is
    bounded in wall time; a bound whose clock was not measured is an error, never a pass."""
    want = _obs("t", ["value", ["int", "3"]])
    loaded = _obs("t", ["value", ["int", "3"]], duration=2.5, cpu=0.2)  # little work, a long wait for a CPU
    busy = _obs("t", ["value", ["int", "3"]], duration=1.2, cpu=1.1)
    assert judge_test(loaded, want, TimeBound(None, 1.0, "cpu")).status == "passed"
    slow = judge_test(busy, want, TimeBound(None, 1.0, "cpu"))
    assert slow.status == "failed"
    assert slow.reason == "took 1.100 s of CPU time, read from the kernel, at most 1 s allowed"
    waited = judge_test(loaded, want, TimeBound(None, 1.0, "wall"))
    assert waited.reason == "took 2.500 s of wall time, at most 1 s allowed"
    unmeasured = judge_test(_obs("t", ["value", ["int", "3"]], cpu=None), want, TimeBound(None, 1.0, "cpu"))
    assert unmeasured.status == "error" and "no measurement of its CPU time" in unmeasured.reason


def test_a_differing_observation_names_what_was_expected_beside_what_was_got() -> None:
    outcome = judge_test(_obs("t", ["value", ["int", "2"]]), _obs("t", ["value", ["int", "3"]]))
    assert outcome.reason == 'observation 1 of 1 differs: got ["value",["int","2"]], expected ["value",["int","3"]]'


def test_tampering_fails_the_whole_suite_and_bytes_are_deterministic() -> None:
    want = ObservedSuite(tests=(_obs("a", ["value", ["set", [["int", "1"], ["int", "2"]]]]),))
    got = ObservedSuite(tests=(_obs("a", ["value", ["set", [["int", "2"], ["int", "1"]]]]),),
                        tamper_reasons=("a trace hook was installed (sys.settrace)",))
    run = judge_suite(got, want)
    assert run.tampered and run.passed == 0 and "trace hook" in run.outcomes[0].reason
    again = ObservedSuite(tests=(_obs("a", ["value", ["set", [["int", "2"], ["int", "1"]]]], duration=9.0),))
    assert observations_bytes(want) == observations_bytes(again)


def test_timing_bounds_are_read_from_the_source_as_literals() -> None:
    source = ("from observe import within\n"
              "class TestT:\n"
              "    @within(min_s=0.08, max_s=2, clock='wall')\n"
              "    def test_wait(self):\n        pass\n"
              "@within(None, 0.5, 'cpu')\n"
              "def test_fast():\n    pass\n")
    assert timing_bounds({"test_t.py": source}) == {"test_t.TestT.test_wait": TimeBound(0.08, 2.0, "wall"),
                                                    "test_t.test_fast": TimeBound(None, 0.5, "cpu")}
    with pytest.raises(SuiteSourceError, match="literal"):
        timing_bounds({"test_t.py": "from observe import within\nLIMIT = 1\n@within(max_s=LIMIT, clock='cpu')\n"
                                    "def test_x():\n    pass\n"})
    with pytest.raises(SuiteSourceError, match="must name its clock: clock='cpu'"):
        timing_bounds({"test_t.py": "from observe import within\n@within(max_s=1)\ndef test_x():\n    pass\n"})
    with pytest.raises(SuiteSourceError, match="must name its clock"):
        timing_bounds({"test_t.py": "from observe import within\n@within(max_s=1, clock='process')\n"
                                    "def test_x():\n    pass\n"})
