"""What a task tells the red agent about itself: the ``[red]`` tables of its task.toml and its ``red.py``.

The engine names no task. Where an attack family needs something only the
task can say (a model of its contract, a race scenario, a growth driver,
boundary inputs, the kind of input its entry point takes) it reads it here.
``red.py`` is task code. Its scenario functions (``race``, ``grow``,
``model``) run inside the sandbox next to the submission, as ``_lm_task.py``,
and only record what the code did; a ``check_<kind>`` function beside one
judges that record, on the host (``TaskRed.oracle``), where nothing of the
submission runs: the submission can rewrite anything in the process it shares
with the scenario (builtins included), but not the verdict. The host runs the
module with ``import solution`` answered by an empty placeholder, and calls
only the ``check_`` functions. The format is in ``docs/tasks.md``,
"Red-agent scenarios".
"""

from __future__ import annotations

import ast
import builtins
import math
import tomllib
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from logomesh.syntax import PARSE_ERRORS, parse
from logomesh.tasks import TaskError, TaskSpec

MODULE_FILE = "red.py"
# [red.<kind>] table -> the function red.py must define for it
FUNCTIONS = {"race": "race", "growth": "grow", "model": "model"}
COMPLEXITY_INPUTS = ("int", "string", "expression")
_CALL_KEYS = ("target", "args", "kwargs", "ctor", "ctor_kw", "setup", "expect")
_BOUNDARY_KEYS = frozenset({"id", "must_reject", "cwe", "prior", *_CALL_KEYS})
_TABLES = frozenset({*FUNCTIONS, "complexity", "boundary"})


@dataclass(frozen=True)
class Scenario:
    """A scenario ``red.py`` runs against ``entry`` (a class or function of solution.py)."""

    entry: str
    story: str = ""  # how a person would reproduce it; the finding's reproducer is built from it
    args: dict[str, Any] = field(default_factory=dict)  # passed to red.py's function as they are


@dataclass(frozen=True)
class BoundaryCase:
    """One odd or invalid input: a call the contract must reject, or must survive without an odd escape."""

    id: str
    call: dict[str, Any]  # target ("f", "Class" or "Class.method"), args, kwargs, ctor, ctor_kw, setup, expect
    must_reject: bool
    cwe: str
    prior: float


@dataclass(frozen=True)
class ComplexityInput:
    entry: str
    kind: str  # one of COMPLEXITY_INPUTS: the shape of the growing inputs fed to ``entry``


@dataclass(frozen=True)
class TaskRed:
    module: str = ""  # red.py's text, shipped into the sandbox as _lm_task.py
    race: Scenario | None = None
    growth: Scenario | None = None
    model: Scenario | None = None
    complexity: ComplexityInput | None = None
    boundary: tuple[BoundaryCase, ...] = ()

    def scenario(self, kind: str, entry: str) -> Scenario | None:
        """The ``race``, ``growth`` or ``model`` scenario for ``entry``, if the task has one (and a module)."""
        found: Scenario | None = getattr(self, kind)
        return found if found is not None and found.entry == entry and self.module else None

    def oracle(self, kind: str) -> Oracle | None:
        """red.py's ``check_<kind>(args, observed) -> violations``, run on the host; None when it has none."""
        name = f"check_{FUNCTIONS.get(kind, kind)}"
        if not self.module or name not in _defined(self.module):
            return None
        found = _host_namespace(self.module).get(name)
        return found if callable(found) else None

    def subject(self, reference: str, args: dict[str, Any]) -> Callable[[], Any] | None:
        """red.py's ``subject(args)``, run on the host with ``import solution`` answered by ``reference`` (the
        task's reference/solution.py): a fresh reference object of the kind the race threads share, the model
        their client-side history is judged against (``history.py``). None when red.py defines no ``subject``."""
        if not self.module or not reference or "subject" not in _defined(self.module):
            return None
        found = _model_namespace(self.module, reference).get("subject")
        if not callable(found):
            return None
        frozen = dict(args)
        return lambda: found(dict(frozen))

    def boundary_cases(self, entry: str) -> list[BoundaryCase]:
        return [case for case in self.boundary if str(case.call["target"]).split(".")[0] == entry]


Oracle = Callable[[dict[str, Any], Any], list[str]]


@cache
def _defined(module: str) -> frozenset[str]:
    """The functions red.py defines, kept per source: asked on every play (``oracle``) and every race variant."""
    try:
        tree = parse(module)
    except PARSE_ERRORS:
        return frozenset()
    return frozenset(node.name for node in tree.body if isinstance(node, ast.FunctionDef))


@cache
def _host_namespace(module: str) -> dict[str, Any]:
    """red.py run on the host for its ``check_`` functions: ``import solution`` gets an empty placeholder."""
    real_import = builtins.__import__

    def guarded(name: str, *args: Any, **kwargs: Any) -> Any:
        return types.ModuleType("solution") if name == "solution" else real_import(name, *args, **kwargs)

    namespace: dict[str, Any] = {"__name__": "task_red", "__builtins__": {**vars(builtins), "__import__": guarded}}
    exec(compile(module, "red.py", "exec", dont_inherit=True), namespace)
    return namespace


