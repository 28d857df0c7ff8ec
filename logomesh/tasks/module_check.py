"""Is this text a Python module that defines the task's entry point? Read as text, never run.

The battle asks this before judging (an answer without code is a purple failure, not a score),
and the LLM purple agent asks it before it answers (a module without the entry point earns the
model one repair round).
"""

from __future__ import annotations

import ast
import re

from logomesh.syntax import PARSE_ERRORS, parse

SELF = "solution"  # the name the judge saves the module under
_FILE_NAME = re.compile(r"^[\w./\\-]+\.(?:py|txt|json|md)$")


def _is_self(module: str) -> bool:
    return module == SELF or module.startswith(SELF + ".")


def defined_names(tree: ast.Module) -> set[str]:
    """Names bound at module level: defs, classes, assignments, imports, also inside top-level if/try/with."""
    names: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and _is_self(node.module or ""):
                continue  # `from solution import X` in solution.py defines nothing: it is the module importing itself
            names.update((a.asname or a.name).split(".")[0] for a in node.names if not (
                isinstance(node, ast.Import) and _is_self(a.name)))
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
            for block in ("body", "orelse", "finalbody"):
                pending.extend(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                pending.extend(handler.body)
    return names


def module_problem(source: str, entry_point: str) -> str | None:
    """``None`` when ``source`` parses and defines ``entry_point``; else a one-line reason naming what is wrong."""
    text = source.strip()
    if not text:
        return f"the agent returned no code (an empty module; it must define `{entry_point}`)"
    if "\n" not in text and _FILE_NAME.match(text):
        return f"the agent returned a file name ({text!r}) instead of a module defining `{entry_point}`"
    try:
        tree = parse(source)
    except SyntaxError as exc:
        return (f"the agent returned no module defining `{entry_point}`: the code does not parse "
                f"({exc.msg}, line {exc.lineno or 0})")
    except PARSE_ERRORS:
        return f"the agent returned no module defining `{entry_point}`: the code cannot be parsed"
    if entry_point not in defined_names(tree):
        return f"the agent returned no module defining `{entry_point}`"
    return None
