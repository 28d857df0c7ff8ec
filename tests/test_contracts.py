"""A task's contract: parsing, the declarative answer equivalences, and how suites and divergences read it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from logomesh.red.attacks.differential import compare
from logomesh.sandbox.base import Observed, ObservedSuite
from logomesh.sandbox.harness import observe
from logomesh.sandbox.verdict import judge_suite
from logomesh.tasks import TaskError, load_task_dir
from logomesh.tasks.contract_check import literal, parameters, script
from logomesh.tasks.contracts import Contract, ContractError, accept_suite, equivalent, parse_contract

WHERE = Path("task.toml")


def _r(value: Any) -> list[Any]:
    return ["returned", value]


def _f(x: float) -> list[Any]:
    return ["float", repr(x)]


# --- parsing ---------------------------------------------------------------------------------------------------


def test_no_table_is_no_contract_and_a_full_table_reads_back() -> None:
    assert parse_contract(None, WHERE) == Contract() and not Contract().stated
    contract = parse_contract({"requires": "n > 0", "answer": ["tolerance", "sequence"], "abs_tol": 1e-6}, WHERE)
    assert contract == Contract("n > 0", ("sequence", "tolerance"), 1e-9, 1e-6, "")
    assert Contract.from_args(contract.as_args()) == contract
    assert parse_contract({"answer": "truthy"}, WHERE).answer == ("truthy",)


@pytest.mark.parametrize(("table", "message"), [
    ({"answer": ["fuzzy"]}, "answer must be a list of"),
    ({"requires": "n >"}, "requires is not a Python expression"),
    ({"requires": 3}, "requires must be a Python expression"),
    ({"answer": ["property"]}, "holds go together"),
    ({"holds": "result > 0"}, "holds go together"),
    ({"rel_tol": -1.0}, "rel_tol must be a number"),
    ({"tolerance": 1e-6}, "unknown [contract] key"),
])
def test_a_malformed_table_is_one_line_naming_the_file(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ContractError, match=r"^task\.toml: .*" + message.replace("[", r"\[").replace("]", r"\]")):
        parse_contract(table, WHERE)


def test_a_task_folder_with_a_bad_contract_does_not_load(tmp_path: Path) -> None:
    root = tmp_path / "t"
    (root / "hidden").mkdir(parents=True)
    (root / "reference").mkdir()
    (root / "hidden" / "test_a.py").write_text("import solution\n")
    (root / "reference" / "solution.py").write_text("def f(n):\n    return n\n")
    spec = 'id = "t"\ntitle = "T"\nentry_point = "f"\ndescription = "d"\n'
    (root / "task.toml").write_text(spec + '[contract]\nrequires = "n > 0"\nanswer = ["truthy"]\n')
    assert load_task_dir(root).contract == Contract("n > 0", ("truthy",))
    (root / "task.toml").write_text(spec + '[contract]\nanswer = ["nearly"]\n')
    with pytest.raises(TaskError, match="answer must be a list"):
        load_task_dir(root)


# --- answers ---------------------------------------------------------------------------------------------------


def test_without_a_contract_only_exact_answers_are_the_same() -> None:
    exact = Contract()
    assert equivalent(exact, _r(_f(0.5)), _r(_f(0.5)))
    assert not equivalent(exact, _r(["tuple", [["int", "1"]]]), _r(["list", [["int", "1"]]]))
    assert not equivalent(exact, _r(["int", "1"]), _r(["bool", True]))
    assert not equivalent(exact, _r(_f(0.5000001)), _r(_f(0.5)))


def test_tolerance_takes_numbers_within_it_int_and_float_alike() -> None:
    loose = Contract(answer=("tolerance",), rel_tol=0.0, abs_tol=1e-6)
    assert equivalent(loose, _r(_f(0.5000001)), _r(_f(0.5)))
    assert not equivalent(loose, _r(_f(0.50001)), _r(_f(0.5)))
    assert equivalent(loose, _r(["int", "3"]), _r(_f(3.0)))
    assert equivalent(loose, _r(["list", [_f(1.0000001)]]), _r(["list", [_f(1.0)]]))
    assert not equivalent(loose, _r(["str", "3"]), _r(_f(3.0)))
    assert not equivalent(loose, ["raised", "ValueError"], _r(_f(3.0)))


def test_sequence_and_unordered() -> None:
    one, two = ["int", "1"], ["int", "2"]
    sequence = Contract(answer=("sequence",))
    assert equivalent(sequence, _r(["tuple", [one, two]]), _r(["list", [one, two]]))
    assert not equivalent(sequence, _r(["tuple", [two, one]]), _r(["list", [one, two]]))
    unordered = Contract(answer=("unordered",))
    assert equivalent(unordered, _r(["list", [two, one]]), _r(["list", [one, two]]))
    assert not equivalent(unordered, _r(["list", [two, two]]), _r(["list", [one, two]]))
    assert not equivalent(unordered, _r(["tuple", [two, one]]), _r(["list", [one, two]]))


def test_truthy_takes_any_value_of_the_same_truth_but_not_another_exception() -> None:
    truthy = Contract(answer=("truthy",))
    assert equivalent(truthy, _r(["int", "1"]), _r(["bool", True]))
    assert equivalent(truthy, _r(["str", "yes"]), _r(["bool", True]))
    assert equivalent(truthy, _r(["none"]), _r(["bool", False]))
    assert equivalent(truthy, _r(["list", []]), _r(["bool", False]))
    assert not equivalent(truthy, _r(["int", "0"]), _r(["bool", True]))
    assert not equivalent(truthy, _r(["ref", 0]), _r(["bool", True]))  # an opaque object's truth is its own say
    assert not equivalent(truthy, ["raised", "TypeError"], ["raised", "ValueError"])


# --- a hidden suite and the differential family under a contract ---------------------------------------------------


def _suite(*tests: tuple[str, list[Any]]) -> ObservedSuite:
    return ObservedSuite(tests=tuple(Observed(name, "observed", tuple(obs)) for name, obs in tests))


def test_accepted_answers_read_as_the_references_and_the_exact_judge_passes_them() -> None:
    want = _suite(("test_a", [_r(["bool", True])]), ("test_b", [_r(["bool", False])]))
    got = _suite(("test_a", [_r(["int", "1"])]), ("test_b", [_r(["int", "1"])]))
    assert [o.status for o in judge_suite(got, want).outcomes] == ["failed", "failed"]
    accepted = accept_suite(got, want, Contract(answer=("truthy",)))
    assert [o.status for o in judge_suite(accepted, want).outcomes] == ["passed", "failed"]
    assert accept_suite(got, want, Contract()) is got


def test_a_property_is_asked_only_for_differing_answers_with_the_references_arguments() -> None:
    args = ["value", ["tuple", [["list", [["int", "-6"], ["int", "1"]]]]]]
    want = _suite(("test_a", [args, _r(_f(6.0))]), ("test_b", [args, _r(_f(6.0))]),
                  ("test_c", [["value", ["tuple", [["list", [["int", "2"]]]]]], _r(_f(6.0))]))
    got = _suite(("test_a", [args, _r(_f(6.0))]), ("test_b", [args, _r(_f(5.0))]),
                 ("test_c", [["value", ["tuple", [["list", [["int", "3"]]]]]], _r(_f(7.0))]))
    asked: list[list[tuple[Any, Any]]] = []

    def holds(pairs: list[tuple[Any, Any]]) -> list[bool]:
        asked.append(pairs)
        return [True] * len(pairs)

    contract = Contract(answer=("property",), holds="result == 6")
    accepted = accept_suite(got, want, contract, holds)
    assert asked == [[(args[1], _f(5.0))]]  # test_c's arguments differ from the reference's: not asked
    assert [o.status for o in judge_suite(accepted, want).outcomes] == ["passed", "passed", "failed"]


def _diff_suite(*observations: list[Any]) -> ObservedSuite:
    return _suite(*((f"test_{i}", [o]) for i, o in enumerate(observations)))


def test_the_differential_family_skips_inputs_outside_the_precondition_and_reads_answers_by_the_contract() -> None:
    inputs = ["(-1.0,)", "(2.5,)", "(3.5,)"]
    want = _diff_suite(_r(_f(0.0)), _r(_f(0.5)), _r(_f(0.5)))
    got = _diff_suite(["raised", "ValueError"], _r(_f(0.5000001)), _r(_f(0.6)))
    before = compare(got, want, inputs)
    assert [d.input for d in before.diverged] == inputs and before.checked == 3
    contract = Contract("number > 0", ("tolerance",), 0.0, 1e-6)
    after = compare(got, want, inputs, contract, [False, True, True])
    assert [d.input for d in after.diverged] == ["(3.5,)"] and after.checked == 2


def test_the_differential_family_asks_the_property_about_differing_answers_only() -> None:
    inputs = ["([1, 2],)", "([3, 4],)"]
    want = _diff_suite(_r(_f(-0.5)), _r(_f(-0.75)))
    got = _diff_suite(_r(_f(-0.5)), _r(_f(2.0)))
    asked: list[list[tuple[str, str]]] = []

    def holds(cases: list[tuple[str, str]]) -> list[bool]:
        asked.append(cases)
        return [False]

    contract = Contract(answer=("property",), holds="abs(poly(xs, result)) < 1e-4")
    found = compare(got, want, inputs, contract, None, holds)
    assert asked == [[("([3, 4],)", "float('2.0')")]]
    assert [d.input for d in found.diverged] == ["([3, 4],)"]


# --- the expressions' script (it runs in the sandbox) -----------------------------------------------------------


@pytest.mark.parametrize("value", [None, True, 3, -(2**80), 0.1, float("inf"), "a'\"\n", b"\x00\xff", [1, (2,)],
                                   {"k": {3, 4}}, frozenset({1}), ()])
def test_an_observed_value_reads_back_as_python_source(value: Any) -> None:
    import decimal  # noqa: F401  (the script imports it too)

    assert eval(str(literal(observe.encode(value, observe.Recorder())))) == value


def test_opaque_values_have_no_source_and_parameters_drop_annotations() -> None:
    assert literal(["ref", 0]) is None and literal(["list", [["ref", 0]]]) is None
    assert parameters("def f(xs: list, *, k: int = 2) -> int:\n    return 1\n", "f") == "xs, *, k=2"
    assert parameters("x = 1\n", "f") is None
    text = script("def f(n):\n    return n\n", "f", "n > 0", [("(1,)", None), ("(-1,)", None)])
    assert text is not None and ast.parse(text)
