"""Branch-value inputs for the differential family: the constants the code compares against, read from its source.

Wrong code that passes weak tests often differs from the reference on one
specific value: ``n > 100`` written ``n >= 100``, ``len(s) > 10``, a changed
constant in a comparison. Drawing near the call sites' magnitudes rarely hits
it. Here the reference's and the submission's source are parsed on the host
with ``ast`` (never executed) and the constants that steer a branch are
collected:

* numbers compared (``x > 100``, ``x in (3, 5)``), ``range()`` bounds, the
  right operand of ``%``, ``//`` and ``/`` -> c - 1, c, c + 1 for a number
  parameter (and as the digits of a numeric string parameter);
* lengths: ``len(...)`` compared with a constant, constant indices and slice
  bounds -> containers and strings of those sizes, built from the call
  sites' own items and characters;
* strings compared or tested for membership (``c == 'a'``, ``c in 'aeiou'``,
  ``s.startswith('ab')``), and the characters at and beside a code point
  compared with ``ord(...)`` -> inserted into the sites' strings and lists.

Each candidate value replaces one parameter of a call site (the others kept
as the site has them, the site turned in rotation), in rounds so that a short
prefix reaches every constant of every parameter. The types never change, so
the task's precondition and the reference still decide what is inside the
contract; every input runs as every differential batch does (observation
drivers in the sandbox, compared on the host).

Kept by hand, next to the Hypothesis batches (``drawn.py``): a strategy
built from the call sites cannot know the code's constants. Hypothesis does
harvest literals (``hypothesis.internal.constants_ast``, internal API), but
from imported modules' files, so the code would have to be imported on the
host; it drops integers in -100..100 and empty strings, which are most
branch bounds here; and it keeps no role (a compared ``10`` and a ``len(s)``
bound of 10 need different inputs). docs/tasks.md, "The differential
family's searchers".
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from logomesh.syntax import PARSE_ERRORS, parse

MAX_LENGTH = 60  # a container or string longer than this is not built from a length constant
MAX_NUMBER = 10**9
MAX_CONSTANTS = 64  # of each kind: a source full of literals costs the host no more than this
_STR_METHODS = frozenset({"startswith", "endswith", "count", "find", "rfind", "index", "rindex", "split", "rsplit",
                          "replace", "strip", "lstrip", "rstrip", "partition", "rpartition", "join"})
_DIVIDING = (ast.Mod, ast.FloorDiv, ast.Div)


@dataclass
class Constants:
    """What steers the code's branches, in first-seen order."""

    numbers: list[int | float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def add_number(self, value: object) -> None:
        if (isinstance(value, int | float) and type(value) is not bool and value == value
                and abs(value) <= MAX_NUMBER and value not in self.numbers and len(self.numbers) < MAX_CONSTANTS):
            self.numbers.append(value)

    def add_length(self, value: object) -> None:
        if type(value) is int and 0 <= value <= MAX_LENGTH and value not in self.lengths \
                and len(self.lengths) < MAX_CONSTANTS:
            self.lengths.append(value)

    def add_text(self, value: object) -> None:
        if type(value) is str and 0 < len(value) <= 20 and value not in self.texts and len(self.texts) < MAX_CONSTANTS:
            self.texts.append(value)


def _number(node: ast.AST) -> int | float | None:
    """The value of a numeric literal, negated ones included."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _number(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and type(node.value) is not bool:
        return node.value
    return None


def _is_len(node: ast.AST, name: str = "len") -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
            and len(node.args) == 1)


def _literals(node: ast.AST) -> Iterable[object]:
    """A constant, or the items of a literal tuple, list or set of constants."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _literals(item)
        return
    number = _number(node)
    if number is not None:
        yield number
    elif isinstance(node, ast.Constant):
        yield node.value


def harvest(sources: Iterable[str]) -> Constants:
    """The branch constants of every source that parses (the others are skipped)."""
    found = Constants()
    for source in sources:
        try:
            tree = parse(source)
        except PARSE_ERRORS:
            continue
        for node in ast.walk(tree):
            _visit(node, found)
    return found


def _visit(node: ast.AST, found: Constants) -> None:
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        lengths = any(_is_len(o) for o in operands)
        codes = any(_is_len(o, "ord") for o in operands)
        for operand in operands:
            for value in _literals(operand):
                if isinstance(value, str):
                    found.add_text(value)
                    if len(value) > 1 and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
                        for char in value:  # `c in 'aeiou'`: each character is a branch
                            found.add_text(char)
                elif lengths and type(value) is int:
                    for size in (value - 1, value, value + 1):
                        found.add_length(size)
                elif codes and type(value) is int:  # `97 <= ord(c) <= 122`: the characters at and beside a bound
                    for code in (value - 1, value, value + 1):
                        if 32 <= code < 0x110000 and chr(code).isprintable():
                            found.add_text(chr(code))
                else:
                    found.add_number(value)
            if isinstance(operand, ast.BinOp):  # `n % 7 == 3`, `x - 1 > 100`: the operands' constants too
                for side in (operand.left, operand.right):
                    found.add_number(_number(side))
    elif isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "range":
            for arg in node.args:
                found.add_number(_number(arg))
        elif isinstance(func, ast.Attribute) and func.attr in _STR_METHODS:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add_text(arg.value)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _DIVIDING):
        found.add_number(_number(node.right))
    elif isinstance(node, ast.Subscript):
        bounds = [node.slice.lower, node.slice.upper] if isinstance(node.slice, ast.Slice) else [node.slice]
        for bound in bounds:
            value = _number(bound) if bound is not None else None
            if type(value) is int:
                size = value if value >= 0 else -value
                for n in (size, size + 1):
                    found.add_length(n)


