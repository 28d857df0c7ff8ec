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
import threading

# What ast.parse and recursive AST walks raise on hostile input: bad syntax, NUL bytes,
# nesting deeper than the parser or the interpreter stack allows.
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)

_PARSE_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source)``, one thread at a time; raises what ``ast.parse`` raises."""
    with _PARSE_LOCK:
        return ast.parse(source, filename=filename)
