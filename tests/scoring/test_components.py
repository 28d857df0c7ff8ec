"""T, the L anchor and both penalties, from hand-built measurements."""

from __future__ import annotations

from dataclasses import replace

import pytest

from logomesh.findings import Finding
from logomesh.red.agent import RedStats
from logomesh.scoring.cis import confirmed, red_penalty
from logomesh.scoring.config import DEFAULT_CONFIG, LogicWeights
from logomesh.scoring.intent import penalty_factor
from logomesh.scoring.logic import RED_NOT_RUN, RedCoverage, complexity_facts, logic_anchor
from logomesh.scoring.testing import MutantReport, score_testing

from .runs import suite

CLEAN = "def f(x):\n    if not isinstance(x, int):\n        raise TypeError('int')\n    return x + 1\n"


def finding(severity: str, confirmations: int = 2) -> Finding:
    return Finding("family", severity, "CWE-0", "summary", "repro", confirmations=confirmations)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("passed", "failed", "expected"), [(10, 0, 0.85), (0, 10, 0.20), (1, 1, 0.525), (3, 1, 0.6875)]
)
def test_testing_is_linear_in_the_hidden_pass_rate(passed: int, failed: int, expected: float) -> None:
    assert score_testing(suite(passed, failed), DEFAULT_CONFIG).score == pytest.approx(expected)


def test_a_suite_that_errored_or_was_tampered_with_counts_as_zero() -> None:
    assert score_testing(suite(5, 0, error="ImportError"), DEFAULT_CONFIG).score == pytest.approx(0.20)
    tampered = score_testing(suite(5, 0, tampered=True), DEFAULT_CONFIG)
    assert tampered.score == pytest.approx(0.20)
    assert not tampered.counted
    assert score_testing(suite(0, 0), DEFAULT_CONFIG).score == pytest.approx(0.20)


def test_red_penalty_counts_each_severity_once_and_multiplies() -> None:
    applied, levels = red_penalty([finding("critical"), finding("high"), finding("high")], DEFAULT_CONFIG)
    assert applied == pytest.approx(1 - 0.60 * 0.75)  # ×0.45
    assert [level for level, _ in levels] == ["critical", "high"]
    assert red_penalty([finding("medium")] * 5, DEFAULT_CONFIG)[0] == pytest.approx(0.15)
    assert red_penalty([finding("low")], DEFAULT_CONFIG)[0] == 0.0
    assert red_penalty([], DEFAULT_CONFIG)[0] == 0.0


def test_only_confirmed_findings_count() -> None:
    findings = [finding("critical", confirmations=0), finding("medium", confirmations=1)]
    assert [f.severity for f in confirmed(findings, DEFAULT_CONFIG)] == ["medium"]


@pytest.mark.parametrize(("r", "expected"), [(0.0, 0.30), (0.175, 0.65), (0.35, 1.0), (0.9, 1.0), (0.349, 0.998)])
def test_intent_penalty_is_linear_below_the_floor_when_the_own_intent_is_nearest(r: float, expected: float) -> None:
    factor, reasons = penalty_factor(r, 0.2, DEFAULT_CONFIG)
    assert factor == pytest.approx(expected, abs=1e-3)
    assert bool(reasons) == (expected < 1.0)


@pytest.mark.parametrize(("margin", "expected"), [(0.0, 1.0), (0.3, 1.0), (-0.025, 0.65), (-0.05, 0.30), (-0.4, 0.30)])
def test_intent_penalty_ramps_down_when_another_intent_is_nearer(margin: float, expected: float) -> None:
    """Margin 0 and span 0.05 (the defaults): the full penalty once another intent is nearer by 0.05."""
    factor, reasons = penalty_factor(0.8, margin, DEFAULT_CONFIG)
    assert factor == pytest.approx(expected, abs=1e-9)
    assert bool(reasons) == (expected < 1.0)


def test_the_worse_of_the_two_terms_sets_the_intent_penalty() -> None:
    factor, reasons = penalty_factor(0.0875, -0.0125, DEFAULT_CONFIG)  # R term 0.25, margin term 0.75
    assert factor == pytest.approx(0.30 + 0.70 * 0.25)
    assert len(reasons) == 2


