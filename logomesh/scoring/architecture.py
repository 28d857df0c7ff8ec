"""A, architectural integrity: the task's constraints checked on the AST, never with regexes.

A starts at ``ArchitectureWeights.start`` (0.80) and loses the documented
weight once per violated constraint (a banned module imported in three places
is one violated constraint, listed three times), clamped to [0, 1]. Names are
resolved through aliases (``import os as o``, ``from os import system as s``),
``__import__("x")``, ``importlib.import_module("x")`` and
``getattr(module, "name")`` with a constant name. Where a task bans imports or the network, any other way to
the import machinery (a computed name, ``sys.modules``, ``__subclasses__``, ...) is itself a violation: the
name it loads is not in the source. And whatever the spelling, a banned module the code's processes loaded
during the hidden suite is one: the harness server records every module file they open, from outside them
(``Loaded``; builtin modules and those loaded before the code open nothing and are left to the AST).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from logomesh.sandbox.base import Loaded
from logomesh.scoring.config import ArchitectureWeights
from logomesh.scoring.source import parse_source
from logomesh.tasks import Constraints

# urllib.parse and http.HTTPStatus are pure data, not network use, so only the networking submodules are listed.
NETWORK_MODULES = (
    "socket", "ssl", "http.client", "http.server", "http.cookiejar", "urllib.request", "urllib.robotparser",
    "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc", "socketserver", "asyncio.open_connection",
    "asyncio.start_server", "requests", "httpx", "aiohttp", "urllib3", "websockets", "paramiko",
)  # fmt: skip
LOCK_FACTORIES = (
    "threading.Lock", "threading.RLock", "threading.Condition", "threading.Semaphore",
    "threading.BoundedSemaphore", "multiprocessing.Lock", "multiprocessing.RLock", "asyncio.Lock",
)  # fmt: skip
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_IMPORTERS = ("__import__", "importlib.import_module", "importlib.__import__")
# Ways to load a module whose name the source need not spell: the import machinery itself, and the dunders
# through which code reaches it from any object (``().__class__.__base__.__subclasses__()``, a function's
# ``__globals__`` or ``__builtins__``). A direct call of an importer with a constant name is an ordinary import.
_MACHINERY = (*_IMPORTERS, "importlib.util", "importlib.machinery", "importlib.reload", "runpy", "pkgutil",
              "zipimport", "imp", "sys.modules", "sys.meta_path", "sys.path_hooks")
_REACHING = frozenset({"__import__", "__builtins__", "__loader__", "__spec__", "__subclasses__", "__globals__"})
_OF_A_MODULE = frozenset({"__dict__", "__getattribute__"})  # ordinary on an object; on a module, a lookup by name


@dataclass(frozen=True)
class Violation:
    kind: str  # banned_import, banned_call, network, missing_required, loop, syntax_error, no_entry_point
    constraint: str  # the constraint it breaks: the module, the call, the pattern
    line: int
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "constraint": self.constraint, "line": self.line, "detail": self.detail}


@dataclass(frozen=True)
class Architecture:
    score: float
    violations: tuple[Violation, ...]
    deductions: tuple[tuple[str, str, float], ...]  # (kind, constraint, weight), one per violated constraint
    rests_on: str = "the module's AST"


def _matches(name: str, banned: str) -> bool:
    """``name`` is ``banned`` or inside it (``os.path`` is inside ``os``)."""
    return name == banned or name.startswith(banned + ".")


class _Resolver(ast.NodeVisitor):
    """Collects every imported module and every called dotted name, aliases resolved."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.imports: list[tuple[str, int]] = []
        self.calls: list[tuple[str, int]] = []
        self.loops: list[tuple[str, int]] = []
        self.computed: list[tuple[str, int]] = []  # what reaches the import machinery otherwise than by name

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append((alias.name, node.lineno))
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}" if module else alias.name
            self.imports.append((full, node.lineno))
            self.aliases[alias.asname or alias.name] = full

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted name an expression refers to, through aliases; ``None`` if not a plain name."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            dynamic = self._dynamic_import(node)
            if dynamic:
                return dynamic
            return self._getattr_target(node)
        return None

    def _dynamic_import(self, node: ast.Call) -> str | None:
        func = self.resolve(node.func)
        if func is not None and _strip_builtins(func) in _IMPORTERS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
        return None

    def _getattr_target(self, node: ast.Call) -> str | None:
        func = self.resolve(node.func)
        if func is None or _strip_builtins(func) != "getattr" or len(node.args) < 2:
            return None
        target, attr = node.args[0], node.args[1]
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            base = self.resolve(target)
            return f"{base}.{attr.value}" if base else None
        return None

    def visit_Call(self, node: ast.Call) -> None:
        dynamic = self._dynamic_import(node)
        if dynamic:
            self.imports.append((dynamic, node.lineno))
            for arg in node.args[1:]:
                self.visit(arg)
            for keyword in node.keywords:
                self.visit(keyword)
            return  # the importer itself is spelled out with its module: an ordinary import
        if self._computed_getattr(node):
            self.computed.append((f"looks up {ast.unparse(node.args[0])[:40]} by a computed name", node.lineno))
        name = self.resolve(node.func)
        if name:
            self.calls.append((_strip_builtins(name), node.lineno))
        getattr_target = self._getattr_target(node)
        if getattr_target:
            self.calls.append((_strip_builtins(getattr_target), node.lineno))
        self.generic_visit(node)

    def _computed_getattr(self, node: ast.Call) -> bool:
        """``getattr(m, <not a constant>)`` where ``m`` is a module: an attribute, a submodule or the importer,
        named at run time."""
        func = self.resolve(node.func)
        name = _strip_builtins(func) if func else None
        if name == "vars" and node.args:
            return self._is_module(node.args[0])
        if name != "getattr" or len(node.args) < 2:
            return False
        attr = node.args[1]
        spelled = isinstance(attr, ast.Constant) and isinstance(attr.value, str)
        return not spelled and self._is_module(node.args[0])

    def _is_module(self, node: ast.expr) -> bool:
        """``node`` names a module: one imported so far, or the interpreter's own."""
        target = self.resolve(node)
        modules = {"builtins", "__builtins__", "sys", "importlib"} | {a.split(".")[0] for a in self.aliases.values()}
        return target is not None and target.split(".")[0] in modules

    def visit_Name(self, node: ast.Name) -> None:
        self._note_machinery(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _REACHING or (node.attr in _OF_A_MODULE and self._is_module(node.value)):
            self.computed.append((f"reaches {node.attr}", node.lineno))
        elif not self._note_machinery(node):
            self.generic_visit(node)

    def _note_machinery(self, node: ast.Name | ast.Attribute) -> bool:
        name = self.resolve(node)
        if name is None:
            return False
        name = _strip_builtins(name)
        if name == "__builtins__" or name in _REACHING or any(_matches(name, m) for m in _MACHINERY):
            self.computed.append((f"uses {name}", node.lineno))
            return True
        return False

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, _LOOPS):
            self.loops.append((type(node).__name__, getattr(node, "lineno", 0)))
        super().generic_visit(node)


