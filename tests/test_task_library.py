"""The task library's data, checked without a sandbox.

Every task folder must load through the real loader, carry at least twelve
hidden drivers that import only the standard library, ``observe`` and
``solution`` and judge nothing themselves, a reference whose public shape matches the contract in the
issue, and at least four labelled submissions whose code parses. Running the
hidden suites is the sandbox tests' job (and ``python3 tasks/check_library.py``,
through a sandbox); here only static properties are checked, so the file
stays fast.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import sys
from types import ModuleType
from typing import Any

import pytest

from logomesh.sandbox.discover import discover
from logomesh.tasks import Constraints, TaskSpec, all_tasks, default_tasks_dir, load_task
from logomesh.tasks.check import judging_code

TASKS_DIR = default_tasks_dir()
TASK_IDS = sorted(p.name for p in TASKS_DIR.iterdir() if (p / "task.toml").is_file())

EXPECTED_TASKS = {
    "rate-limiter",
    "lru-cache",
    "bank-ledger",
    "safe-path",
    "sql-select",
    "email-validator",
    "fib-recursive",
    "safe-calculator",
    "merkle-root",
    "connection-pool",
}
ALLOWED_LABELS = {
    "good",
    "wrong-behaviour",
    "race",
    "injection",
    "traversal",
    "redos",
    "unbounded-growth",
    "off-intent",
}
# Labels whose hidden-suite failure is part of the definition.
ALWAYS_DEFECT = {"wrong-behaviour", "off-intent"}
MIN_HIDDEN_TESTS = 12
MIN_SUBMISSIONS = 4

# Defect families each task must carry (besides good and off-intent), per the issue.
EXPECTED_FLAWS: dict[str, set[str]] = {
    "rate-limiter": {"wrong-behaviour", "race", "unbounded-growth"},
    "lru-cache": {"wrong-behaviour", "race", "unbounded-growth"},
    "bank-ledger": {"wrong-behaviour", "race"},
    "safe-path": {"traversal"},
    "sql-select": {"injection", "wrong-behaviour"},
    "email-validator": {"redos", "wrong-behaviour"},
    "fib-recursive": {"wrong-behaviour"},
    "safe-calculator": {"injection", "wrong-behaviour"},
    "merkle-root": {"wrong-behaviour", "unbounded-growth"},
    "connection-pool": {"wrong-behaviour", "race", "unbounded-growth"},
}

# The public shape of each contract: entry point -> (constructor/function parameters, required methods).
CONTRACTS: dict[str, tuple[str, list[str], list[str]]] = {
    "rate-limiter": ("RateLimiter", ["max_requests", "window_seconds", "clock"], ["allow"]),
    "lru-cache": ("LRUCache", ["capacity"], ["get", "put", "__len__"]),
    "bank-ledger": ("Bank", [], ["open_account", "deposit", "withdraw", "transfer", "balance"]),
    "safe-path": ("safe_join", ["base_dir", "user_path"], []),
    "sql-select": ("build_select", ["table", "columns", "where"], []),
    "email-validator": ("is_valid_email", ["address"], []),
    "fib-recursive": ("fib", ["n"], []),
    "safe-calculator": ("evaluate", ["expression"], []),
    "merkle-root": ("merkle_root", ["leaves"], []),
    "connection-pool": ("ConnectionPool", ["factory", "max_size"], ["acquire", "release"]),
}


def _task(task_id: str) -> TaskSpec:
    return load_task(task_id, TASKS_DIR)


def _imported_roots(tree: ast.AST) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _load_reference(task_id: str) -> ModuleType:
    path = TASKS_DIR / task_id / "reference" / "solution.py"
    spec = importlib.util.spec_from_file_location(f"_logomesh_ref_{task_id.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _submissions(task_id: str) -> dict[str, dict[str, Any]]:
    folder = TASKS_DIR / task_id / "submissions"
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))}


def test_library_has_the_ten_tasks_of_the_issue() -> None:
    assert set(TASK_IDS) == EXPECTED_TASKS
    assert {t.id for t in all_tasks(TASKS_DIR)} == EXPECTED_TASKS


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_loads_with_a_complete_spec(task_id: str) -> None:
    task = _task(task_id)
    assert task.id == task_id
    assert task.entry_point == CONTRACTS[task_id][0]
    assert task.entry_point in task.description, "the intent must name the entry point"
    assert task.constraints.network is False
    assert task.attack_surface and task.attack_targets and task.invariants
    assert all(inv.description for inv in task.invariants)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_hidden_suite_has_enough_stdlib_only_drivers_that_judge_nothing(task_id: str) -> None:
    task = _task(task_id)
    names = discover(task.hidden_tests)
    assert len(names) >= MIN_HIDDEN_TESTS, f"{task_id}: {len(names)} hidden drivers"
    allowed = set(sys.stdlib_module_names) | {"solution", "observe"}
    for name, source in task.hidden_tests.items():
        foreign = _imported_roots(ast.parse(source)) - allowed
        assert not foreign, f"{task_id}/hidden/{name} imports non-stdlib {sorted(foreign)}"
        assert "from solution import" in source or "import solution" in source
        assert judging_code(name, source) == [], "drivers observe; the host judges"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_hidden_suite_hash_is_stable_and_distinct(task_id: str) -> None:
    first = load_task(task_id, TASKS_DIR).hidden_sha256
    assert first == _task(task_id).hidden_sha256
    others = {t.hidden_sha256 for t in all_tasks(TASKS_DIR) if t.id != task_id}
    assert first not in others


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_implements_the_contract(task_id: str) -> None:
    entry, params, methods = CONTRACTS[task_id]
    module = _load_reference(task_id)
    target = getattr(module, entry, None)
    assert target is not None, f"reference lacks {entry}"
    signature = inspect.signature(target)
    assert list(signature.parameters)[: len(params)] == params
    for method in methods:
        assert callable(getattr(target, method, None)), f"{entry} lacks {method}()"


def _constraint_violations(source: str, constraints: Constraints) -> list[str]:
    """A small static reading of ``[constraints]``, enough to keep the library self-consistent."""
    tree = ast.parse(source)
    problems = []
    banned = set(constraints.banned_imports)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    problems += [f"imports {m}" for m in sorted(imported) if m in banned or m.split(".")[0] in banned]
    called = {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    problems += [f"calls {c}" for c in sorted(called & set(constraints.banned_calls))]
    if "lock" in constraints.required and not any(w in source for w in ("Lock", "Condition", "Semaphore")):
        problems.append("takes no lock")
    if "recursion" in constraints.required:
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if not any(isinstance(n, ast.Call) and ast.unparse(n.func) in defined for n in ast.walk(tree)):
            problems.append("never calls one of its own functions")
    if constraints.forbid_loops:
        loops = (ast.For, ast.While, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        problems += [f"loop at line {n.lineno}" for n in ast.walk(tree) if isinstance(n, loops)]
    return problems


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_and_good_respect_the_constraints(task_id: str) -> None:
    task = _task(task_id)
    reference = (task.root / "reference" / "solution.py").read_text(encoding="utf-8")
    assert _constraint_violations(reference, task.constraints) == []
    assert _constraint_violations(_submissions(task_id)["good"]["sourceCode"], task.constraints) == []


def test_constraint_reading_catches_the_flawed_variants_it_should() -> None:
    """The eval-based calculator and the looping Fibonacci break their task's constraints."""
    calculator = _task("safe-calculator").constraints
    assert "calls eval" in _constraint_violations(
        _submissions("safe-calculator")["eval-based"]["sourceCode"], calculator
    )
    fib = _task("fib-recursive").constraints
    looping = _constraint_violations(_submissions("fib-recursive")["iterative-loop"]["sourceCode"], fib)
    assert "never calls one of its own functions" in looping
    assert any(p.startswith("loop at line") for p in looping)
    limiter = _task("rate-limiter").constraints
    assert _constraint_violations(_submissions("rate-limiter")["no-lock"]["sourceCode"], limiter) == ["takes no lock"]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_flaws_fit_the_task(task_id: str) -> None:
    """Each task carries the defect families the red agent is expected to find in it."""
    labels = {s["label"] for s in _submissions(task_id).values()}
    assert EXPECTED_FLAWS[task_id] | {"good", "off-intent"} <= labels


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_submissions_are_labelled_and_parse(task_id: str) -> None:
    task = _task(task_id)
    subs = _submissions(task_id)
    assert len(subs) >= MIN_SUBMISSIONS
    assert "good" in subs
    assert subs["good"]["label"] == "good" and subs["good"]["behaviour_defect"] is False
    assert any(s["label"] != "good" for s in subs.values())
    for name, data in subs.items():
        where = f"{task_id}/submissions/{name}.json"
        assert data["label"] in ALLOWED_LABELS, where
        assert isinstance(data["behaviour_defect"], bool), where
        if data["label"] in ALWAYS_DEFECT:
            assert data["behaviour_defect"] is True, f"{where}: a {data['label']} variant must fail hidden tests"
        if data["label"] == "good":
            assert data["behaviour_defect"] is False, where
        assert data["rationale"].strip(), where
        source_tree = ast.parse(data["sourceCode"], filename=where)
        defined = {n.name for n in source_tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
        assert task.entry_point in defined, f"{where} does not define {task.entry_point}"
        assert discover({"test_submission.py": data["testCode"]}), f"{where}: testCode has no tests"
        labelled = task.labelled_submission(name)
        assert labelled.label == data["label"]
        assert labelled.submission.source == data["sourceCode"]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_submissions_differ_from_each_other_and_the_reference(task_id: str) -> None:
    reference = (TASKS_DIR / task_id / "reference" / "solution.py").read_text(encoding="utf-8")
    sources = [s["sourceCode"] for s in _submissions(task_id).values()]
    assert len(set(sources)) == len(sources)
    assert reference not in sources