def test_logic_anchor_is_one_for_clean_tested_code_and_lists_each_part() -> None:
    hidden = suite(3, 0, names=("t.T.test_invalid_capacity", "t.T.test_a", "t.T.test_b"))
    purple = suite(4, 0)
    logic = logic_anchor(CLEAN, hidden, purple, [], MutantReport(("a", "b"), ()), LogicWeights(),
                         RedCoverage(ran=True, probes_reached=12))
    assert logic.parts == {"probes": 1.0, "complexity": 1.0, "invalid_input": 1.0, "purple_tests": 1.0}
    assert logic.facts.probes.not_measured == ""
    assert logic.score == pytest.approx(1.0)
    assert logic.facts.invalid_input.source == "hidden tests"
    assert logic.facts.purple_tests.flawed_caught == 2


def test_logic_parts_fall_with_the_measured_facts() -> None:
    weights = LogicWeights()
    hidden = suite(1, 1, names=("t.T.test_rejects_bad_input", "t.T.test_raises_on_empty"))
    logic = logic_anchor(CLEAN, hidden, suite(1, 1), [finding("high"), finding("medium")],
                         MutantReport(("a",), ("b", "c", "d")), weights)
    assert logic.parts["probes"] == pytest.approx(1 - 0.40 - 0.25)
    assert logic.parts["invalid_input"] == pytest.approx(0.5)
    assert logic.parts["purple_tests"] == pytest.approx(0.5 * 0.25)
    expected = sum(getattr(weights, k) * v for k, v in logic.parts.items())
    assert logic.score == pytest.approx(expected)


def test_without_purple_tests_or_flawed_variants() -> None:
    weights = LogicWeights()
    no_tests = logic_anchor(CLEAN, suite(1), None, [], None, weights)
    assert no_tests.parts["purple_tests"] == 0.0
    untried = logic_anchor(CLEAN, suite(1), suite(2), [], None, weights)
    assert untried.parts["purple_tests"] == pytest.approx(weights.untested_discrimination)


def test_invalid_input_falls_back_to_a_static_fact_without_such_hidden_tests() -> None:
    weights = LogicWeights()
    guarded = logic_anchor(CLEAN, suite(1), None, [], None, weights)
    unguarded = logic_anchor("def f(x):\n    return x\n", suite(1), None, [], None, weights)
    assert guarded.parts["invalid_input"] == 1.0
    assert unguarded.parts["invalid_input"] == 0.5
    assert unguarded.facts.invalid_input.source == "static"


def test_complexity_is_measured_against_the_budget() -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(19))
    source = f"def f(x):\n{branches}    return -1\n"
    assert complexity_facts(__import__("ast").parse(source)) == (20, 1)
    logic = logic_anchor(source, suite(1), None, [], None, LogicWeights())
    assert logic.parts["complexity"] == pytest.approx((10 / 20 + 1.0) / 2)
    broken = logic_anchor("def f(:\n", suite(1), None, [], None, LogicWeights())
    assert broken.parts["complexity"] == 0.0


@pytest.mark.parametrize(
    ("hidden_error", "red", "why"),
    [
        (None, RED_NOT_RUN, "red agent did not run"),
        (None, RedCoverage(ran=True, probes_reached=0), "no probe reached the code"),
        ("ImportError: cannot import name 'RateLimiter'", RedCoverage(True, 9), "did not run the code"),
    ],
)
def test_probes_that_measured_nothing_score_zero_not_one(
    hidden_error: str | None, red: RedCoverage | None, why: str
) -> None:
    """Absence is not quality: no finding because nothing was probed is not a clean bill."""
    hidden = suite(3, error=hidden_error)
    logic = logic_anchor(CLEAN, hidden, suite(2), [], None, LogicWeights(), red)
    assert logic.parts["probes"] == 0.0
    assert why in logic.facts.probes.not_measured
    measured = logic_anchor(CLEAN, suite(3), suite(2), [], None, LogicWeights(), RedCoverage(True, 1))
    assert measured.parts["probes"] == 1.0


