"""Task-owned red scenarios (task.toml ``[red]``, ``red.py``): loading, validation, shipping, and a real attack.

``example_task/ticket-counter`` is a task the engine has never seen (it is
not in the library); it is the worked example of docs/tasks.md, "Red-agent
scenarios". The Docker tests attack it with its own race and model scenarios.
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.context import BattleContext
from logomesh.findings import SEVERITY_ORDER
from logomesh.red import attack
from logomesh.red.attacks.boundary import BoundaryFamily
from logomesh.red.attacks.growth import GrowthFamily
from logomesh.red.attacks.race import RaceFamily
from logomesh.red.attacks.stateful import StatefulFamily
from logomesh.red.context import AttackContext
from logomesh.red.driven import probe_driver
from logomesh.red.executor import TASK_MODULE, ProbeSpec
from logomesh.red.scenarios import load_red
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.tasks import TaskError, TaskSpec, load_task_dir

EXAMPLE = Path(__file__).resolve().parent / "example_task" / "ticket-counter"
LIBRARY = Path(__file__).resolve().parents[2] / "tasks"

UNLOCKED = '''
class TicketCounter:
    def __init__(self, start=0):
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError("start")
        self._last = start
        self._issued = 0

    def take(self):
        ticket = self._last + 1
        self._last = ticket
        self._issued += 1
        return ticket

    def issued(self):
        return self._issued
'''
REFERENCE = (EXAMPLE / "reference" / "solution.py").read_text(encoding="utf-8")
# Hands out numbers in blocks of ten per calling thread (a common way to spare a shared lock): every ticket once
# and the count right, so the race check's invariants hold; but a take that returned 11 can finish before another
# thread's take that then returns 2, an order no serial run gives.
BLOCKS = REFERENCE.replace("""    def take(self):
        with self._lock:
            self._last += 1
            self._issued += 1
            return self._last
""", """    def take(self):
        mine = self.__dict__.setdefault("_blocks", threading.local())
        if not getattr(mine, "left", 0):
            with self._lock:
                mine.next, mine.left = self._last + 1, 10
                self._last += 10
        ticket = mine.next
        mine.next, mine.left = ticket + 1, mine.left - 1
        with self._lock:
            self._issued += 1
        return ticket
