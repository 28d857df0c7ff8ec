"""Records the code under test forged on the judge's channels are failed observations, never clean, never a crash.

The probe server's result line (``LMPROBE <nonce> {...}``) shares a pipe with the code it imported, and every
trial's record is written by the process the code runs in; a submission that reads our source knows the mark
and can compute or read the nonce. Here each forgery reaches the host's readers as the box would deliver it
(text through ``parse_output``, trials through the families), beside the honest record it replaces: the
honest one gives no finding, the forged one gives a finding, and nothing raises. No sandbox: the same
records come from the real box in ``test_forged_records_docker.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logomesh import untrusted
from logomesh.battle.context import BattleContext
from logomesh.red import run_attack
from logomesh.red.attacks.base import Variant
from logomesh.red.attacks.complexity import STRING_SIZES, ComplexityFamily
from logomesh.red.attacks.evaluation import EvalInjectionFamily
from logomesh.red.attacks.growth import GrowthFamily
from logomesh.red.attacks.race import RaceFamily
from logomesh.red.attacks.sqli import SqlInjectionFamily
from logomesh.red.attacks.stateful import StatefulFamily
from logomesh.red.attacks.traversal import TraversalFamily
from logomesh.red.context import AttackContext
from logomesh.red.executor import AUDIT_MARK, MALFORMED, MARK, ProbeRun, ProbeSpec, Trial, parse_output, run_nonce
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
    """A trial's record as the fork server writes it."""
    return {"status": "ok", "result": result, "introspection": [], "partial": [], "cpu_s": 0.01}


def line(nonce: str, record: Any) -> str:
    return f"{MARK}{nonce} {record if isinstance(record, str) else json.dumps(record)}"


def honest_output(nonce: str, trials: list[dict[str, Any]]) -> str:
    """The probe server's stdout: its start line, then its one result line."""
    record = {"trials": trials, "elapsed": 0.2, "introspection": []}
    return f"LMSTART {nonce}\n\n{line(nonce, record)}\n"


DEEP = "[" * 50_000 + "]" * 50_000
FORGERIES: dict[str, Any] = {
    "deeply nested": DEEP,
    "nested object": '{"trials": ' * 5_000 + "[]" + "}" * 5_000,
    "huge": json.dumps({"trials": [], "elapsed": 0.0, "introspection": [], "pad": "x" * (2 << 20)}),
    "not JSON": '{"trials": [}',
    "not UTF-8 (as the server decodes it)": '{"trials": \ufffd}',
    "an array": [1, 2],
    "trials a string": {"trials": "ok", "elapsed": 0.1, "introspection": []},
    "elapsed a string": {"trials": [], "elapsed": "soon", "introspection": []},
    "no elapsed": {"trials": [], "introspection": []},
    "introspection a string": {"trials": [], "elapsed": 0.1, "introspection": "nothing"},
    "status invented": {"trials": [{**honest_trial({}), "status": "passed"}], "elapsed": 0.1, "introspection": []},
    "status a list": {"trials": [{**honest_trial({}), "status": ["ok"]}], "elapsed": 0.1, "introspection": []},
    "result a list": {"trials": [{**honest_trial({}), "result": []}], "elapsed": 0.1, "introspection": []},
    "ok without a result": {"trials": [{"status": "ok", "cpu_s": 0.0}], "elapsed": 0.1, "introspection": []},
    "cpu_s a string": {"trials": [{**honest_trial({}), "cpu_s": "0"}], "elapsed": 0.1, "introspection": []},
    "cpu_s a bool": {"trials": [{**honest_trial({}), "cpu_s": True}], "elapsed": 0.1, "introspection": []},
    "partial of numbers": {"trials": [{**honest_trial({}), "partial": [1]}], "elapsed": 0.1, "introspection": []},
    "where of numbers": {"trials": [{**honest_trial({}), "where": [1]}], "elapsed": 0.1, "introspection": []},
    "signal a string": {"trials": [{**honest_trial({}), "signal": "9"}], "elapsed": 0.1, "introspection": []},
    "trial a string": {"trials": ["ok"], "elapsed": 0.1, "introspection": []},
    "no trials (the real server then killed)": {"trials": [], "elapsed": 0.1, "introspection": []},
    "two trials": {"trials": [honest_trial({}), honest_trial({})], "elapsed": 0.1, "introspection": []},
    "import error a number": {"import_error": 7, "introspection": []},
}


