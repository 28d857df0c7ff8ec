"""Static features of the artifact, read from its AST. They only set priors; they never report.

Imports are resolved through aliases (``import re as r`` then ``r.compile``,
``from os import path as p``), so a renamed call is still seen for what it is.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from logomesh.syntax import PARSE_ERRORS, parse

_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b", re.IGNORECASE)
_REGEX_CALLS = {"re.compile", "re.match", "re.fullmatch", "re.search", "re.findall", "re.finditer", "re.sub",
                "re.split"}
_LOCKS = {"threading.Lock", "threading.RLock", "threading.Condition", "threading.Semaphore",
          "threading.BoundedSemaphore"}
_DROPS = {"del", "pop", "popleft", "popitem", "clear", "remove", "discard"}


@dataclass(frozen=True)
class Features:
    parses: bool = True
    functions: tuple[str, ...] = ()  # public module-level functions
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # public class -> its methods
    calls: frozenset[str] = frozenset()  # resolved dotted names of everything called
    regexes: tuple[str, ...] = ()  # regex literals passed to re.*
    builds_sql_text: bool = False  # SQL keywords in an f-string, %-format, .format or concatenation
    drops_state: bool = False  # del / pop / popleft / popitem / clear anywhere
    uses_lock: bool = False
    resolves_paths: bool = False  # os.path.realpath / Path.resolve / os.path.commonpath

    def has_call(self, *names: str) -> bool:
        return any(n in self.calls for n in names)


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.calls: set[str] = set()
        self.regexes: list[str] = []
        self.builds_sql = False
        self.drops = False

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            self.aliases[alias.asname or top] = alias.name if alias.asname else top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}".lstrip(".")

    def dotted(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            head = self.dotted(node.value)
            return f"{head}.{node.attr}" if head else None
        return None

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        if name:
            self.calls.add(name)
            first = node.args[0] if node.args else None
            if name in _REGEX_CALLS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                self.regexes.append(first.value)
            if name.endswith(".format") and isinstance(node.func, ast.Attribute):
                self.builds_sql |= _is_sql(node.func.value)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _DROPS:
            self.drops = True
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self.drops = True
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        if any(_SQL.search(v.value) for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)):
            self.builds_sql = True
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, (ast.Mod, ast.Add)) and (_is_sql(node.left) or _is_sql(node.right)):
            self.builds_sql = True
        self.generic_visit(node)


def _is_sql(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_SQL.search(node.value))


def read_features(source: str) -> Features:
    try:
        tree = parse(source)
    except PARSE_ERRORS:
        return Features(parses=False)
    visitor = _Visitor()
    visitor.visit(tree)
    functions = tuple(n.name for n in tree.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_"))
    classes = {
        n.name: tuple(m.name for m in n.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for n in tree.body
        if isinstance(n, ast.ClassDef) and not n.name.startswith("_")
    }
    calls = frozenset(visitor.calls)
    return Features(
        functions=functions,
        classes=classes,
        calls=calls,
        regexes=tuple(dict.fromkeys(visitor.regexes)),
        builds_sql_text=visitor.builds_sql,
        drops_state=visitor.drops,
        uses_lock=bool(calls & _LOCKS),
        resolves_paths=bool({c for c in calls if c.endswith(("realpath", ".resolve", "commonpath", "abspath"))}),
    )
