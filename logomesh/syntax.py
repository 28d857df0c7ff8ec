"""Parsing Python source into an AST, safely from any thread and on hostile input.

Every ``ast.parse`` in LogoMesh goes through :func:`parse`. CPython 3.11 keeps the AST
constructor's recursion counter in per-interpreter state: when the garbage collector runs a
finalizer in the middle of building a tree and another thread parses meanwhile, both threads
move the one counter and ``ast.parse`` raises ``SystemError: AST constructor recursion depth
mismatch`` (python/cpython#106905 and the reports linked from it). Battles score, seed attacks
and discover tests in concurrent threads, so the parses take turns under one lock. Parsing is
a few milliseconds per submission; the lock costs nothing measurable beside the sandbox runs.
"""

from __future__ import annotations

import ast
import operator
import threading
from typing import Any

# What ast.parse and recursive AST walks raise on hostile input: bad syntax, NUL bytes,
# nesting deeper than the parser or the interpreter stack allows.
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)

_PARSE_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source)``, one thread at a time; raises what ``ast.parse`` raises."""
    with _PARSE_LOCK:
        return ast.parse(source, filename=filename)


# How large a computed constant may grow: tests spell big inputs as ``"a" * 1000`` or ``10 ** 6``, never larger
# than a driver can carry as source (and a hostile ``9 ** 9 ** 9`` must not be computed at all).
CONSTANT_LIMIT = 10_000
_ARITHMETIC: dict[type[ast.operator], Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}


def constant(node: ast.expr) -> Any:
    """The value ``node`` spells without running anything: a literal (``ast.literal_eval``), or arithmetic and
    repetition over literals (``3 * 19``, ``-2 ** 10``, ``"ab" * 50``, ``[1] + [2, 3]``), as tests write their
    inputs. Raises ``ValueError`` for anything else, and where a result would exceed ``CONSTANT_LIMIT`` digits,
    characters or items."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = constant(node.left), constant(node.right)
        _check_operands(node.op, left, right)
        try:
            return _bounded(_ARITHMETIC[type(node.op)](left, right))
        except (ArithmeticError, TypeError) as exc:
            raise ValueError(f"not a constant: {exc}") from exc
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = constant(node.operand)
        if not _is_number(value):
            raise ValueError("a sign on something not a number")
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [constant(e) for e in node.elts]
        kind: type = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
        try:
            return kind(items)
        except TypeError as exc:  # an unhashable item in a set
            raise ValueError(str(exc)) from exc
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        try:
            return {constant(k): constant(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
        except TypeError as exc:
            raise ValueError(str(exc)) from exc
    try:
        return ast.literal_eval(node)
    except (TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from exc


def _is_number(value: Any) -> bool:
    return type(value) in (int, float, complex)


def _check_operands(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse, before computing it, what could be huge: a power beyond the limit, a repetition by a huge count."""
    if isinstance(op, ast.Pow):
        if not (_is_number(left) and _is_number(right)):
            raise ValueError("a power of something not a number")
        if isinstance(right, int) and isinstance(left, int) and abs(left) > 1 and \
                right * max(abs(left).bit_length(), 1) > CONSTANT_LIMIT * 4:
            raise ValueError("a power too large to be an input")
    if isinstance(op, ast.Mult) and any(isinstance(v, str | bytes | list | tuple) for v in (left, right)):
        count = right if isinstance(right, int) else left
        if not isinstance(count, int) or type(count) is bool or count > CONSTANT_LIMIT:
            raise ValueError("a repetition too large to be an input")


def _bounded(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > CONSTANT_LIMIT * 4:
        raise ValueError("a number too large to be an input")
    if isinstance(value, str | bytes | list | tuple) and len(value) > CONSTANT_LIMIT:
        raise ValueError("a sequence too long to be an input")
    return value
