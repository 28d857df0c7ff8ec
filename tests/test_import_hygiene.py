"""The engine is reachable without the UI: importing it loads no UI library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

ENGINE_MODULES = [
    "logomesh",
    "ledger",
    "logomesh.events",
    "logomesh.tasks",
    "logomesh.submission",
    "logomesh.battle",
    "logomesh.purple.exchange",
    "logomesh.findings",
]


def _loaded_after_import(module: str) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'tui'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_module_loads_no_ui(module: str) -> None:
    assert _loaded_after_import(module) == []


def test_the_check_itself_sees_ui_imports() -> None:
    """Guard against a check that can never fail: importing textual must be seen."""
    assert "textual" in _loaded_after_import("textual")