def _near(numbers: list[int | float], kind: type) -> list[Any]:
    out: list[Any] = []
    for c in numbers:
        for value in (c, c - 1, c + 1):
            out.append(int(value) if kind is int and float(value).is_integer() else kind(value))
            if kind is int and not float(value).is_integer():
                out += [int(value // 1), int(value // 1) + 1]
    return out


DIGITS = re.compile(r"[0-9]+")


def _in_digit_runs(value: str, numbers: list[int]) -> list[str]:
    """``value`` with one of its runs of digits replaced by a branch value, its width kept where it had a leading
    zero: the month of ``'03-11-2000'`` set to 13 where the code compares it with 12. The text's format stays, so
    the input is one the task's own seeds make valid."""
    runs = list(DIGITS.finditer(value))
    out: list[str] = []
    for number in (n for n in numbers if n >= 0):
        for run in runs:
            digits = str(number).zfill(len(run.group())) if run.group().startswith("0") else str(number)
            out.append(value[:run.start()] + digits + value[run.end():])
    return out


def _resize(items: list[Any], size: int) -> list[Any]:
    """``items`` repeated or cut to ``size`` (empty stays empty unless ``size`` is 0)."""
    if not items:
        return []
    return [items[i % len(items)] for i in range(size)]


def candidates(value: Any, pool: list[Any], found: Constants, depth: int = 0) -> list[Any]:
    """Values of ``value``'s type that take the branches in ``found``; ``pool``: the site values at this position."""
    kind = type(value)
    out: list[Any] = []
    if kind in (int, float):
        out = _near(found.numbers, kind)
    elif kind is str:
        chars = "".join(dict.fromkeys("".join(v for v in pool if type(v) is str))) or "a"
        for text in found.texts:
            out += [text, value + text, text + value, value[:len(value) // 2] + text + value[len(value) // 2:]]
        for size in found.lengths:
            out.append("".join(_resize(list(value or chars), size)))
        if value.strip().lstrip("-").isdigit():  # a number written as a string
            out += [str(n) for n in _near(found.numbers, int)]
        else:
            out += _in_digit_runs(value, _near(found.numbers, int))
    elif kind in (list, tuple, set, frozenset) and depth < 2:
        items = list(value) if kind in (list, tuple) else sorted(value, key=repr)
        others = [i for p in pool if type(p) is kind for i in p]
        fill = items + [i for i in others if i not in items]  # the site's items first, then other sites'
        for size in found.lengths:
            if fill or size == 0:
                out.append(kind(_resize(fill, size)))
        if fill:
            first = fill[0]
            for item in candidates(first, others or fill, found, depth + 1):
                out += [kind([item]), kind([*items[1:], item]) if items else kind([item]),
                        kind([item, *items[:-1]]) if items else kind([item, item])]
    elif kind is dict:
        out = []
    unique: dict[str, Any] = {}
    for candidate in out:
        if type(candidate) is kind and repr(candidate) != repr(value):
            unique.setdefault(repr(candidate), candidate)
    return list(unique.values())


def branch_inputs(sources: Iterable[str], sites: list[tuple[Any, ...]], count: int, key: int) -> list[tuple[Any, ...]]:
    """Up to ``count`` argument tuples of the sites' shapes carrying the sources' branch values.

    Round k holds the k-th candidate of every parameter of every site shape, so a short prefix reaches every
    parameter; which site a candidate is put into turns with ``key`` (seeded, deterministic).
    """
    found = harvest(sources)
    found.numbers.sort(key=lambda c: abs(c) <= 2)  # 0, 1, 2 and their negatives: the edge cases have them already
    if not sites or not (found.numbers or found.lengths or found.texts):
        return []
    rng = random.Random(key)
    rounds: list[list[tuple[Any, ...]]] = []
    by_arity: dict[int, list[tuple[Any, ...]]] = {}
    for args in sites:
        by_arity.setdefault(len(args), []).append(args)
    for _, group in sorted(by_arity.items()):
        order = list(group)
        rng.shuffle(order)
        for position in range(len(group[0])):
            pool = [args[position] for args in group]
            seen: set[str] = set()
            k = 0
            for turn, args in enumerate(order):
                for candidate in candidates(args[position], pool, found):
                    if repr(candidate) in seen:
                        continue
                    seen.add(repr(candidate))
                    while len(rounds) <= k:
                        rounds.append([])
                    rounds[k].append((*args[:position], candidate, *args[position + 1:]))
                    k += 1
                if turn >= 3:
                    break  # four sites' own values per position are enough to carry every constant
    ordered = [args for batch in rounds for args in batch]
    skip = {repr(s) for s in sites}
    out: dict[str, tuple[Any, ...]] = {}
    for args in ordered:
        if repr(args) not in skip:
            out.setdefault(repr(args), args)
        if len(out) >= count:
            break
    return list(out.values())
