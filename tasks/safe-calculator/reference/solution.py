"""Evaluate untrusted arithmetic with the ast module and explicit resource limits."""

from __future__ import annotations

import ast
import math
import operator
from typing import Callable, Dict, Type, Union

Number = Union[int, float]

MAX_DIGITS = 10_000
_TOO_BIG = 10**MAX_DIGITS  # the smallest int with more than MAX_DIGITS digits
_MAX_BITS = _TOO_BIG.bit_length()
MAX_SOURCE = 10_000

_BINARY: Dict[Type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def evaluate(expression: str) -> Number:
    if not isinstance(expression, str):
        raise TypeError("expression must be a string")
    if len(expression) > MAX_SOURCE:
        raise ValueError("expression too long")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError("not a valid arithmetic expression") from None
    try:
        return _eval(tree.body)
    except RecursionError:
        raise ValueError("expression nested too deeply") from None


def _eval(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant):
        value = node.value
        if type(value) not in (int, float):
            raise ValueError(f"unsupported literal {value!r}")
        return _checked(value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _eval(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            _guard_power(left, right)
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
        except OverflowError:
            raise ValueError("result too large") from None
        return _checked(result)
    raise ValueError(f"unsupported syntax: {type(node).__name__}")


def _guard_power(base: Number, exponent: Number) -> None:
    """Refuse int powers whose result would exceed the digit limit, before computing."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if (abs(base).bit_length() - 1) * exponent > _MAX_BITS:
            raise ValueError("exponent too large")


def _checked(value: object) -> Number:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("result is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("float overflow")
    if isinstance(value, int) and abs(value) >= _TOO_BIG:
        raise ValueError(f"result has more than {MAX_DIGITS} digits")
    return value
