"""The hand-written HumanEval witnesses (``tests/data/humaneval_witnesses.json``) are well formed and runnable.

The recall benchmark's third selection (``benchmarks/humaneval_recall.py``,
method c) compares mutants with the canonical solution on these inputs. Fast:
every problem has 4 to 8, each an argument tuple of the entry point's arity
that reads back as the same Python literal (parsed on the host, never run).
Slow: the canonical solution answers on every one in the sandbox, and every
one is admitted by the imported task's stated precondition.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from logomesh.tasks.importers.humaneval import read

DATA = json.loads((Path(__file__).parent / "data" / "humaneval_witnesses.json").read_text())
WITNESSES: dict[str, list[str]] = DATA["witnesses"]


def _arity(problem: dict[str, Any]) -> int:
    """The entry point's number of parameters, read from the prompt's signature with ``ast``."""
    tree = ast.parse(problem["prompt"] + "    pass\n")
    entry = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == problem["entry_point"])
    return len(entry.args.args)


def test_every_problem_has_four_to_eight_distinct_witnesses() -> None:
    problems = read()
    assert len(problems) == 164
    assert sorted(WITNESSES) == sorted(p["task_id"] for p in problems)
    assert DATA["about"].startswith("Witness inputs") and "by hand" in DATA["about"]
    for name, inputs in WITNESSES.items():
        assert 4 <= len(inputs) <= 8, name
        assert len(set(inputs)) == len(inputs), name


def test_each_witness_is_an_argument_tuple_of_the_entry_points_arity_that_reads_back() -> None:
    for problem in read():
        arity = _arity(problem)
        for text in WITNESSES[problem["task_id"]]:
            value = ast.literal_eval(text)
            assert type(value) is tuple and len(value) == arity, (problem["task_id"], text)
            assert repr(value) == text, (problem["task_id"], text)


def _benchmark_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "witnesses.py"
    spec = importlib.util.spec_from_file_location("humaneval_witnesses_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from logomesh.tasks.importers.humaneval import import_humaneval

    folder = tmp_path_factory.mktemp("humaneval-witnesses")
    import_humaneval(folder, read())
    yield folder


@pytest.mark.slow  # 164 box runs of the canonical solutions and of the preconditions, about two minutes
@pytest.mark.docker
def test_the_canonical_solution_answers_every_witness_and_its_precondition_admits_it(library: Path) -> None:
    from logomesh.sandbox import open_sandbox
    from logomesh.tasks import load_task_dir
    from logomesh.tasks.contract_check import admitted
    from logomesh.tasks.importers.humaneval import task_id

    refused: Callable[..., list[str]] = _benchmark_module().refused
    raised: dict[str, list[str]] = {}
    outside: dict[str, list[str]] = {}
    with open_sandbox("docker") as box:
        for name, inputs in WITNESSES.items():
            task = load_task_dir(library / task_id(name))
            if bad := refused(box, task, inputs):
                raised[name] = bad
            kept = admitted(box, task.reference, task.entry_point, task.contract, inputs)
            if not all(kept):
                outside[name] = [text for text, ok in zip(inputs, kept, strict=True) if not ok]
    assert raised == {}
    assert outside == {}
