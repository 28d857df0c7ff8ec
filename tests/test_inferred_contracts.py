"""The precondition inferred from a task's own test inputs (``importers/inferred_contracts``), and where it shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logomesh.red.attacks.differential import call_sites
from logomesh.tasks import load_task_dir
from logomesh.tasks.contracts import ContractError, clauses, parse_contract
from logomesh.tasks.importers.humaneval import import_humaneval, read, task_id
from logomesh.tasks.importers.inferred_contracts import (
    admits,
    infer,
    inferred_contract,
    signature,
    unseen_positions,
)

CASES: list[tuple[str, list[str], list[tuple[Any, ...]], list[str]]] = [
    ("positive ints", ["n", "x", "y"], [(7, 34, 12), (1, -1, 0), (2, 2, 0)],
     ["isinstance(n, int)", "n > 0", "isinstance(x, int)", "isinstance(y, int)", "y >= 0"]),
    ("numbers of both kinds, negative", ["a"], [(-1,), (-2.5,)], ["isinstance(a, (int, float))", "a < 0"]),
    ("booleans only", ["flag"], [(True,), (False,)], ["isinstance(flag, bool)"]),
    ("space-separated lowercase letters", ["test"], [("a b b a",), ("r t g",), ("",), ("a",)],
     ["isinstance(test, str)", "all('a' <= ch <= 'z' or ch in ' ' for ch in test)", "test == test.strip()",
      "'  ' not in test"]),
    ("non-empty words with punctuation, a trailing space", ["s"], [("Hi!",), ("ab, 9 ",)],
     ["isinstance(s, str)", "all('a' <= ch <= 'z' or 'A' <= ch <= 'Z' or '0' <= ch <= '9' or ch in ' !,' "
      "for ch in s)", "len(s) > 0", "s == s.lstrip()", "'  ' not in s", "',,' not in s"]),
    ("doubled spaces seen", ["s"], [("a  b",), (" c",)],
     ["isinstance(s, str)", "all('a' <= ch <= 'z' or ch in ' ' for ch in s)", "len(s) > 0", "s == s.rstrip()"]),
    ("non-empty lists of non-negative ints", ["xs"], [([0, 1],), ([5],)],
     ["isinstance(xs, list)", "len(xs) > 0", "all(isinstance(item, int) for item in xs)"]),  # no element sign
    ("lists, one empty, of floats", ["xs"], [([],), ([1.5, -2.0],)],
     ["isinstance(xs, list)", "all(isinstance(item, (int, float)) for item in xs)"]),  # an int is near a float
    ("mixed types: nothing", ["v"], [(1,), ("1",)], []),
    ("a parameter named like its element variable", ["item"], [([1],)],
     ["isinstance(item, list)", "len(item) > 0", "all(isinstance(item_, int) for item_ in item)"]),
]


@pytest.mark.parametrize(("params", "seeds", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_clauses_inferred_from_seeds(params: list[str], seeds: list[tuple[Any, ...]], expected: list[str]) -> None:
    found = infer(params, seeds)
    assert found == expected
    assert all(admits(c, params, s) for c in found for s in seeds)  # every seed is inside


def test_inputs_unlike_every_seed_are_outside() -> None:
    letters = infer(["test"], [("a b b a",), ("r t g",), ("",)])
    assert all(admits(c, ["test"], ("a b",)) for c in letters)
    assert not all(admits(c, ["test"], (" r t g",)) for c in letters)  # a leading space no seed has
    assert not all(admits(c, ["test"], ("r  t",)) for c in letters)  # a doubled separator
    assert not all(admits(c, ["test"], ("R T",)) for c in letters)  # upper case no seed has
    numbers = infer(["n", "x", "y"], [(7, 34, 12), (15, 8, 5), (1, 2, 0)])
    assert all(admits(c, ["n", "x", "y"], (1000, 3, 9)) for c in numbers)
    assert not all(admits(c, ["n", "x", "y"], (0, 8, 5)) for c in numbers)  # every seed has n >= 1


def test_the_seeds_one_format_and_balanced_groups_are_clauses() -> None:
    """A format every seed shares keeps runs of digits and letters free and the rest fixed, but for words every
    one of three seeds has in one place; groups of brackets that are balanced in every seed, as a whole or
    group by group, stay balanced."""
    fruit = infer(["s"], [("5 apples and 6 oranges",), ("0 apples and 1 oranges",), ("100 apples and 1 oranges",)])
    assert all(admits(c, ["s"], ("12 apples and 70 oranges",)) for c in fruit)
    assert not all(admits(c, ["s"], ("apples 5 and 6 oranges",)) for c in fruit)  # another format
    assert not all(admits(c, ["s"], ("2 and apples 3 oranges",)) for c in fruit)  # the format's words moved
    assert not all(admits(c, ["s"], ("5 apples and 6 orknges",)) for c in fruit)
    two = infer(["s"], [("5 apples and 6 oranges",), ("0 pears and 1 plums",)])  # two seeds: words are data
    assert all(admits(c, ["s"], ("2 figs or 3 kiwis",)) for c in two)
    assert not all(admits(c, ["s"], ("segnaro 1 dna selppa 0",)) for c in fruit)
    assert infer(["s"], [("5 apples",), ("apples 5",)]) == infer(["s"], [("5 apples",), ("apples 5",)])  # no format
    assert not any("fullmatch" in c for c in infer(["s"], [("5 apples",), ("apples 5",)]))
    assert not any("fullmatch" in c for c in infer(["w"], [("hello",), ("world",)]))  # single words: no format
    groups = infer(["p"], [("(()()) ((())) ()",), ("() (())",)])
    assert all(admits(c, ["p"], ("(()) ()",)) for c in groups)
    assert not all(admits(c, ["p"], ("))(( ()",)) for c in groups)  # unbalanced as a whole
    assert not all(admits(c, ["p"], ("((( )))",)) for c in groups)  # balanced as a whole, not group by group
    whole = infer(["p"], [("( ) (( ))",), ("(())",)])  # groups with spaces inside: balanced as a whole only
    assert all(admits(c, ["p"], ("(( ) )",)) for c in whole)
    assert not all(admits(c, ["p"], (")( ",)) for c in whole)
    assert not any("count" in c for c in infer(["p"], [("(()",), ("()",)]))  # a seed unbalanced: no clause


def test_arithmetic_over_literals_is_a_seed() -> None:
    """``candidate(3 * 19)`` is a literal input: its position gets clauses (HumanEval/25's checks call so)."""
    drivers = {"t.py": "def test_1():\n    candidate(2)\n    candidate(3 * 19)\n    candidate(2 ** 5)\n"}
    assert unseen_positions(drivers, "f", 1) == set()
    assert inferred_contract("def f(n):\n    return n\n", "f", drivers, "", call_sites) == \
        "isinstance(n, int) and n > 0"


def test_no_inference_where_the_inputs_are_not_all_known() -> None:
    assert infer(["n"], [(1,), (2,)], unseen={0}) == []
    assert infer(["all"], [(1,)]) == []  # a parameter shadowing a builtin the clauses call
    assert infer(["n"], [(1,)], reserved={"len"}) == []  # the reference rebinds one
    assert infer(["a", "b"], [(1,)]) == []  # no seed of the signature's arity
    drivers = {"t.py": "def candidate(*args, **kwargs):\n    return call(solution.f, *args, **kwargs)\n"
                       "def test_1():\n    candidate(1, 'a')\n"
                       "def test_2():\n    for x in range(3):\n        candidate(x, 'b')\n"}
    assert unseen_positions(drivers, "f", 2) == {0}
    assert unseen_positions({"t.py": "candidate(*xs)\n"}, "f", 2) == {0, 1}
    reference = "def f(n, s):\n    return s * n\n"
    assert inferred_contract(reference, "f", drivers, "", call_sites) == (
        "isinstance(s, str) and all('a' <= ch <= 'z' for ch in s) and len(s) > 0 and s == s.strip()")
    assert inferred_contract("def f(n, s=''):\n    pass\n", "f", drivers, "", call_sites) == ""  # a default


def test_the_contract_table_reads_inferred_apart_and_splits_it_into_clauses() -> None:
    where = Path("task.toml")
    contract = parse_contract({"requires": "n >= 0", "inferred": "isinstance(n, int) and n > 0"}, where)
    assert contract.requires == "n >= 0" and contract.inferred == "isinstance(n, int) and n > 0"
    assert not parse_contract({"inferred": "n > 0"}, where).stated  # inferred is no statement of the task's
    assert clauses(contract.inferred) == ["isinstance(n, int)", "n > 0"]
    assert clauses("a or b") == ["a or b"] and clauses("") == []
    with pytest.raises(ContractError, match="inferred is not a Python expression"):
        parse_contract({"inferred": "n >"}, where)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("humaneval-inferred")
    import_humaneval(folder, read())
    return folder


def test_the_import_infers_a_contract_that_admits_every_literal_input_of_the_tasks_tests(library: Path) -> None:
    inferred = 0
    for folder in sorted(library.iterdir()):
        task = load_task_dir(folder)
        if not task.contract.inferred:
            continue
        inferred += 1
        params = signature(task.reference, task.entry_point)
        assert params is not None
        for seed in call_sites(task.hidden_tests, task.entry_point, task.description):
            for clause in clauses(task.contract.inferred):
                assert admits(clause, params, seed), (task.id, clause, seed)
    assert inferred >= 140
    histogram = load_task_dir(library / task_id("HumanEval/111")).contract
    assert "test == test.strip()" in clauses(histogram.inferred) and histogram.requires  # apart from the stated
    x_or_y = load_task_dir(library / task_id("HumanEval/150")).contract
    assert "n > 0" in clauses(x_or_y.inferred) and not x_or_y.requires  # inferred where the prompt states nothing