def _strip_builtins(name: str) -> str:
    return name.removeprefix("builtins.").removeprefix("__builtins__.")


def _is_recursive(tree: ast.Module) -> bool:
    """Some function calls itself by name, or some method calls ``self.<its name>``."""
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func
            if isinstance(callee, ast.Name) and callee.id == func.name:
                return True
            if (
                isinstance(callee, ast.Attribute)
                and callee.attr == func.name
                and isinstance(callee.value, ast.Name)
                and callee.value.id in ("self", "cls")
            ):
                return True
    return False


def _takes_a_lock(tree: ast.Module) -> bool:
    """Some function enters a ``with`` on a name or attribute (``with self._lock:``) or calls ``.acquire()``.

    A lock created and never taken protects nothing; creating one was all the old rule asked."""
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.With | ast.AsyncWith) and any(
                    isinstance(item.context_expr, ast.Name | ast.Attribute) for item in node.items):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "acquire":
                return True
    return False


def find_violations(source: str, constraints: Constraints) -> list[Violation]:
    tree, reason = parse_source(source)
    if tree is None:
        return [Violation("syntax_error", "parse", 0, reason)]
    try:
        return _violations(tree, constraints)
    except RecursionError:
        return [Violation("syntax_error", "parse", 0, "source is nested too deeply to analyse")]


