"""HumanEval as a task library: the check-to-driver transform, the import, and the drivers in a real sandbox."""

from __future__ import annotations

import ast
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from logomesh.sandbox import open_sandbox
from logomesh.tasks import load_task_dir
from logomesh.tasks.check import check_task, judging_code
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden
from logomesh.tasks.importers.check_drivers import build, outer_calls
from logomesh.tasks.importers.humaneval import CREDIT, import_humaneval, read, task_id, toml_string

PROBLEMS = read()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("humaneval")
    import_humaneval(folder)
    yield folder


def _tests(source: str) -> list[ast.FunctionDef]:
    return [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def _constants(nodes: list[ast.FunctionDef]) -> set[Any]:
    return {repr(n.value) for f in nodes for n in ast.walk(f) if isinstance(n, ast.Constant)}


# --- the transform, on checks written for this test --------------------------------------------------------


def test_asserts_become_the_candidate_calls_without_expected_values() -> None:
    check = (
        "def check(candidate):\n"
        "    assert candidate(1, 2) == 987654\n"
        "    assert candidate('in') == 'expected-out', 'message-text'\n"
        "    assert abs(candidate(2.5) - 31.25) < 1e-6\n"
        "    assert candidate(candidate(3)) != candidate(4)\n"
        "    assert True\n"
    )
    drivers = build(check, "def f(x):\n    '''doc'''\n", "f", "t")
    tests = _tests(drivers.source)
    assert drivers.tests == len(tests) == 4  # the assert without a candidate call is no test
    bodies = [ast.unparse(t).split("\n", 1)[1].strip() for t in tests]
    assert bodies == ["candidate(1, 2)", "candidate('in')", "candidate(2.5)",
                      "candidate(candidate(3))\n    candidate(4)"]
    text = drivers.source
    for expected in ("987654", "expected-out", "message-text", "31.25"):
        assert expected not in text
    assert "call(solution.f, *args, **kwargs)" in text
    assert judging_code("test_x.py", text) == []


def test_dead_expected_variables_go_and_the_calls_in_them_stay() -> None:
    check = (
        "def check(candidate):\n"
        "    data = list(range(5))\n"
        "    want = sum(x * 7 for x in data)\n"
        "    got = candidate(data)\n"
        "    assert got == want\n"
        "    import math\n"
        "    assert math.isclose(candidate([1]), 424242)\n"
    )
    drivers = build(check, "def f(x):\n    pass\n", "f", "t")
    first, second = _tests(drivers.source)
    assert ast.unparse(first).splitlines()[1:] == ["    data = list(range(5))", "    candidate(data)"]
    assert "want" not in drivers.source and "424242" not in drivers.source and "math" not in ast.unparse(second)
    assert ast.unparse(second).splitlines()[-1].strip() == "candidate([1])"
    assert drivers.looser == ("tolerance",)  # math.isclose(candidate(...)) accepts more than equality


def test_random_in_the_check_is_the_drivers_own_seeded_generator() -> None:
    check = (
        "def check(candidate):\n"
        "    import random\n"
        "    from random import randint as r, choice\n"
        "    for _ in range(3):\n"
        "        assert candidate(random.randint(0, 9), r(1, 2), choice('ab')) == 1\n"
    )
    source = build(check, "def f(*a):\n    pass\n", "f", "t").source
    assert "random = _seeded()" in source and "r, choice = _seeded('randint', 'choice')" in source
    namespace: dict[str, Any] = {}
    exec(compile(source.split("\ndef candidate")[0].replace("import solution\nfrom observe import call\n", ""),
                 "drv", "exec"), namespace)
    first = [namespace["_seeded"]().randint(0, 10**9) for _ in range(2)]
    assert first[0] == first[1]  # afresh, with the same seed, in every test


def test_outer_calls_follow_evaluation_order_and_keep_comprehensions_whole() -> None:
    expr = ast.parse("g(candidate(1)) + [candidate(x) for x in y] == candidate(2)", mode="eval").body
    assert [ast.unparse(c) for c in outer_calls(expr, "candidate")] == [
        "candidate(1)", "[candidate(x) for x in y]", "candidate(2)"]


def test_prompt_text_survives_toml_quoting() -> None:
    text = 'def f():\n    """a \\ b "quoted" \t tab\x7f\x01"""\n'
    assert tomllib.loads("d = " + toml_string(text))["d"] == text


# --- all 164 problems ------------------------------------------------------------------------------------


def _expected_side_constants(check: ast.FunctionDef) -> set[str]:
    """Constants only on the expected side of an assert: in no candidate call and nowhere else in the check."""
    expected: set[int] = set()
    for node in ast.walk(check):
        if isinstance(node, ast.Assert):
            inside = {id(n) for c in outer_calls(node.test, "candidate") for n in ast.walk(c)}
            expected |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant) and id(n) not in inside}
    elsewhere = {repr(n.value) for n in ast.walk(check) if isinstance(n, ast.Constant) and id(n) not in expected}
    return {repr(n.value) for n in ast.walk(check) if id(n) in expected} - elsewhere