""")
MISCOUNTS = REFERENCE.replace("return self._issued", "return self._issued - (self._issued > 2)")


def example(tmp_path: Path, toml_edit: tuple[str, str] | None = None, red: str | None = None) -> TaskSpec:
    """A copy of the example task, with one edit to its task.toml or a replaced red.py."""
    root = tmp_path / "ticket-counter"
    shutil.copytree(EXAMPLE, root)
    if toml_edit is not None:
        text = (root / "task.toml").read_text(encoding="utf-8")
        assert toml_edit[0] in text
        (root / "task.toml").write_text(text.replace(toml_edit[0], toml_edit[1]), encoding="utf-8")
    if red is not None:
        (root / "red.py").write_text(red, encoding="utf-8")
    return load_task_dir(root)


# -- loading -----------------------------------------------------------------------------------------
def test_the_example_task_brings_its_own_scenarios() -> None:
    red = load_red(load_task_dir(EXAMPLE))
    assert red.module == (EXAMPLE / "red.py").read_text(encoding="utf-8")
    assert red.race is not None and red.race.entry == "TicketCounter" and red.race.args == {"threads": 6, "takes": 50}
    assert red.model is not None and red.growth is None and red.complexity is None
    assert [case.id for case in red.boundary_cases("TicketCounter")] == ["negative-start", "float-start"]
    assert red.boundary_cases("Other") == []


def test_families_build_variants_from_the_task_alone() -> None:
    ctx = AttackContext.build(load_task_dir(EXAMPLE), UNLOCKED)
    races = RaceFamily().variants(ctx, "TicketCounter")
    assert [v.id for v in races] == ["perturb-p05", "perturb-p02", "perturb-p12"]
    assert races[0].spec.args[TASK_MODULE] == ctx.red.module
    assert races[0].spec.args["takes"] == 50 and races[0].spec.args["chance"] == 0.05
    assert races[0].reproducer == ("6 threads x 50 take() on one TicketCounter(), yielding at random opcodes "
                                   "inside solution.py with p in (0.05, 0.02, 0.12)")
    assert {v.reported_id for v in races} == {"perturb"}  # which chance hit first is luck: the result names none
    assert races[0].prior > 0.5  # no lock in this code
    models = StatefulFamily().variants(ctx, "TicketCounter")
    assert len(models) == 3 and models[0].reproducer == "random take()/issued() sequences against a counting model"
    assert GrowthFamily().variants(ctx, "TicketCounter") == []  # the task declares no growth driver
    bounds = BoundaryFamily().variants(ctx, "TicketCounter")
    assert [(v.reproducer, v.severity) for v in bounds] == [("TicketCounter(-1)", "low"), ("TicketCounter(1.5)", "low")]
    assert RaceFamily().variants(ctx, "Missing") == []  # the entry is not in the code


def test_without_red_tables_the_task_gets_only_generic_families(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    shutil.copytree(EXAMPLE, root)
    text = (root / "task.toml").read_text(encoding="utf-8")
    (root / "task.toml").write_text(text[:text.index("# What the red agent")].replace("ticket-counter", "plain"),
                                    encoding="utf-8")
    (root / "red.py").unlink()
    ctx = AttackContext.build(load_task_dir(root), UNLOCKED)
    for family in (RaceFamily(), StatefulFamily(), GrowthFamily(), BoundaryFamily()):
        assert family.variants(ctx, "TicketCounter") == []


@pytest.mark.parametrize(("edit", "red", "message"), [
    (("[red.model]", "[red.mode]"), None, "unknown [red] table(s) ['mode']"),
    (("prior = 0.5", "prior = 5"), None, "negative-start: prior must be a number in [0, 1]"),
    (("prior = 0.5", "priority = 0.5"), None, "unknown key(s) ['priority']"),
    (('entry = "TicketCounter"\nstory = "random', 'story = "random'), None,
     "[red.model] needs a non-empty string 'entry'"),
    (("[red.model]", '[red.complexity]\nentry = "TicketCounter"\ninput = "bytes"\n\n[red.model]'), None,
     "input 'bytes' must be one of int, string, expression"),
    (None, "def race(args, seed, run_threads):\n    return []\n", "define model() for the [red] tables"),
    (None, "def race(:\n", "red.py: does not parse"),
    (None, "", "red.py: missing"),
])
def test_a_malformed_red_section_names_the_file_and_the_fix(tmp_path: Path, edit: tuple[str, str] | None,
                                                            red: str | None, message: str) -> None:
    task = example(tmp_path, edit, red)
    if red == "":
        (task.root / "red.py").unlink()
    with pytest.raises(TaskError) as caught:
        load_red(task)
    assert message in str(caught.value)
    assert str(task.root) in str(caught.value)


def test_every_library_task_loads_and_tagged_inputs_render_as_python() -> None:
    ctxs = {}
    for root in sorted(p for p in LIBRARY.iterdir() if (p / "task.toml").is_file()):
        task = load_task_dir(root)
        ctxs[task.id] = AttackContext.build(task, task.reference)
    email = ctxs["email-validator"]
    reproducers = {v.id: v.reproducer for v in BoundaryFamily().variants(email, email.task.entry_point)}
    assert reproducers["lone-surrogate"] == "is_valid_email('\\udcff@example.com')"
    assert reproducers["non-string"] == "is_valid_email(None)"
    assert reproducers["long-local"] == f"is_valid_email('{'a' * 65}@example.com')"


# -- shipping ----------------------------------------------------------------------------------------
def test_the_task_module_runs_in_the_driver_apart_from_the_args() -> None:
    spec = ProbeSpec("race", {TASK_MODULE: "def race(a, s, r):\n    return []\n", "threads": 2})
    [module] = probe_driver(spec, 3).values()
    constants = [n.value for n in ast.walk(ast.parse(module)) if isinstance(n, ast.Constant)]
    assert "def race(a, s, r):\n    return []\n" in constants
    assert json.loads(next(c for c in constants if isinstance(c, str) and c.startswith('{"threads"'))) == {"threads": 2}


# -- in the sandbox ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


def serious(source: str, box: Sandbox, budget: float = 8.0) -> list[tuple[str, str, str]]:
    report = attack(load_task_dir(EXAMPLE), source, box, BattleContext(seed=11), budget_s=budget)
    return [(f.family, f.cwe, f.reproducer) for f in report.findings
            if SEVERITY_ORDER.index(f.severity) >= SEVERITY_ORDER.index("medium")]


@pytest.mark.docker
def test_a_new_task_race_scenario_finds_the_unlocked_counter(box: Sandbox) -> None:
    found = serious(UNLOCKED, box)
    races = [f for f in found if f[0] == "race"]
    assert len(races) == 1 and races[0][1] == "CWE-362"
    assert "take() on one TicketCounter()" in races[0][2]


@pytest.mark.slow
@pytest.mark.docker
def test_a_counter_handing_out_blocks_keeps_the_invariants_and_is_not_linearizable(box: Sandbox) -> None:
    """The task's own ``subject`` puts its race under the history check: no ticket twice, yet out of order."""
    from .tricks import race_violations

    assert BLOCKS != REFERENCE
    task = load_task_dir(EXAMPLE)
    seen = race_violations(box, task, BLOCKS, trials=4)
    assert seen.violations == [] and seen.unexplained, seen  # the invariants hold; the history does not
    races = [f for f in serious(BLOCKS, box) if f[0] == "race"]
    assert len(races) == 1 and races[0][1] == "CWE-362"


@pytest.mark.slow
@pytest.mark.docker
def test_a_new_task_model_finds_a_miscount_and_the_reference_is_clean(box: Sandbox) -> None:
    found = serious(MISCOUNTS, box)
    assert [f[0] for f in found] == ["stateful-model"]
    assert found[0][2].startswith("c = TicketCounter(") and "c.issued()" in found[0][2]
    assert serious(REFERENCE, box) == []
