"""A trial record the driver cannot have written is malformed, never clean, never a crash.

Every probe's trial records are written by the driver, a process the code cannot reach
(``tests/sandbox/test_answers_cross.py`` shows forgeries from the code's process reaching none of them). The
host still reads each record as untrusted bytes: each malformed shape is refused by ``parse_trial``, and
the families read only the record their probe writes; a race or model trial without its record is a
violation, never "no violations". No sandbox here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logomesh import untrusted
from logomesh.red.attacks.base import Variant
from logomesh.red.attacks.complexity import STRING_SIZES, ComplexityFamily
from logomesh.red.attacks.evaluation import EvalInjectionFamily
from logomesh.red.attacks.growth import GrowthFamily
from logomesh.red.attacks.race import RaceFamily
from logomesh.red.attacks.sqli import SqlInjectionFamily
from logomesh.red.attacks.stateful import StatefulFamily
from logomesh.red.attacks.traversal import TraversalFamily
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeRun, Trial, parse_trial
from logomesh.red.problem import Leaf, RedProblem
from logomesh.tasks import TaskSpec, load_task_dir

TASKS = Path(__file__).resolve().parents[2] / "tasks"
PARAMETERISED = '''
def build_select(table, columns, where):
    sql = "SELECT * FROM " + table
    if where:
        sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
    return sql, tuple(where.values())
'''


def task(task_id: str) -> TaskSpec:
    return load_task_dir(TASKS / task_id)


def honest_trial(result: dict[str, Any]) -> dict[str, Any]:
    """A trial's record as the probe driver writes it."""
    return {"status": "ok", "result": result, "introspection": [], "cpu_s": 0.01}


TRIAL_FORGERIES: dict[str, Any] = {
    "a string": "ok",
    "an array": [1, 2],
    "status invented": {**honest_trial({}), "status": "passed"},
    "status a list": {**honest_trial({}), "status": ["ok"]},
    "result a list": {**honest_trial({}), "result": []},
    "ok without a result": {"status": "ok", "cpu_s": 0.0},
    "cpu_s a string": {**honest_trial({}), "cpu_s": "0"},
    "cpu_s a bool": {**honest_trial({}), "cpu_s": True},
    "where of numbers": {**honest_trial({}), "where": [1]},
    "introspection a string": {**honest_trial({}), "introspection": "nothing"},
}


@pytest.mark.parametrize("kind", sorted(TRIAL_FORGERIES))
def test_a_malformed_trial_record_is_refused_never_read_as_clean(kind: str) -> None:
    assert parse_trial(honest_trial({"a": 1})).result == {"a": 1}
    with pytest.raises(untrusted.Malformed):
        parse_trial(TRIAL_FORGERIES[kind])


# -- races and models: the host's check needs the record; without it the trial is not clean -------------------
def race_variant() -> Variant:
    ctx = AttackContext.build(task("rate-limiter"), "class RateLimiter:\n    pass\n")
    variant = RaceFamily().variants(ctx, "RateLimiter")[0]
    assert variant.oracle is not None
    return variant


@pytest.mark.parametrize("result", [
    {"violations": []}, {}, {"observed": None}, {"observed": [1, 2]}, {"observed": "clean"},
    {"observed": {"unexpected": True}},
])
def test_a_race_trial_without_its_record_is_a_violation(result: dict[str, Any]) -> None:
    """Where the task's check_race judges on the host, the box's own ``violations: []`` is never a verdict."""
    variant, family = race_variant(), RaceFamily()
    trial = Trial("ok", result=result)
    violations = RaceFamily.violations(variant, variant.spec, trial)
    assert violations and "malformed" in violations[0]
    assert family.judge(variant, trial).hit and not family.control_ok(variant, trial)


def model_variant() -> Variant:
    ctx = AttackContext.build(task("lru-cache"), "class LRUCache:\n    pass\n")
    variant = StatefulFamily().variants(ctx, "LRUCache")[0]
    assert variant.oracle is not None
    return variant


