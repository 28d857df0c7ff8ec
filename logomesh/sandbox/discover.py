"""Find the tests a suite must report, by reading the source, not by running it.

The harness is told this list up front, so a test the submission prevents
from reporting (exit, crash, patched runner) is a failure rather than a test
that never existed. Recognised: module-level classes deriving, directly or
through other classes of the same module, from a base whose name ends in
``TestCase``, and pytest-style classes named ``Test*`` without ``__init__``:
their methods named ``test*`` (inherited ones included); and pytest-style
module-level functions named ``test*`` (called without arguments: no
fixtures). Ids are ``module.Class.method`` or ``module.function``; a name
defined twice counts once, as Python keeps only the last definition.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping

from logomesh.sandbox.base import CLOCKS, TimeBound
from logomesh.syntax import PARSE_ERRORS, parse


class SuiteSourceError(ValueError):
    """A test module does not parse or has a bad file name."""


def module_name(file_name: str) -> str:
    if not file_name.endswith(".py") or "/" in file_name or not file_name[:-3].isidentifier():
        raise SuiteSourceError(f"test file {file_name!r} must be a plain 'name.py' with a Python identifier as name")
    return file_name[:-3]


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def discover_module(file_name: str, source: str) -> list[str]:
    """Test ids ``module.Class.method`` in definition order."""
    return list(_module_tests(file_name, source))


@functools.lru_cache(maxsize=64)
def _module_tests(file_name: str, source: str) -> tuple[str, ...]:
    """``discover_module``'s ids, kept per source: the red agent observes the same drivers on every play, and
    parsing them again was a fifth of its host-side CPU (py-spy, a README battle)."""
    mod = module_name(file_name)
    try:
        tree = parse(source, filename=file_name)
    except SyntaxError as exc:
        raise SuiteSourceError(f"{file_name} does not parse: line {exc.lineno}: {exc.msg}") from None
    except PARSE_ERRORS as exc:
        raise SuiteSourceError(f"{file_name} does not parse: {type(exc).__name__}") from None
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def is_case(cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> bool:
        for base in cls.bases:
            name = _base_name(base)
            if name.endswith("TestCase"):
                return True
            if name in classes and name not in seen and is_case(classes[name], seen | {cls.name}):
                return True
        return False

    def methods(cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> list[str]:
        own = [
            n.name
            for n in cls.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
        ]
        inherited: list[str] = []
        for base in cls.bases:
            name = _base_name(base)
            if name in classes and name not in seen and name != cls.name:
                inherited += methods(classes[name], seen | {cls.name})
        # unittest runs tests sorted by name; keep that order, without duplicates.
        return sorted(set(own + inherited))

    def is_plain(cls: ast.ClassDef) -> bool:
        """A pytest-style class: named Test*, no __init__."""
        has_init = any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in cls.body)
        return cls.name.startswith("Test") and not has_init

    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and (is_case(node) or is_plain(node)):
            found += [f"{mod}.{node.name}.{m}" for m in methods(node)]
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found.append(f"{mod}.{node.name}")
    return tuple(dict.fromkeys(found))


def discover(tests: Mapping[str, str]) -> list[str]:
    """Every test id of a suite, modules in name order."""
    found: list[str] = []
    for file_name in sorted(tests):
        found += discover_module(file_name, tests[file_name])
    return found


def _literal_seconds(node: ast.expr | None) -> float | None:
    if node is None:
        return None
    value = ast.literal_eval(node)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise SuiteSourceError(f"line {node.lineno}: within() bounds must be literal non-negative seconds")
    return float(value)


def _within(func: ast.FunctionDef | ast.AsyncFunctionDef) -> TimeBound | None:
    """The literal bounds and clock of a ``@within(min_s, max_s, clock=...)`` decorator, read from the source."""
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and _base_name(deco.func) == "within":
            args: dict[str, ast.expr] = dict(zip(("min_s", "max_s", "clock"), deco.args, strict=False))
            args.update({kw.arg: kw.value for kw in deco.keywords if kw.arg})
            try:
                low, high = _literal_seconds(args.get("min_s")), _literal_seconds(args.get("max_s"))
                clock = ast.literal_eval(args["clock"]) if "clock" in args else None
            except ValueError:
                raise SuiteSourceError(f"line {deco.lineno}: within() takes literal numbers only") from None
            if clock not in CLOCKS:
                raise SuiteSourceError(f"line {deco.lineno}: within() must name its clock: clock='cpu' where the "
                                       "bound is about work, clock='wall' where waiting is the point")
            return TimeBound(low, high, "cpu" if clock == "cpu" else "wall")
    return None


def timing_bounds(tests: Mapping[str, str]) -> dict[str, TimeBound]:
    """Test id -> its bounds and clock, for every driver marked ``@within``.

    Read on the host from the source, so nothing the submission does at run time can change the bounds.
    """
    bounds: dict[str, TimeBound] = {}
    for file_name in sorted(tests):
        mod = module_name(file_name)
        tree = parse(tests[file_name], filename=file_name)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found = _within(node)
                if found:
                    bounds[f"{mod}.{node.name}"] = found
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        found = _within(item)
                        if found:
                            bounds[f"{mod}.{node.name}.{item.name}"] = found
    return bounds
