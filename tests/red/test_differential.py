"""The differential family: inputs from the task's own call sites, mutated; the reference as the oracle.

Pure parts (call sites, mutation, comparison) run here; attacks run in the
real sandbox against code that passes the hidden tests but differs from the
reference on some input, and against correct code, which must draw nothing.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.red.attacks.base import Variant
from logomesh.red.attacks.differential import (
    PROBE,
    DifferentialFamily,
    call_sites,
    compare,
    driver,
    mutated_inputs,
    reshape,
)
from logomesh.red.executor import ProbeSpec, Trial
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.sandbox.base import Observed, ObservedSuite
from logomesh.tasks import TaskSpec, load_task_dir

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def fib_task() -> TaskSpec:
    return load_task_dir(TASKS / "fib-recursive")


def test_call_sites_are_the_literal_calls_of_the_entry_point() -> None:
    drivers = {"test_x.py": "from solution import f\nimport solution\n"
                            "def test_a():\n    see(f(1, 'a'))\n    see(solution.f([2, 3], 'b'))\n"
                            "    see(f(n, 'c'))\n    see(candidate(4, 'd'))\n    see(g(5))\n    see(f(1, 'a'))\n"}
    assert call_sites(drivers, "f") == [(1, "a"), ([2, 3], "b"), (4, "d")]
    described = "f(a, b) does things.\n    >>> f(7, 'x')\n    3\n    >>> f(y, 'z')\n"
    assert call_sites(drivers, "f", described)[-1] == (7, "x")


def test_mutated_inputs_keep_types_are_new_and_are_seeded() -> None:
    sites = [(3, "ab", [1, 2])]
    first = mutated_inputs(sites, 0, 20, "tag")
    assert first == mutated_inputs(sites, 0, 20, "tag")
    assert first != mutated_inputs(sites, 1, 20, "tag")
    assert len(first) == len(set(first)) == 20 and repr(sites[0]) not in first
    for text in first:
        value = eval(text)  # our own literal text
        assert [type(v) for v in value] == [int, str, list]


def test_string_mutations_keep_the_seeds_format_half_the_time() -> None:
    """A date stays three numbers between dashes, a numeric string stays a number: inputs the reference accepts
    (HumanEval valid_date, closest_integer), where arbitrary text is mostly refused."""
    rng = random.Random(7)
    dates = [reshape("11-01-2012", rng) for _ in range(200)]
    assert all(re.fullmatch(r"-?\d+-\d+-\d+", d) for d in dates)
    assert {"01-11-2012", "11-02-2012"} <= set(dates)  # day and month traded, a neighbour
    numbers = [reshape("-0.5", rng) for _ in range(200)]
    assert all(re.fullmatch(r"-?\d+\.\d+", n) for n in numbers) and "0.5" in numbers and "-1.5" in numbers
    words = {reshape("p Z", rng) for _ in range(200)}
    assert all(re.fullmatch(r"[A-Za-z] [A-Za-z]", w) for w in words) and "Z p" in words
    listed = {reshape("five zero four seven nine eight", rng) for _ in range(300)}  # HumanEval/19's seed
    assert "eight nine seven four zero five" in listed  # every order at once: a tie broken by position shows
    assert reshape("?!", rng) == "?!"  # nothing to keep a format by
    mutated = [eval(t)[0] for t in mutated_inputs([("11-01-2012",)], 0, 40, "d")]  # our own literal text
    shaped = [d for d in mutated if re.fullmatch(r"-?\d+-\d+-\d+", d)]
    assert len(shaped) >= len(mutated) / 3, mutated


def test_arguments_are_reordered_and_repeated() -> None:
    """The same sides in another order (right_angle_triangle), the same interval twice (intersection)."""
    sides = {eval(t) for t in mutated_inputs([(3, 4, 5)], 0, 60, "s")}
    assert {(4, 3, 5), (3, 3, 5)} & sides and any(sorted(s) == [3, 4, 5] and s != (3, 4, 5) for s in sides)
    intervals = {eval(t) for t in mutated_inputs([((0, 4), (2, 5))], 0, 60, "i")}
    assert ((0, 4), (0, 4)) in intervals or ((2, 5), (2, 5)) in intervals
    assert ((2, 5), (0, 4)) in intervals


def _observed(name: str, *obs: object, status: str = "observed") -> Observed:
    return Observed(name, status, tuple(obs))  # type: ignore[arg-type]


def test_only_inputs_the_reference_answers_count() -> None:
    inputs = ["(1,)", "(2,)", "(3,)", "(4,)", "(5,)"]
    want = ObservedSuite(tests=(
        _observed("test_lm_differential.test_0", ["returned", ["int", "1"]]),
        _observed("test_lm_differential.test_1", ["raised", "ValueError"]),  # outside the contract
        _observed("test_lm_differential.test_2", ["returned", ["int", "3"]]),
        _observed("test_lm_differential.test_3", ["returned", ["int", "4"]]),
        _observed("test_lm_differential.test_4", ["returned", ["int", "5"]]),
    ))
    got = ObservedSuite(tests=(
        _observed("test_lm_differential.test_0", ["returned", ["int", "1"]]),
        _observed("test_lm_differential.test_1", ["returned", ["int", "0"]]),
        _observed("test_lm_differential.test_2", ["returned", ["bool", True]]),
        _observed("test_lm_differential.test_3", ["raised", "RecursionError"]),  # a resource limit: not ours
        _observed("test_lm_differential.test_4", status="timeout"),
    ))
    result = compare(got, want, inputs)
    assert [d.input for d in result.diverged] == ["(3,)"]
    assert result.checked == 2
    assert result.to_json() == {"diverged": [{"input": "(3,)", "got": '[["returned",["bool",true]]]',
                                              "want": '[["returned",["int","3"]]]'}], "checked": 2}


def test_the_trial_made_of_a_comparison_is_judged_and_shrunk_to_its_shortest_divergence() -> None:
    inputs = ["(10,)", "(3,)", "(4,)"]
    want = ObservedSuite(tests=tuple(_observed(f"test_lm_differential.test_{i}", ["returned", ["int", "1"]])
                                     for i in range(3)))
    got = ObservedSuite(tests=(
        _observed("test_lm_differential.test_0", ["returned", ["int", "2"]]),
        _observed("test_lm_differential.test_1", ["returned", ["int", "1"]]),
        _observed("test_lm_differential.test_2", ["returned", ["int", "0"]]),
    ))
    trial = Trial("ok", compare(got, want, inputs).to_json())
    variant = Variant("mutated-1", ProbeSpec(PROBE, {"entry": "f", "inputs": inputs}), "3 inputs to f")
    family = DifferentialFamily()
    verdict = family.judge(variant, trial)
    assert verdict.hit
    assert verdict.observation == 'f(10): [["returned",["int","2"]]], the reference [["returned",["int","1"]]]'
    assert family.shrink(variant, trial).spec.args["inputs"] == ["(4,)"]  # the shorter of the two diverging


def test_the_driver_holds_no_expected_value() -> None:
    text = driver("fib", ["(5,)", "(7,)"])["test_lm_differential.py"]
    assert "call(getattr(solution, 'fib'), *(5,))" in text and "5)" not in text.replace("*(5,)", "")


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


REFERENCE = (TASKS / "fib-recursive" / "reference" / "solution.py").read_text()
# Both differ only beyond n = 300, where the hidden drivers never look.
OFF_BY_ONE_SOMETIMES = REFERENCE.replace(
    "    return _pair(n)[0]\n", "    if n % 2 and n > 300:\n        return _pair(n)[0] + 1\n    return _pair(n)[0]\n")
LOOKALIKE = REFERENCE.replace(
    "    return _pair(n)[0]\n", "    value = _pair(n)[0]\n    return Int(value) if n > 300 else value\n") + (
    "\n\nclass Int(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n")


@pytest.mark.docker
@pytest.mark.parametrize("source", [OFF_BY_ONE_SOMETIMES, LOOKALIKE], ids=["off-by-one", "look-alike"])
def test_code_that_passes_the_hidden_tests_but_differs_is_found(box: Sandbox, source: str) -> None:
    from logomesh.tasks.hidden_suite import run_hidden

    task = fib_task()
    assert run_hidden(box, task, source).suite.failed == 0  # the weak point: every hidden test passes
    report = attack(task, source, box, BattleContext(seed=1), budget_s=10)
    found = [f for f in report.findings if f.family == "differential"]
    assert found and found[0].severity == "medium" and found[0].cwe == "CWE-684"
    assert found[0].reproducer.startswith("fib(") and found[0].confirmations == 2


@pytest.mark.docker
def test_correct_code_draws_no_differential_finding(box: Sandbox) -> None:
    task = fib_task()
    good = task.labelled_submission("good").submission.source
    report = attack(task, good, box, BattleContext(seed=1), budget_s=10)
    assert [f for f in report.findings if f.family == "differential"] == []
    assert report.stats.probes > 0
