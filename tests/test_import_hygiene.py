"""The engine is reachable without the UI: importing it loads no UI library."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ENGINE_MODULES = [
    "logomesh",
    "ledger",
    "logomesh.events",
    "logomesh.tasks",
    "logomesh.submission",
    "logomesh.battle.spine",
    "logomesh.purple.exchange",
    "logomesh.findings",
]


def _loaded_after_import(module: str, tops: tuple[str, ...] = ("textual", "rich", "tui")) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {tops!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_module_loads_no_ui(module: str) -> None:
    assert _loaded_after_import(module) == []


def test_the_check_itself_sees_ui_imports() -> None:
    """Guard against a check that can never fail: importing textual must be seen."""
    assert "textual" in _loaded_after_import("textual")


def test_importing_scoring_leaves_onnx_to_the_models_load() -> None:
    """onnx takes ~0.55 s to import: a command that imports scoring pays it only once it loads the model."""
    assert _loaded_after_import("logomesh.scoring", ("onnx", "ml_dtypes")) == []
    assert "onnx" in _loaded_after_import("logomesh.scoring.encoder_graph", ("onnx",))


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The engine modules ``path`` imports at run time (``TYPE_CHECKING`` blocks excluded)."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(
        node.test) for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & modules


def _module_graph(root: Path) -> dict[str, set[str]]:
    files = {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in root.rglob("*.py")}
    return {name: _imports(path, set(files)) - {name} for name, path in files.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_engine_has_no_import_cycle() -> None:
    graph = _module_graph(Path(__file__).resolve().parents[1] / "logomesh")
    assert "logomesh.battle.spine" in graph["logomesh.battle.replay"]  # the graph sees function and module imports
    assert _cycles(graph) == []


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (pkg / "b.py").write_text("from pkg import a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n")
    assert _cycles(_module_graph(pkg)) == [["pkg.a", "pkg.b"]]


LOWER_LAYERS = ("scoring", "red", "purple", "tasks", "sandbox")


def test_no_lower_layer_imports_the_battle_spine() -> None:
    """Issue 36: ``battle/`` only orchestrates; what the layers below need (the per-run context, the module
    check, the hidden suite) lives below it, so imports point one way (type-only imports included)."""
    root = Path(__file__).resolve().parents[1] / "logomesh"
    upward = []
    for layer in LOWER_LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names] if isinstance(node, ast.Import) else []
                upward += [f"{path.relative_to(root)}: {n}" for n in names if n.startswith("logomesh.battle")]
    assert upward == []
    assert _cycles(_module_graph(root)) == []


# Modules of ``battle/`` that only read what the stages handed them, and the layers they must not call into.
READS_ONLY_STAGE_VALUES = {"logomesh.battle.record": ("logomesh.scoring",)}


def test_recording_calls_no_stage_it_records() -> None:
    """Issue 36: ``battle/record.py`` builds the entry from the values the stages returned (the task, the
    ``Measured``, the ``ScoreCard``); what it needs of scoring, the stage that owns it computes and carries.
    Type-only imports are fine: they run nothing."""
    graph = _module_graph(Path(__file__).resolve().parents[1] / "logomesh")
    assert "logomesh.scoring.pipeline" in graph["logomesh.battle.spine"]  # the graph sees a function's import
    calls = {module: sorted(m for m in graph[module] if m.startswith(layers))
             for module, layers in READS_ONLY_STAGE_VALUES.items()}
    assert calls == {module: [] for module in READS_ONLY_STAGE_VALUES}