@pytest.mark.parametrize("result", [
    {"divergence": [], "seed": 1}, {"seed": 1}, {"observed": {"calls": []}, "seed": 1}, {"observed": [7], "seed": 1},
    {"observed": [{"nothing": "recorded"}], "seed": 1},
])
def test_a_model_trial_without_its_record_is_a_divergence(result: dict[str, Any]) -> None:
    variant, family = model_variant(), StatefulFamily()
    trial = Trial("ok", result=result)
    verdict = family.judge(variant, trial)
    assert verdict.hit and "malformed" in verdict.observation


# -- every family: a record without the fields its probe writes is a hit, never a miss or a traceback -------
def leaf_of(task_id: str, source: str, entry: str, family_name: str) -> Leaf:
    problem = RedProblem(AttackContext.build(task(task_id), source), lambda spec, seed: ProbeRun(()))
    return problem.leaves[entry][family_name][0]


HONEST_AND_FORGED = [
    ("sql-select", PARAMETERISED, "build_select", SqlInjectionFamily.name,
     {"sql": "SELECT", "params": 1, "rows": 0, "vault": False, "vault_intact": True},
     [{}, {"sql": "SELECT", "rows": "0", "vault": False, "vault_intact": True},
      {"sql": "SELECT", "rows": 0, "vault": 0, "vault_intact": True}, {"sql": "SELECT", "rows": 0, "vault": False}]),
    ("safe-path", "def safe_join(base, path):\n    return base\n", "safe_join", TraversalFamily.name,
     {"returned": "/b", "inside": True, "secret": False}, [{}, {"inside": "yes", "secret": False, "returned": ""}]),
    ("email-validator", "import re\nR = re.compile(r'^a+$')\ndef is_valid_email(s):\n    return bool(R.match(s))\n",
     "is_valid_email", ComplexityFamily.name,
     {"points": [{"n": n, "t": 0.0, "exc": None} for n in STRING_SIZES], "capped": False},
     [{}, {"points": [{"n": 8}], "capped": False}, {"points": [{"n": 8, "t": "0"}], "capped": False},
      {"points": "none", "capped": False}, {"points": [], "capped": "no"},
      {"points": [{"n": 8, "t": 0.0, "exc": None}], "capped": False}]),  # fewer sizes than asked, not capped
    ("rate-limiter", "class RateLimiter:\n    pass\n", "RateLimiter", GrowthFamily.name,
     {"points": [{"n": 2000, "bytes": 1000}, {"n": 8000, "bytes": 1100}]},
     [{}, {"points": [{"n": 2000, "bytes": "1"}, {"n": 8000, "bytes": 1}]}, {"points": [[1], [2]]},
      {"points": [], "tampered": 1}, {"points": [{"n": 2000, "bytes": 1000}]}]),
]


@pytest.mark.parametrize(("task_id", "source", "entry", "family", "honest", "forged"), HONEST_AND_FORGED,
                         ids=[case[3] for case in HONEST_AND_FORGED])
def test_a_family_reads_only_the_record_its_probe_writes(task_id: str, source: str, entry: str, family: str,
                                                         honest: dict[str, Any], forged: list[dict[str, Any]]) -> None:
    leaf = leaf_of(task_id, source, entry, family)
    assert not RedProblem.judge(leaf, ProbeRun(()), Trial("ok", result=honest, cpu_s=0.01)).hit
    for result in forged:
        verdict = RedProblem.judge(leaf, ProbeRun(()), Trial("ok", result=result, cpu_s=0.01))
        assert verdict.hit and "malformed" in verdict.observation, result


def test_an_eval_record_without_its_fields_is_a_hit() -> None:
    leaf = leaf_of("safe-calculator", "def evaluate(expression):\n    return eval(expression)\n", "evaluate",
                   EvalInjectionFamily.name)
    assert not RedProblem.judge(leaf, ProbeRun(()), Trial("ok", result={"type": "int", "repr": "1",
                                                                         "canary": False})).hit
    assert RedProblem.judge(leaf, ProbeRun(()), Trial("ok", result={"repr": "1"})).hit
