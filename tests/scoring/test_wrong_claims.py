"""The purple's tests judged as mutation testing judges tests (issue 34, point 1).

A test counts only if it passes on the task's reference; a flawed variant is caught only by such a test failing
on it. So a test that fails on correct code (a wrong claim, like asserting ``fib(300) == 832040``) never catches
a variant and never raises the score, whatever it does on the submission and the variants: property-tested over
every table of outcomes, then once in a real box with fib-recursive's own tests.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logomesh.sandbox.base import SuiteRun
from logomesh.sandbox.base import TestOutcome as Outcome
from logomesh.scoring.config import LogicWeights
from logomesh.scoring.logic import logic_anchor
from logomesh.scoring.testing import judge_mutants

STATUSES = st.sampled_from(["passed", "failed", "error", "crashed", "timeout"])
NOT_PASSED = st.sampled_from(["failed", "error", "crashed", "timeout"])
CLEAN = "def f(x):\n    return x\n"
HIDDEN = SuiteRun(outcomes=(Outcome("h.T.test_a", "passed"),))


def _run(statuses: list[str], error: str | None = None) -> SuiteRun:
    outcomes = tuple(Outcome(f"t.T.test_{i}", s) for i, s in enumerate(statuses))  # type: ignore[arg-type]
    return SuiteRun(outcomes=outcomes, error=error)


def _purple_part(reference: SuiteRun, submission: SuiteRun,
                 variants: dict[str, SuiteRun]) -> tuple[float, tuple[str, ...]]:
    report = judge_mutants(reference, variants)
    logic = logic_anchor(CLEAN, HIDDEN, submission, [], report, LogicWeights())
    return logic.parts["purple_tests"], report.caught


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[str], list[list[str]], list[str | None]]:
    """Outcomes of n tests on the reference, the submission and each of k variants (some variants unrunnable)."""
    n = draw(st.integers(1, 6))
    k = draw(st.integers(0, 4))
    reference = draw(st.lists(STATUSES, min_size=n, max_size=n))
    submission = draw(st.lists(STATUSES, min_size=n, max_size=n))
    variants = [draw(st.lists(STATUSES, min_size=n, max_size=n)) for _ in range(k)]
    errors = [draw(st.sampled_from([None, None, None, "import failed"])) for _ in range(k)]
    return reference, submission, variants, errors


@settings(max_examples=300, deadline=None)
@given(table=tables(), on_reference=NOT_PASSED, on_submission=STATUSES, on_variants=st.lists(STATUSES, max_size=4))
def test_a_test_failing_on_the_reference_never_catches_and_never_raises_the_part(
    table: tuple[list[str], list[str], list[list[str]], list[str | None]], on_reference: str, on_submission: str,
    on_variants: list[str],
) -> None:
    reference, submission, variants, errors = table
    before = _purple_part(_run(reference), _run(submission),
                          {f"v{i}": _run(v, e) for i, (v, e) in enumerate(zip(variants, errors, strict=True))})
    added = [[*v, on_variants[i] if i < len(on_variants) else "failed"] for i, v in enumerate(variants)]
    after = _purple_part(_run([*reference, on_reference]), _run([*submission, on_submission]),
                         {f"v{i}": _run(v, e) for i, (v, e) in enumerate(zip(added, errors, strict=True))})
    assert after[1] == before[1]  # it catches nothing the sound tests did not
    assert after[0] <= before[0] + 1e-12


def test_a_variant_is_caught_only_by_a_test_that_passed_on_the_reference() -> None:
    reference = _run(["passed", "failed"])  # test_1 is a wrong claim
    report = judge_mutants(reference, {"only-the-wrong-one-fails": _run(["passed", "failed"]),
                                       "a-sound-test-fails": _run(["error", "failed"]),
                                       "did-not-import": _run(["failed", "failed"], error="import failed")})
    assert report.caught == ("a-sound-test-fails",)
    assert report.missed == ("did-not-import", "only-the-wrong-one-fails")
    assert report.wrong == ("t.T.test_1",)
    tampered = SuiteRun(outcomes=(Outcome("t.T.test_0", "failed"),), tampered=True)
    assert judge_mutants(reference, {"tampered": tampered}).caught == ()  # it touched the judge
    broken = judge_mutants(_run(["passed"], error="import failed"), {"v": _run(["failed"])})
    assert broken.caught == () and broken.wrong == ("t.T.test_0",)  # tests that never ran on correct code


FIB_WRONG_TEST = '''

class TestWrongClaim(unittest.TestCase):
    def test_fib_300_is_832040(self):
        self.assertEqual(fib(300), 832040)
'''


@pytest.mark.docker
@pytest.mark.slow  # full tier (two whole judgements, ~55 s): the property test keeps the rule in the fast tier
def test_fibs_wrong_test_is_a_wrong_claim_and_lowers_the_score() -> None:
    """The real model's test from the issue: ``fib(300) ≈ 832040`` fails on the reference; with it the good
    solution's L is lower, not higher, and it is named as a wrong claim."""
    from logomesh.context import BattleContext
    from logomesh.sandbox import open_sandbox
    from logomesh.scoring.judging import Judging
    from logomesh.scoring.pipeline import measure_and_score
    from logomesh.submission import Submission
    from logomesh.tasks import load_task

    task = load_task("fib-recursive")
    good = task.labelled_submission("good").submission
    assert "import unittest" in good.tests and "from solution import" in good.tests
    wrong = Submission(source=good.source, tests=good.tests + FIB_WRONG_TEST, rationale=good.rationale)
    scored = [measure_and_score(task, sub, open_sandbox("docker"), Judging(red=False), BattleContext(seed=0))
              for sub in (good, wrong)]
    plain, with_wrong = (s.card.result_fields() for s in scored)
    assert with_wrong["tests"]["purple"]["wrong_claims"] == ["test_submission.TestWrongClaim.test_fib_300_is_832040"]
    assert "wrong_claims" not in plain["tests"]["purple"]
    assert with_wrong["tests"]["purple"]["flawed_caught"] == plain["tests"]["purple"]["flawed_caught"]
    assert with_wrong["logic_score"] < plain["logic_score"]
    assert with_wrong["cis_score"] <= plain["cis_score"]
