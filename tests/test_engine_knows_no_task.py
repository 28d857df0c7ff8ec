"""The engine knows no task: no code under ``logomesh/`` names a task of the library.

What is specific to a task lives in its folder (task.toml, hidden drivers,
reference, ``red.py``; docs/tasks.md). So no string literal in the engine may
contain a task id or a task's entry-point name as a word, and no identifier
may be an entry-point name, unless the engine defines that identifier itself
(``evaluate`` is a method of the search problem as well as the calculator
task's function: a common word, not knowledge of the task). Docstrings and
comments are prose about the design and are not read here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from logomesh.tasks import all_tasks

ENGINE = Path(__file__).resolve().parents[1] / "logomesh"


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _identifiers(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.lineno, node.name
        elif isinstance(node, ast.alias):
            yield node.lineno, node.asname or node.name.split(".")[-1]
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.lineno, node.arg


def _defined(tree: ast.Module) -> set[str]:
    """Names the engine gives to its own things: functions, classes, parameters, variables, attributes it sets."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


def offences(sources: dict[str, str], task_ids: set[str], entry_points: set[str]) -> list[str]:
    """``file:line: what`` for every place the code names a task."""
    trees = {name: ast.parse(text) for name, text in sources.items()}
    defined = set().union(*(_defined(tree) for tree in trees.values()))
    words = [(re.compile(rf"(?<![\w-]){re.escape(i)}(?![\w-])"), f"task id {i!r}") for i in sorted(task_ids)]
    words += [(re.compile(rf"(?<!\w){re.escape(e)}(?!\w)"), f"entry point {e!r}") for e in sorted(entry_points)]
    found = []
    for name, tree in trees.items():
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                found += [f"{name}:{node.lineno}: string names {what}" for pattern, what in words
                          if pattern.search(node.value)]
        found += [f"{name}:{line}: identifier {ident!r} is an entry point" for line, ident in _identifiers(tree)
                  if ident in entry_points and ident not in defined]
    return sorted(set(found))


def test_no_engine_code_names_a_task_of_the_library() -> None:
    tasks = all_tasks()
    assert len(tasks) >= 10
    sources = {str(p.relative_to(ENGINE.parent)): p.read_text(encoding="utf-8") for p in sorted(ENGINE.rglob("*.py"))}
    assert len(sources) > 50
    found = offences(sources, {t.id for t in tasks}, {t.entry_point for t in tasks})
    assert found == [], "move task knowledge into the task folder (docs/tasks.md):\n" + "\n".join(found)


def test_the_scan_sees_what_it_must_and_spares_what_it_may() -> None:
    knows = {
        "a.py": '"""Prose may mention rate-limiter and RateLimiter."""\n'
                'SCENARIOS = {"RateLimiter": ("rate-limiter", "allow(...)")}\n'
                "def variants(entry):\n"
                "    # a comment about fib is prose too\n"
                '    return entry == "fib" or solution.RateLimiter(1, 1.0)\n',
        "b.py": "class Problem:\n    def evaluate(self):\n        return self.evaluate\n",
        "c.py": 'HELP = f"pass --task {name}, e.g. bank-ledgers or fib_two"\n',
    }
    found = offences(knows, {"rate-limiter", "bank-ledger"}, {"RateLimiter", "fib", "evaluate"})
    assert found == [
        "a.py:2: string names entry point 'RateLimiter'",
        "a.py:2: string names task id 'rate-limiter'",
        "a.py:5: identifier 'RateLimiter' is an entry point",
        "a.py:5: string names entry point 'fib'",
    ]
