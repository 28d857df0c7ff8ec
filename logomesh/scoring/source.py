"""Parsing untrusted source defensively: the scorer must never crash on what a purple agent sends."""

from __future__ import annotations

import ast

from logomesh.syntax import parse


def parse_source(source: str) -> tuple[ast.Module | None, str]:
    """The module's AST, or ``None`` and a one-line reason."""
    try:
        return parse(source), ""
    except SyntaxError as exc:
        return None, f"source does not parse: {exc.msg} (line {exc.lineno or 0})"
    except ValueError as exc:
        return None, f"source does not parse: {exc}"
    except (RecursionError, MemoryError):
        return None, "source is nested too deeply to parse"