@pytest.mark.parametrize("kind", sorted(FORGERIES))
def test_a_forged_result_line_is_a_look_at_the_judge_never_a_crash(kind: str) -> None:
    run = parse_output(f"LMSTART n1\n{line('n1', FORGERIES[kind])}\n", "n1", 1)
    assert not run.harness_error  # not the harness's fault: the code wrote it
    assert [t.status for t in run.trials] == [MALFORMED]
    assert run.introspection and run.introspection[0].startswith("forged the probe server's result")


def test_a_second_result_line_after_the_real_one_is_a_forgery() -> None:
    """An ``atexit`` handler (or a thread) prints its own record after the server's: the last line is not it."""
    honest = honest_output("n1", [honest_trial({"a": 1})])
    assert parse_output(honest, "n1", 1).trials[0].result == {"a": 1}
    forged = {"trials": [honest_trial({"clean": True})], "elapsed": 0.1, "introspection": []}
    for text in (f"{honest}{line('n1', forged)}\n", f"{line('n1', forged)}\n{honest}"):
        run = parse_output(text, "n1", 1)
        assert run.trials[0].status == MALFORMED and "2 result lines" in run.introspection[0]


@pytest.mark.parametrize("report", ['{"why": ' * 3000 + "1" + "}" * 3000, '{"why": 5}', "[", '"x"'])
def test_a_malformed_audit_report_is_itself_reported(report: str) -> None:
    text = honest_output("n1", [honest_trial({"a": 1})]) + f"{AUDIT_MARK}{report}\n"
    run = parse_output(text, "n1", 1)
    assert run.introspection and run.introspection[0].startswith("forged an audit report")


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


# -- the whole search, fed by text as the box would print it -------------------------------------------------
class Printed:
    """A probe runner that prints what a parameterised SQL builder's probe server would, optionally forged."""

    def __init__(self, forge: str = "") -> None:
        self.forge = forge

    def __call__(self, spec: ProbeSpec, seed: int) -> ProbeRun:
        nonce = run_nonce(spec, seed)
        trials = [self.trial(spec) for _ in range(spec.trials)]
        text = honest_output(nonce, trials)
        if self.forge:
            text += line(nonce, self.forge) + "\n"
        return parse_output(text, nonce, spec.trials)

    @staticmethod
    def trial(spec: ProbeSpec) -> dict[str, Any]:
        if spec.probe != "sqli":
            return {"status": "exception", "exc": "ValueError", "msg": "", "where": [], "introspection": [],
                    "partial": [], "cpu_s": 0.0}
        control = spec.args["args"][2].get("name") == "alice"
        return honest_trial({"sql": "SELECT * FROM items WHERE name = ?", "params": 1, "rows": int(control),
                             "vault": False, "vault_intact": True})


def test_a_submission_that_forges_its_last_line_is_found_where_its_honest_twin_is_not() -> None:
    honest = run_attack(task("sql-select"), PARAMETERISED, Printed(), BattleContext(seed=3), budget_s=10)
    assert honest.findings == () and honest.stats.harness_errors == 0
    forged = run_attack(task("sql-select"), PARAMETERISED, Printed(DEEP), BattleContext(seed=3), budget_s=10)
    families = [f.family for f in forged.findings]
    assert "judge-introspection" in families
    assert "forged the probe server's result" in forged.findings[families.index("judge-introspection")].evidence


def test_bounded_parse_is_what_the_executor_uses() -> None:
    """One way: the executor's cap is the bounded reader's."""
    big = line("n1", {"trials": [], "elapsed": 0.0, "introspection": [], "pad": "x" * untrusted.MAX_RECORD_BYTES})
    assert parse_output(big, "n1", 0).trials[0].status == MALFORMED