def _violations(tree: ast.Module, constraints: Constraints) -> list[Violation]:
    resolver = _Resolver()
    resolver.visit(tree)
    found: list[Violation] = []
    for module, line in resolver.imports:
        for banned in constraints.banned_imports:
            if _matches(module, banned):
                found.append(Violation("banned_import", banned, line, f"imports {module}"))
        if not constraints.network:
            for net in NETWORK_MODULES:
                if _matches(module, net):
                    found.append(Violation("network", "network", line, f"imports network module {module}"))
    if constraints.banned_imports or not constraints.network:
        found += [Violation("banned_import", "a module named at run time", line,
                            f"{what}: a banned module may load under a name the source never spells")
                  for what, line in resolver.computed]
    for name, line in resolver.calls:
        for banned in constraints.banned_calls:
            if _matches(name, banned):
                found.append(Violation("banned_call", banned, line, f"calls {name}"))
        if not constraints.network and any(_matches(name, net) for net in NETWORK_MODULES):
            found.append(Violation("network", "network", line, f"calls network API {name}"))
    if constraints.forbid_loops:
        found += [Violation("loop", "no loops", line, f"{kind} loop") for kind, line in resolver.loops]
    if "lock" in constraints.required:
        if not any(any(_matches(name, factory) for factory in LOCK_FACTORIES) for name, _ in resolver.calls):
            found.append(Violation("missing_required", "lock", 0,
                                   "no lock is ever created (threading.Lock, RLock, ...)"))
        elif not _takes_a_lock(tree):
            found.append(Violation("missing_required", "lock", 0,
                                   "a lock is created but no function ever takes it (with lock: or lock.acquire())"))
    if "recursion" in constraints.required and not _is_recursive(tree):
        found.append(Violation("missing_required", "recursion", 0, "no function calls itself"))
    return sorted(set(found), key=lambda v: (v.line, v.kind, v.constraint, v.detail))


SEEN = "(seen from outside the process)"


def _as_banned(module: str, banned: str) -> bool:
    """``module`` is ``banned``, inside it, or its private accelerator (``_pickle`` for ``pickle``)."""
    return _matches(module, banned) or (module.startswith("_") and not module.startswith("__")
                                        and _matches(module[1:], banned))


def loaded_violations(loaded: Loaded, constraints: Constraints) -> list[Violation]:
    """The banned and network modules among those the code's processes ``loaded``; a record that lost opens is a
    violation itself where the task bans anything, since what it lost may have been banned."""
    found = [Violation("banned_import", banned, 0, f"loaded {module} {SEEN}")
             for module in loaded.modules for banned in constraints.banned_imports if _as_banned(module, banned)]
    if not constraints.network:
        found += [Violation("network", "network", 0, f"loaded network module {module} {SEEN}")
                  for module in loaded.modules if any(_as_banned(module, net) for net in NETWORK_MODULES)]
    if not loaded.complete and (constraints.banned_imports or not constraints.network):
        found.append(Violation("banned_import", "the record of loaded modules", 0,
                               "the record of the modules the code loaded is incomplete (opens were lost): "
                               "a banned one may be among them"))
    return found


def _rests_on(raced: bool, loaded: Loaded | None, decided: bool, constraints: Constraints) -> str:
    """What A rests on, in words: the AST, and the race probe's history or the record of loaded modules where
    either decided a violation; a missing record is said, never taken as clean."""
    parts = ["the module's AST"]
    if raced:
        parts.append("the race probe's history")
    if decided:
        parts.append("the modules its processes loaded, seen from outside")
    words = " and ".join(parts)
    if loaded is None and (constraints.banned_imports or not constraints.network):
        words += " (the modules loaded at run time were not recorded)"
    return words


def architecture_score(source: str, constraints: Constraints, weights: ArchitectureWeights,
                       entry_point: str | None = None, raced: str = "", loaded: Loaded | None = None) -> Architecture:
    """A from the AST; with ``entry_point``, a module that does not define it has no architecture to measure.

    ``raced`` is a confirmed race finding's summary, if the red agent saw one: a required lock counts only if the
    contract's methods exclude each other, and a race (an invariant broken, or a client-side history no serial
    order explains) is calls that did not. So a lock that exists and is taken somewhere costs A all the same.
    ``loaded`` is what the hidden suite's run recorded of the modules the code loaded (None: no record).
    """
    violations = find_violations(source, constraints)
    race = bool(raced) and "lock" in constraints.required and not any(v.constraint == "lock" for v in violations)
    if race:
        violations.append(Violation("missing_required", "lock", 0,
                                    f"a lock is taken, but calls did not exclude each other ({raced})"[:200]))
    seen = loaded_violations(loaded, constraints) if loaded is not None else []
    violations += seen
    rests_on = _rests_on(race, loaded, bool(seen), constraints)
    if any(v.kind == "syntax_error" for v in violations):
        rests_on = "nothing: the source does not parse"
    elif entry_point is not None:
        from logomesh.tasks.module_check import defined_names

        tree, _ = parse_source(source)
        if tree is not None and entry_point not in defined_names(tree):
            violations.append(Violation("no_entry_point", entry_point, 0, f"defines no `{entry_point}`"))
            rests_on = f"nothing: the module defines no `{entry_point}`"
    distinct = sorted({(v.kind, v.constraint) for v in violations})
    deductions = tuple((kind, constraint, float(getattr(weights, kind))) for kind, constraint in distinct)
    score = weights.start - sum(weight for _, _, weight in deductions)
    return Architecture(min(1.0, max(0.0, score)), tuple(violations), deductions, rests_on)
