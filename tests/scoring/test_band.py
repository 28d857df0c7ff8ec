"""The correctness band: a card that passed every hidden test outranks every card that did not, whatever else.

Cards come from the real ``score_submission`` over drawn inputs: the labelled submissions of two tasks (good,
flawed and off-intent code: R, A and L vary with the text), hidden suites of any size passed in full, in part, not
at all, errored or tampered with, purple suites, and confirmed or unconfirmed findings of every severity.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logomesh.findings import Finding
from logomesh.sandbox import SuiteRun
from logomesh.scoring import DEFAULT_CONFIG, ScoringConfig, score_submission
from logomesh.scoring.cis import ScoreCard, banded
from logomesh.scoring.logic import RedCoverage
from logomesh.scoring.minilm import MiniLM
from logomesh.submission import Submission
from logomesh.tasks import TaskSpec, load_task

from .runs import measured, suite

TASKS = ("rate-limiter", "lru-cache")
SEVERITIES = ("critical", "high", "medium", "low")


@cache
def task(task_id: str) -> TaskSpec:
    return load_task(task_id)


@cache
def labelled(task_id: str) -> tuple[tuple[str, Submission], ...]:
    spec = task(task_id)
    return tuple((name, spec.labelled_submission(name).submission) for name in spec.submission_names())


@dataclass(frozen=True)
class Inputs:
    task_id: str
    name: str
    hidden: SuiteRun
    purple: SuiteRun | None
    findings: tuple[Finding, ...]
    red: RedCoverage

    def score(self) -> ScoreCard:
        submission = dict(labelled(self.task_id))[self.name]
        return score_submission(task(self.task_id), submission, measured(self.hidden, self.purple, self.findings,
                                                                         self.red))


findings = st.lists(st.builds(lambda severity, confirmations: Finding("boundary", severity, "CWE-20", "s", "r",
                                                                       confirmations=confirmations),
                              st.sampled_from(SEVERITIES), st.integers(0, 3)), max_size=4).map(tuple)
purples = st.none() | st.builds(lambda p, f: suite(p, f), st.integers(0, 8), st.integers(0, 8))
reds = st.builds(RedCoverage, st.booleans(), st.integers(0, 50))


@st.composite
def inputs(draw: st.DrawFn, all_pass: bool) -> Inputs:
    task_id = draw(st.sampled_from(TASKS))
    name = draw(st.sampled_from([name for name, _ in labelled(task_id)]))
    total = draw(st.integers(1, 20))
    if all_pass:
        hidden = suite(total)
    else:
        passed = draw(st.integers(0, total))
        failed = total - passed
        kind = draw(st.sampled_from(("failed", "error", "tampered") if failed else ("error", "tampered")))
        hidden = (suite(passed, failed) if kind == "failed" else
                  suite(passed, failed, error="ImportError: boom") if kind == "error" else
                  suite(passed, failed, tampered=True))
    return Inputs(task_id, name, hidden, draw(purples), draw(findings), draw(reds))


def within_as_before(card: ScoreCard) -> float:
    """The CIS as it was before the band: raw, times each penalty."""
    return card.cis_raw * (1.0 - card.red_penalty_applied) * card.intent_penalty * card.behaviour_penalty


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(passing=inputs(all_pass=True), failing=inputs(all_pass=False), other=inputs(all_pass=False))
def test_every_all_pass_card_scores_above_every_other(
    model: MiniLM, passing: Inputs, failing: Inputs, other: Inputs,
) -> None:
    top, low, low2 = passing.score(), failing.score(), other.score()
    assert top.all_hidden_passed and not low.all_hidden_passed and not low2.all_hidden_passed
    assert top.cis_score > low.cis_score, (top.result_fields(), low.result_fields())
    assert top.cis_score >= DEFAULT_CONFIG.correctness_band >= max(low.cis_score, low2.cis_score)
    for card in (top, low, low2):  # x is the score as it was, so within a band the order is as it was
        assert card.cis_within_band == pytest.approx(within_as_before(card), abs=1e-12)
    if low.cis_within_band != low2.cis_within_band:
        assert (low.cis_score < low2.cis_score) == (low.cis_within_band < low2.cis_within_band)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=inputs(all_pass=True), second=inputs(all_pass=True))
def test_within_the_upper_band_the_order_is_unchanged(model: MiniLM, first: Inputs, second: Inputs) -> None:
    a, b = first.score(), second.score()
    assert a.all_hidden_passed and b.all_hidden_passed
    if within_as_before(a) != within_as_before(b):
        assert (a.cis_score < b.cis_score) == (within_as_before(a) < within_as_before(b))


@given(x=st.floats(0.0, 1.0), y=st.floats(0.0, 1.0), band=st.floats(0.05, 0.95))
def test_the_bands_split_the_unit_interval_at_the_boundary(x: float, y: float, band: float) -> None:
    config = ScoringConfig(correctness_band=band)
    high, low = banded(x, True, config), banded(y, False, config)
    assert band <= high <= 1.0 and 0.0 <= low <= band
    for passed in (True, False):
        if x < y:
            assert banded(x, passed, config) <= banded(y, passed, config)