@cache
def _model_namespace(module: str, reference: str) -> dict[str, Any]:
    """red.py run on the host with ``import solution`` answered by the task's reference (task code, trusted as
    red.py is; never the submission's)."""
    solution = types.ModuleType("solution")
    solution.__dict__["__file__"] = "reference/solution.py"
    exec(compile(reference, "reference/solution.py", "exec", dont_inherit=True), solution.__dict__)
    real_import = builtins.__import__

    def answered(name: str, *args: Any, **kwargs: Any) -> Any:
        return solution if name == "solution" else real_import(name, *args, **kwargs)

    namespace: dict[str, Any] = {"__name__": "task_red", "__builtins__": {**vars(builtins), "__import__": answered}}
    exec(compile(module, "red.py", "exec", dont_inherit=True), namespace)
    return namespace


def load_red(task: TaskSpec) -> TaskRed:
    """The red-agent data of ``task``; an empty ``TaskRed`` when it has none. ``TaskError`` when malformed."""
    spec_path = task.root / "task.toml"
    if not spec_path.is_file():
        return TaskRed()
    try:
        data = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"{spec_path}: not valid TOML: {exc}") from None
    raw = data.get("red", {})
    if not isinstance(raw, dict):
        raise TaskError(f"{spec_path}: [red] must be a table (see docs/tasks.md, 'Red-agent scenarios')")
    unknown = sorted(set(raw) - _TABLES)
    if unknown:
        raise TaskError(f"{spec_path}: unknown [red] table(s) {unknown}; known: {sorted(_TABLES)}")
    module_path = task.root / MODULE_FILE
    module = module_path.read_text(encoding="utf-8") if module_path.is_file() else ""
    scenarios = {kind: _scenario(raw[kind], f"red.{kind}", spec_path) for kind in FUNCTIONS if kind in raw}
    if scenarios:
        _check_module(module, module_path, [FUNCTIONS[kind] for kind in scenarios])
    return TaskRed(
        module=module,
        race=scenarios.get("race"),
        growth=scenarios.get("growth"),
        model=scenarios.get("model"),
        complexity=_complexity(raw["complexity"], spec_path) if "complexity" in raw else None,
        boundary=tuple(_boundary(item, spec_path) for item in _tables(raw.get("boundary", []), "red.boundary",
                                                                       spec_path)),
    )


def _tables(value: Any, name: str, where: Path) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TaskError(f"{where}: each [[{name}]] must be a table")
    return value


def _text(table: dict[str, Any], key: str, name: str, where: Path, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise TaskError(f"{where}: [{name}] needs a non-empty string '{key}'")
    return value


def _scenario(table: Any, name: str, where: Path) -> Scenario:
    if not isinstance(table, dict):
        raise TaskError(f"{where}: [{name}] must be a table")
    args = table.get("args", {})
    if not isinstance(args, dict):
        raise TaskError(f"{where}: [{name}] 'args' must be a table")
    story = table.get("story", "")
    if not isinstance(story, str):
        raise TaskError(f"{where}: [{name}] 'story' must be a string")
    return Scenario(_text(table, "entry", name, where), story, args)


def _complexity(table: Any, where: Path) -> ComplexityInput:
    if not isinstance(table, dict):
        raise TaskError(f"{where}: [red.complexity] must be a table")
    kind = _text(table, "input", "red.complexity", where)
    if kind not in COMPLEXITY_INPUTS:
        raise TaskError(f"{where}: [red.complexity] input {kind!r} must be one of {', '.join(COMPLEXITY_INPUTS)}")
    return ComplexityInput(_text(table, "entry", "red.complexity", where), kind)


def _boundary(table: dict[str, Any], where: Path) -> BoundaryCase:
    unknown = sorted(set(table) - _BOUNDARY_KEYS)
    if unknown:
        raise TaskError(f"{where}: [[red.boundary]] has unknown key(s) {unknown}; known: {sorted(_BOUNDARY_KEYS)}")
    ident = _text(table, "id", "red.boundary", where)
    _text(table, "target", f"red.boundary {ident}", where)
    cwe = _text(table, "cwe", f"red.boundary {ident}", where, default="CWE-20")
    prior = table.get("prior", 0.3)
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not math.isfinite(prior) \
            or not 0.0 <= prior <= 1.0:
        raise TaskError(f"{where}: [[red.boundary]] {ident}: prior must be a number in [0, 1]")
    call = {key: table[key] for key in _CALL_KEYS if key in table}
    return BoundaryCase(ident, call, bool(table.get("must_reject", False)), cwe, float(prior))


def _check_module(module: str, path: Path, functions: list[str]) -> None:
    """``red.py`` must exist, parse, and define every function a table promises (it is never run here)."""
    if not module:
        raise TaskError(f"{path}: missing; the [red] race/growth/model tables need it (see docs/tasks.md)")
    try:
        tree = parse(module, filename=str(path))
    except PARSE_ERRORS as exc:
        raise TaskError(f"{path}: does not parse: {exc}") from None
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    missing = [name for name in functions if name not in defined]
    if missing:
        raise TaskError(f"{path}: define {', '.join(f'{n}()' for n in missing)} for the [red] tables that need it")
