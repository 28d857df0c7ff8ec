"""A divergence only outside the precondition inferred from the task's tests: low, unpenalised; inside: medium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logomesh.red.attacks.base import Variant
from logomesh.red.attacks.differential import (
    PROBE,
    Comparison,
    DifferentialFamily,
    DifferentialRunner,
    Divergence,
    compare,
)
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeRun, ProbeSpec, Trial
from logomesh.red.problem import RedProblem
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.sandbox.base import Observed, ObservedSuite
from logomesh.tasks import TaskSpec, load_task_dir
from logomesh.tasks.contracts import clauses
from logomesh.tasks.importers.humaneval import import_humaneval, read, task_id


def _suite(answers: list[Any]) -> ObservedSuite:
    tests = tuple(Observed(f"test_{i}", "observed", (["returned", a],)) for i, a in enumerate(answers))
    return ObservedSuite(tests)


def test_a_divergence_only_outside_the_inferred_contract_is_low_and_unpenalised() -> None:
    inputs = ["(0, 8, 5)", "(4, 8, 5)"]
    want = _suite([["int", "8"], ["int", "5"]])
    got = _suite([["int", "5"], ["int", "5"]])
    found = compare(got, want, inputs, outside=lambda texts: ["n > 0" if t.startswith("(0") else "" for t in texts])
    assert found == Comparison((Divergence("(0, 8, 5)", found.diverged[0].got, found.diverged[0].want, "n > 0"),), 2)
    family = DifferentialFamily()
    variant = Variant("mutants-0", ProbeSpec("differential", {"entry": "x_or_y", "inputs": inputs}), "2 inputs",
                      severity="medium")
    trial = Trial("ok", found.to_json())
    verdict = family.judge(variant, trial)
    assert verdict.hit and "outside the task's contract (inferred from its tests: n > 0)" in verdict.observation
    shrunk = family.shrink(variant, trial)
    assert (shrunk.severity, shrunk.penalised, shrunk.spec.args["inputs"]) == ("low", False, ["(0, 8, 5)"])
    # a divergence inside the inferred contract too: that one is kept, at the task's severity
    both = compare(_suite([["int", "5"], ["int", "8"]]), want, inputs,
                   outside=lambda texts: ["n > 0" if t.startswith("(0") else "" for t in texts])
    shrunk = family.shrink(variant, Trial("ok", both.to_json()))
    assert (shrunk.severity, shrunk.penalised, shrunk.spec.args["inputs"]) == ("medium", True, ["(4, 8, 5)"])
    assert "outside" not in family.judge(variant, Trial("ok", both.to_json())).observation


def test_an_unpenalised_finding_costs_nothing() -> None:
    from logomesh.findings import Finding
    from logomesh.scoring.cis import red_penalty
    from logomesh.scoring.config import ScoringConfig

    config = ScoringConfig()
    note = Finding("differential", "low", "CWE-684", "s", "r", 2, 2, penalised=False)
    assert red_penalty([note], config) == (0.0, [])
    assert note.to_json()["penalised"] is False
    assert "penalised" not in Finding("boundary", "low", "CWE-20", "s", "r").to_json()  # records as before


# --- in the sandbox: a correct alternative and a wrong mutant of x_or_y (HumanEval/150) ----------------------------

X_OR_Y_ALTERNATIVE = next(a["source"] for a in json.loads(
    (Path(__file__).parent / "data" / "humaneval_alternatives.json").read_text())["alternatives"]
    if a["problem"] == "HumanEval/150")
X_OR_Y_MUTANT = '''def x_or_y(n, x, y):
    if n < 2:
        return y
    for i in (2, 3, 5, 7):  # wrong: only the small primes are tried (209 = 11 * 19 comes out prime)
        if n % i == 0 and n != i:
            return y
    return x
'''


def _shrunk_findings(box: Sandbox, task: TaskSpec, source: str) -> list[Variant]:
    """Every differential batch the red agent would run, run once; each hit shrunk as the agent shrinks it."""
    family = DifferentialFamily()
    runner = DifferentialRunner(box, source, task.reference)
    found = []
    for variant in family.variants(AttackContext.build(task, source), task.entry_point):
        for trial in runner.run(variant.spec, 0).trials:
            if family.judge(variant, trial).hit:
                found.append(family.shrink(variant, trial))
    return found


@pytest.mark.docker
def test_a_correct_alternative_is_noted_at_low_and_a_wrong_mutant_still_blamed_at_medium(tmp_path: Path) -> None:
    import_humaneval(tmp_path, [p for p in read() if p["task_id"] == "HumanEval/150"])
    task = load_task_dir(tmp_path / task_id("HumanEval/150"))
    assert "n > 0" in clauses(task.contract.inferred) and not task.contract.requires
    with open_sandbox("docker") as box:
        alternative = _shrunk_findings(box, task, X_OR_Y_ALTERNATIVE)
        mutant = _shrunk_findings(box, task, X_OR_Y_MUTANT)
    # the alternative differs from the canonical x_or_y only for n <= 0, which the check never passes
    assert alternative and {(v.severity, v.penalised) for v in alternative} == {("low", False)}
    assert any(v.severity == "medium" and v.penalised for v in mutant), [v.reproducer for v in mutant]


def test_after_a_low_note_the_agent_searches_on_for_a_penalised_divergence(tmp_path: Path) -> None:
    """One unpenalised note per entry point and family; a later divergence inside the contract is still confirmed."""
    import_humaneval(tmp_path, [p for p in read() if p["task_id"] == "HumanEval/150"])
    task = load_task_dir(tmp_path / task_id("HumanEval/150"))
    mode = {"outside": "n > 0"}

    def runner(spec: ProbeSpec, seed: int) -> ProbeRun:
        if spec.probe != PROBE:
            return ProbeRun(())
        divergence = Divergence(spec.args["inputs"][0], "returned 5", "returned 8", mode["outside"])
        return ProbeRun(tuple(Trial("ok", Comparison((divergence,), 1).to_json()) for _ in range(spec.trials)))

    problem = RedProblem(AttackContext.build(task, X_OR_Y_ALTERNATIVE), runner)
    leaves = problem.leaves[task.entry_point][DifferentialFamily.name]
    problem.play(leaves[0], 1)
    problem.play(leaves[1], 2)  # another divergence outside: no second note
    assert [(c.finding.severity, c.finding.penalised) for c in problem.findings] == [("low", False)]
    assert "inferred from its tests: n > 0" in problem.findings[0].finding.evidence
    mode["outside"] = ""
    problem.play(leaves[2], 3)
    problem.play(leaves[3], 4)  # the entry point has its penalised finding: the family is done with it
    assert [(c.finding.severity, c.finding.penalised) for c in problem.findings] == [("low", False), ("medium", True)]
