"""docs/ARCHITECTURE.md's walk through one battle names files and functions that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
NAMED = re.compile(r"`((?:[\w-]+/)*[\w-]+\.py)(?:::(\w+)(?:\.(\w+))?)?`")


def _walk_text() -> str:
    text = DOC.read_text()
    start = text.index("## Follow one battle")
    return text[start:text.index("\n## ", start + 1)]


def _resolve(name: str) -> Path | None:
    """A path as the walk names it: from the repository root, else under ``logomesh/``."""
    for candidate in (ROOT / name, ROOT / "logomesh" / name):
        if candidate.is_file():
            return candidate
    return None


def _defined(path: Path) -> set[str]:
    """Top-level functions and classes of ``path``, and ``Class.method`` for their methods."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names.update(f"{node.name}.{item.name}" for item in node.body
                         if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef))
    return names


def _references(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(1), ".".join(p for p in m.group(2, 3) if p) or None) for m in NAMED.finditer(text)]


def test_the_walk_names_files_and_functions() -> None:
    refs = _references(_walk_text())
    assert len(refs) >= 30  # the walk covers the spine, not a line or two
    missing = [f"{path}::{name}" if name else path for path, name in refs
               if (found := _resolve(path)) is None or (name is not None and name not in _defined(found))]
    assert missing == []


@pytest.mark.parametrize("ref", ["`battle/nowhere.py`", "`battle/spine.py::no_such_stage`"])
def test_the_check_sees_a_wrong_name(ref: str) -> None:
    [(path, name)] = _references(ref)
    found = _resolve(path)
    assert found is None or (name is not None and name not in _defined(found))