def test_a_caller_of_the_old_signature_is_judged_on_its_findings_and_marked() -> None:
    logic = logic_anchor(CLEAN, suite(3), None, [], None, LogicWeights())
    assert logic.parts["probes"] == 1.0 and not logic.facts.probes.red_reported
    broken = logic_anchor(CLEAN, suite(0, 3, error="ImportError"), None, [], None, LogicWeights())
    assert broken.parts["probes"] == 0.0  # code the hidden suite could not import was never probed


def test_a_confirmed_finding_is_proof_the_probes_reached_the_code() -> None:
    logic = logic_anchor(CLEAN, suite(3), None, [finding("low")], None, LogicWeights(), None)
    assert logic.parts["probes"] == pytest.approx(0.90)
    assert logic.facts.probes.not_measured == ""


def test_invalid_input_is_not_measured_when_the_hidden_suite_did_not_run() -> None:
    """Before, an import failure fell back to the static fact and could score 1.0."""
    for hidden in (suite(0, 3, error="ImportError: no module named solution"), suite(0), suite(2, tampered=True)):
        logic = logic_anchor(CLEAN, hidden, None, [], None, LogicWeights(), RedCoverage(True, 5))
        assert logic.parts["invalid_input"] == 0.0
        assert logic.facts.invalid_input.not_measured == "the hidden suite did not run"


def test_red_coverage_from_the_red_report_counts_probes_without_harness_errors() -> None:
    stats = RedStats(strategy="mcts", seed=0, budget_s=1.0, budget_plays=4, leaves=3, stopped_because="exhausted",
                     iterations=4, elapsed_s=0.5, first_finding_s=None, probes=7, harness_errors=2)
    assert RedCoverage.from_stats(stats) == RedCoverage(True, 5)
    unparsed = replace(stats, stopped_because="source does not parse", iterations=None, probes=0, harness_errors=0)
    assert RedCoverage.from_stats(unparsed).probes_reached == 0


@pytest.mark.parametrize(("behaviour", "expected"), [(None, 0.30), (0.0, 0.30), (0.5, 0.65), (0.99, 0.993),
                                                     (1.0, 1.0)])
def test_behaviour_stands_in_for_the_text_where_it_is_stronger(behaviour: float | None, expected: float) -> None:
    """Another intent nearer by the full span: the text alone keeps 30 %; the hidden pass rate lifts it."""
    factor, reasons = penalty_factor(0.8, -0.05, DEFAULT_CONFIG, behaviour)
    assert factor == pytest.approx(expected, abs=1e-3)
    assert bool(reasons) == (expected < 1.0)


def test_behaviour_never_lowers_what_the_text_earned() -> None:
    assert penalty_factor(0.8, 0.1, DEFAULT_CONFIG, 0.0) == (1.0, ())


def test_logic_parts_not_read_from_hidden_tests_follow_the_hidden_pass_rate() -> None:
    """Issue 22: L was 0.713 for code passing 0 % of its hidden tests, above two correct answers (0.675, 0.588)."""
    weights = LogicWeights()
    wrong, right = suite(0, 4), suite(4)
    args = (suite(2), [], None, weights, RedCoverage(True, 8))
    failing = logic_anchor(CLEAN, wrong, *args, behaviour=0.0)
    passing = logic_anchor("def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(15))
                           + "    return x\n", right, *args, behaviour=1.0)
    assert failing.score == 0.0 < passing.score
    assert failing.facts.behaviour is not None
    assert failing.facts.behaviour.scaled == ("probes", "complexity", "invalid_input", "purple_tests")
    half = logic_anchor(CLEAN, suite(2, 2), *args, behaviour=0.5)
    unscaled = logic_anchor(CLEAN, suite(2, 2), *args)
    for name in ("probes", "complexity", "purple_tests"):
        assert half.parts[name] == pytest.approx(0.5 * unscaled.parts[name])
    measured = suite(1, 1, names=("t.T.test_rejects_bad_input", "t.T.test_ok"))
    from_hidden = logic_anchor(CLEAN, measured, *args, behaviour=0.5)
    assert from_hidden.parts["invalid_input"] == 1.0  # its one hidden test passed; read from them: not scaled
    assert from_hidden.facts.behaviour is not None
    assert "invalid_input" not in from_hidden.facts.behaviour.scaled
