"""A new task folder that works as written (``logomesh tasks new ID``): replace its example with your task.

The example (sum of the even numbers of a list) is small but complete: a
spec, hidden drivers that observe without judging, a reference, the correct
submission and one labelled flaw, so ``logomesh tasks check`` passes on the
fresh folder and keeps passing while the author swaps each part for theirs.
"""

from __future__ import annotations

import json
from pathlib import Path

from logomesh.tasks import TaskError, valid_task_id

SPEC = '''id = "{id}"
title = "{id}: replace with a one-line title"
entry_point = "solve"                  # the public name the reference and every submission define
description = """
Write a module `solution.py` with

def solve(values: list[int]) -> int

returning the sum of the even numbers in `values` (0 for an empty list).
Anything but a list of ints (bool is not an int here) raises TypeError.
Standard library only.

(Replace this example: the description is the intent the purple agent is given.)
"""

[constraints]
banned_imports = ["socket", "subprocess", "ctypes"]
banned_calls = ["eval", "exec", "compile", "__import__"]
network = false

[attack]
surface = ["input-validation", "boundary"]
targets = ["solve"]

[[invariants]]
name = "even-sum"
description = "solve(values) == sum of the even items, for every list of ints"
'''

REFERENCE = '''"""Reference solution: hidden drivers compare every submission's observations with this one's."""


def solve(values: list[int]) -> int:
    if not isinstance(values, list) or not all(type(v) is int for v in values):
        raise TypeError("values must be a list of ints")
    return sum(v for v in values if v % 2 == 0)
'''

DRIVERS = '''"""Hidden drivers: record what the solution does; the host compares it with the reference's.

No assert and no expected value here (docs/tasks.md): see(value) records a value,
call(fn, *args) what fn returned or raised, raised(...) what a block raised.
"""

from observe import call, raised, see
from solution import solve


def test_examples():
    for values in ([], [1, 2, 3, 4], [-2, -3], [7]):
        call(solve, values)


def test_large_input():
    see(solve(list(range(10_000))))


def test_rejects_bad_input():
    for values in (None, "12", [1, "2"], [1.0], [True]):
        with raised(TypeError, ValueError):
            solve(values)
'''

PURPLE_TESTS = '''import unittest

from solution import solve


class SolveTest(unittest.TestCase):
    def test_sum(self):
        self.assertEqual(solve([1, 2, 3, 4]), 6)

    def test_type(self):
        with self.assertRaises(TypeError):
            solve("12")
'''

FLAWED_SOURCE = '''def solve(values):
    return sum(v for v in values if v % 2 == 1)
'''


def hidden_file_name(task_id: str) -> str:
    return f"test_{task_id.replace('-', '_')}.py"


def submission(label: str, defect: bool, source: str, rationale: str) -> str:
    data = {"label": label, "behaviour_defect": defect, "sourceCode": source, "testCode": PURPLE_TESTS,
            "rationale": rationale}
    return json.dumps(data, indent=2) + "\n"


def scaffold(library: Path, task_id: str) -> Path:
    """Write ``library/task_id`` (the library folder is created if missing); refuse an existing folder."""
    if not valid_task_id(task_id):
        raise TaskError(f"task id {task_id!r} must match [a-z0-9][a-z0-9-]* (lower-case letters, digits, '-')")
    root = library / task_id
    if root.exists():
        raise TaskError(f"{root} already exists (choose another id, or edit that folder)")
    for sub in ("hidden", "reference", "submissions"):
        (root / sub).mkdir(parents=True)
    (root / "task.toml").write_text(SPEC.format(id=task_id), encoding="utf-8")
    (root / "reference" / "solution.py").write_text(REFERENCE, encoding="utf-8")
    (root / "hidden" / hidden_file_name(task_id)).write_text(DRIVERS, encoding="utf-8")
    (root / "submissions" / "good.json").write_text(submission(
        "good", False, REFERENCE, "Filters the even items and sums them; validates the input type first."),
        encoding="utf-8")
    (root / "submissions" / "odd-sum.json").write_text(submission(
        "odd-sum", True, FLAWED_SOURCE, "Sums the even numbers."), encoding="utf-8")
    return root
