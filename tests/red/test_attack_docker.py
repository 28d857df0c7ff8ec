"""The red agent against real code in the real sandbox: flawed code is caught, correct code is not.

One sandbox for the module; small budgets. Each pair below is a flawed
artifact and a correct one for the same contract, so an oracle that fired on
anything would fail the second half.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from logomesh.cli import app
from logomesh.context import BattleContext
from logomesh.events import Event, FindingConfirmed, MctsNodeAdded
from logomesh.findings import SEVERITY_ORDER
from logomesh.red import RedReport, attack
from logomesh.red.bench import signature
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.tasks import TaskSpec, load_task_dir

pytestmark = pytest.mark.docker
TASKS = Path(__file__).resolve().parents[2] / "tasks"

SQL_SPLICED = '''
def build_select(table, columns, where):
    sql = "SELECT * FROM " + table
    if where:
        sql += " WHERE " + " AND ".join(f"{k} = '{v}'" for k, v in where.items())
    return sql, ()
'''
SQL_SAFE = '''
import re
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
def _q(name):
    if not isinstance(name, str) or not _ID.fullmatch(name):
        raise ValueError(f"bad identifier {name!r}")
    return '"' + name + '"'
def build_select(table, columns, where):
    cols = ", ".join(_q(c) for c in columns) if columns else "*"
    sql = f"SELECT {cols} FROM {_q(table)}"
    if where:
        sql += " WHERE " + " AND ".join(f"{_q(k)} = ?" for k in where)
    return sql, tuple(where.values())
'''
PATH_NAIVE = '''
import os
def safe_join(base_dir, user_path):
    if "\\x00" in user_path:
        raise ValueError("nul")
    return os.path.normpath(os.path.join(base_dir, user_path))
'''
PATH_SAFE = '''
import os
def safe_join(base_dir, user_path):
    if "\\x00" in user_path or os.path.isabs(user_path):
        raise ValueError("refused")
    base = os.path.realpath(base_dir)
    full = os.path.realpath(os.path.join(base, user_path))
    if os.path.commonpath([base, full]) != base:
        raise ValueError("outside base")
    return full
'''
LRU_NO_LOCK = '''
from collections import OrderedDict
class LRUCache(OrderedDict):
    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity")
        super().__init__()
        self.capacity = capacity
    def get(self, key):
        if key not in self:
            return None
        self.move_to_end(key)
        return self[key]
    def put(self, key, value):
        if key in self:
            self.move_to_end(key)
        self[key] = value
        if len(self) > self.capacity:
            self.popitem(last=False)
'''
LRU_LOCKED = '''
import threading
from collections import OrderedDict
class LRUCache:
    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity")
        self.capacity = capacity
        self._data = OrderedDict()
        self._lock = threading.Lock()
    def get(self, key):
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]
    def put(self, key, value):
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            if len(self._data) > self.capacity:
                self._data.popitem(last=False)
    def __len__(self):
        with self._lock:
            return len(self._data)
'''
EMAIL_REDOS = '''
import re
_R = re.compile(r"\\A(?:[a-z0-9]+\\.?)*[a-z0-9]+@[a-z0-9-]+(?:\\.[a-z0-9-]+)+\\Z")
def is_valid_email(address):
    return isinstance(address, str) and len(address) <= 320 and _R.match(address) is not None
'''
CALC_EVAL = '''
def evaluate(expression):
    return eval(expression)
'''
CALC_RESTRICTED = '''
def evaluate(expression):
    try:
        result = eval(expression, {"__builtins__": {}}, {})
    except (SyntaxError, NameError, TypeError, ZeroDivisionError) as exc:
        raise ValueError(str(exc))
    if not isinstance(result, (int, float)) or isinstance(result, bool):
        raise ValueError("not a number")
    return result
'''


def task(task_id: str) -> TaskSpec:
    return load_task_dir(TASKS / task_id)


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


def run(box: Sandbox, task_id: str, source: str, budget: float = 8.0, **kwargs: object) -> RedReport:
    return attack(task(task_id), source, box, BattleContext(seed=11), budget_s=budget, **kwargs)  # type: ignore[arg-type]


def serious(report: RedReport) -> list[str]:
    return [f"{f.family}:{f.severity}" for f in report.findings
            if SEVERITY_ORDER.index(f.severity) >= SEVERITY_ORDER.index("medium")]


def test_sql_injection_found_and_safe_builder_clean(box: Sandbox) -> None:
    events: list[Event] = []
    context = BattleContext(seed=11, battle_id="red-t1", emit=events.append)
    report = attack(task("sql-select"), SQL_SPLICED, box, context, budget_s=8.0)
    sqli = [f for f in report.findings if f.family == "sql-injection"]
    assert len(sqli) == 1 and sqli[0].cwe == "CWE-89" and sqli[0].severity == "critical"
    assert sqli[0].confirmations == sqli[0].attempts == 3
    assert any(isinstance(e, FindingConfirmed) and e.cwe == "CWE-89" for e in events)
    assert any(isinstance(e, MctsNodeAdded) and e.battle_id == "red-t1" for e in events)
    assert serious(run(box, "sql-select", SQL_SAFE)) == []


def test_same_seed_same_findings(box: Sandbox) -> None:
    first = run(box, "sql-select", SQL_SPLICED)
    second = run(box, "sql-select", SQL_SPLICED)
    assert signature(first.findings) == signature(second.findings)
    assert first.tree == second.tree


def test_traversal_found_and_resolved_join_clean(box: Sandbox) -> None:
    report = run(box, "safe-path", PATH_NAIVE)
    traversal = [f for f in report.findings if f.family == "path-traversal"]
    assert len(traversal) == 1 and traversal[0].severity == "high"
    assert "outside base" in traversal[0].evidence and traversal[0].summary.startswith("safe_join: path-traversal")
    assert serious(run(box, "safe-path", PATH_SAFE)) == []


@pytest.mark.slow
def test_race_is_proved_by_one_violation_and_a_lock_stops_it(box: Sandbox) -> None:
    report = run(box, "lru-cache", LRU_NO_LOCK)
    races = [f for f in report.findings if f.family == "race"]
    assert len(races) == 1 and races[0].cwe == "CWE-362"
    assert (races[0].confirmations, races[0].attempts) == (1, 10)  # the rule, fixed: H(Δ) does not move
    assert "reproduced" in races[0].evidence  # the measured count lives in the evidence
    assert serious(run(box, "lru-cache", LRU_LOCKED)) == []


def test_model_divergence_on_a_fifo_cache(box: Sandbox) -> None:
    fifo = LRU_LOCKED.replace("            self._data.move_to_end(key)\n            return", "            return")
    report = run(box, "lru-cache", fifo)
    found = [f for f in report.findings if f.family == "stateful-model"]
    assert len(found) == 1 and found[0].cwe == "CWE-840" and found[0].confirmations == 3
    assert "c.get(" in found[0].reproducer


@pytest.mark.slow
def test_redos_from_the_artifacts_own_regex(box: Sandbox) -> None:
    report = run(box, "email-validator", EMAIL_REDOS, budget=12.0)
    found = [f for f in report.findings if f.family == "complexity"]
    assert len(found) == 1 and found[0].cwe == "CWE-1333"
    assert "* n" in found[0].reproducer  # the pump, not the size that crossed the cap (a measurement)
    assert "n=" in found[0].evidence


def test_eval_injection_leaves_a_canary(box: Sandbox) -> None:
    report = run(box, "safe-calculator", CALC_EVAL, budget=6.0)
    assert report.stats.iterations <= report.stats.budget_plays == 24  # a budget of plays, not seconds
    found = [f for f in report.findings if f.family == "code-injection"]
    assert len(found) == 1 and found[0].severity == "critical" and found[0].cwe == "CWE-95"
    assert found[0].confirmations == found[0].attempts == 3


@pytest.mark.slow
def test_a_side_effect_proves_evaluation_even_when_the_call_raises(box: Sandbox) -> None:
    late_check = (  # validates the text only after evaluating it
        "def evaluate(expression):\n"
        "    result = eval(expression)\n"
        "    if not set(expression) <= set('0123456789+-*/(). '):\n"
        "        raise ValueError('bad characters')\n"
        "    return result\n"
    )
    report = run(box, "safe-calculator", late_check, budget=6.0)
    found = [f for f in report.findings if f.family == "code-injection"]
    assert len(found) == 1 and "directory" in found[0].evidence
    assert found[0].confirmations == 3  # a fresh canary per replay


@pytest.mark.slow
def test_eval_without_builtins_still_escapes(box: Sandbox) -> None:
    report = run(box, "safe-calculator", CALC_RESTRICTED, budget=6.0)
    found = [f for f in report.findings if f.family == "code-injection"]
    assert len(found) == 1 and found[0].confirmations == found[0].attempts == 3


def test_an_artifact_that_does_not_import_is_never_a_finding(box: Sandbox) -> None:
    report = run(box, "sql-select", "raise SystemExit('no')\ndef build_select(t, c, w):\n    pass\n", budget=3.0)
    assert report.findings == ()
    assert report.stats.harness_errors >= 1


def test_cli_attack_json(box: Sandbox, tmp_path: Path) -> None:
    code = tmp_path / "solution.py"
    code.write_text(SQL_SPLICED, encoding="utf-8")
    result = CliRunner().invoke(app, ["red", "attack", "--task", "sql-select", "--code", str(code),
                                      "--budget", "5", "--sandbox", "docker", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["attack_successful"] is True and data["max_severity"] == "critical"
    assert data["vulnerabilities"][0]["cwe"] == "CWE-89"
    assert "critical" in data["severity_rationale"]["sql-injection"]


@pytest.mark.slow
def test_growth_when_each_new_key_pushes_the_sweep_away_and_the_reference_is_clean(box: Sandbox) -> None:
    """The bench found this in our own reference: a sweep due every len(keys) calls never comes for new keys."""
    reference = (TASKS / "rate-limiter" / "reference" / "solution.py").read_text(encoding="utf-8")
    pushed = reference.replace("if self._calls_since_sweep < self._sweep_after:",
                               "if self._calls_since_sweep < max(64, len(self._grants)):")
    assert pushed != reference
    found = [f for f in run(box, "rate-limiter", pushed, budget=15.0).findings if f.family == "resource-growth"]
    assert len(found) == 1 and found[0].cwe == "CWE-770" and found[0].severity == "medium"
    assert serious(run(box, "rate-limiter", reference, budget=15.0)) == []