def test_every_problem_transforms_and_no_expected_literal_survives() -> None:
    assert len(PROBLEMS) == 164
    leaked: dict[str, set[str]] = {}
    for problem in PROBLEMS:
        drivers = build(problem["test"], problem["prompt"], problem["entry_point"], problem["task_id"])
        assert judging_code("test_x.py", drivers.source) == [], problem["task_id"]
        check = next(n for n in ast.parse(problem["test"]).body if isinstance(n, ast.FunctionDef))
        found = _expected_side_constants(check) & _constants(_tests(drivers.source))
        if found:
            leaked[problem["task_id"]] = found
        assert drivers.literal_expected == (), problem["task_id"]
    assert leaked == {}


def test_import_writes_a_loadable_credited_task_per_problem(library: Path) -> None:
    folders = sorted(p for p in library.iterdir() if p.is_dir())
    assert len(folders) == 164
    by_id = {task_id(p["task_id"]): p for p in PROBLEMS}
    for folder in folders:
        task = load_task_dir(folder)
        problem = by_id[task.id]
        assert task.entry_point == problem["entry_point"] and task.description == problem["prompt"].strip()
        assert task.reference == problem["prompt"] + problem["canonical_solution"]
        assert task.title.endswith(problem["entry_point"]) and len(task.hidden_tests) == 1
        assert CREDIT in (folder / "task.toml").read_text() and "MIT License" in (folder / "NOTICE").read_text()
        good = task.labelled_submission("good")
        assert good.submission.source == task.reference and not good.behaviour_defect
        assert f"check({problem['entry_point']})" in good.submission.tests


def test_import_is_deterministic(library: Path, tmp_path: Path) -> None:
    import_humaneval(tmp_path, PROBLEMS[:20])
    for folder in sorted(tmp_path.iterdir()):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            assert path.read_bytes() == (library / path.relative_to(tmp_path)).read_bytes(), path


# --- through a real sandbox ------------------------------------------------------------------------------

SAMPLE = [f"humaneval-{n}" for n in range(0, 164, 9)] + ["humaneval-32", "humaneval-38", "humaneval-53"]


_FLIP: dict[type[ast.AST], type[ast.AST]] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
                                             ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Add: ast.Sub, ast.Sub: ast.Add}


def _mutant(source: str) -> str | None:
    """The canonical solution with one change in its body: the first int constant + 1, else the first
    comparison or +/- flipped."""
    tree = ast.parse(source)
    entry = [n for n in tree.body if isinstance(n, ast.FunctionDef)][-1]
    body = list(ast.walk(ast.Module(entry.body[1:], [])))
    for node in body:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            node.value += 1
            return ast.unparse(tree)
    for node in body:
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
            node.ops[0] = _FLIP[type(node.ops[0])]()  # type: ignore[assignment]
            return ast.unparse(tree)
        if isinstance(node, ast.BinOp) and type(node.op) in _FLIP:
            node.op = _FLIP[type(node.op)]()  # type: ignore[assignment]
            return ast.unparse(tree)
    return None


@pytest.mark.slow
@pytest.mark.docker
def test_sampled_tasks_check_and_their_own_check_agrees_with_the_drivers(library: Path) -> None:
    """The reference passes its drivers deterministically; a wrong variant the problem's check rejects fails."""
    caught = rejected = 0
    cache = ReferenceCache()
    with open_sandbox("docker") as box:
        for tid in SAMPLE:
            task = load_task_dir(library / tid)
            check = check_task(box, task)
            assert check.ok, check.problems
            mutant = _mutant(task.reference)
            if mutant is None:
                continue
            tests = json.loads((library / tid / "submissions" / "good.json").read_text())["testCode"]
            own = box.run_suite(mutant, {"test_own.py": tests})
            hidden = run_hidden(box, task, mutant, cache=cache).suite
            if own.failed or own.error:
                rejected += 1
                assert hidden.failed, f"{tid}: HumanEval's check rejects the mutant, the drivers do not"
            caught += bool(hidden.failed)
    assert rejected >= len(SAMPLE) // 2, f"only {rejected} of {len(SAMPLE)} mutants rejected by their own check"
    assert caught >= rejected
