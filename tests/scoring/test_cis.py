"""score_submission end to end on real tasks, with the sandbox's measurements built by hand."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.events import CorrectnessBand, Event, PenaltyApplied, ScoreComponent
from logomesh.findings import Finding
from logomesh.scoring import DEFAULT_CONFIG, ScoringConfig, score_submission
from logomesh.scoring.minilm import MiniLM
from logomesh.submission import Submission
from logomesh.tasks import TaskSpec

from .runs import measured, suite

OWNED = {"rationale_score", "architecture_score", "testing_score", "logic_score", "cis_score", "red_penalty_applied",
         "intent_penalty", "behaviour_penalty", "red_analysis", "tests", "anchors", "llm_adjustments"}


def floats(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in floats(v)]
    return []


def test_result_fields_arithmetic_and_events(model: MiniLM, rate_limiter: TaskSpec) -> None:
    good = rate_limiter.labelled_submission("good").submission
    events: list[Event] = []
    findings = (Finding("concurrency", "high", "CWE-362", "race", "r", confirmations=3),
                Finding("boundary", "critical", "CWE-20", "crash", "r", confirmations=2),
                Finding("boundary", "critical", "CWE-20", "unconfirmed", "r", confirmations=0))
    card = score_submission(rate_limiter, good, measured(suite(12, 4), suite(5, 1), findings), battle_id="b1",
                            emit=events.append)
    fields = card.result_fields()
    assert set(fields) >= OWNED
    assert [(e.name, e.battle_id) for e in events if isinstance(e, ScoreComponent)] == [
        ("rationale", "b1"), ("architecture", "b1"), ("testing", "b1"), ("logic", "b1")]
    details = {e.name: e.details for e in events if isinstance(e, ScoreComponent)}
    assert details["rationale"] == {"cosine": card.rationale.cosine, "windows": card.rationale.windows}
    assert details["architecture"] == {"violations": [v.to_json() for v in card.architecture.violations]}
    assert details["testing"] == {"hidden_pass_rate": 0.75}
    assert details["logic"] == {"parts": card.logic.parts} and set(card.logic.parts) == {
        "probes", "complexity", "invalid_input", "purple_tests"}
    assert [(e.name, e.factor) for e in events if isinstance(e, PenaltyApplied)] == [
        ("red:critical", 0.60), ("red:high", 0.75), ("behaviour", pytest.approx(0.30 + 0.70 * 0.75))]
    assert fields["behaviour_penalty"] == pytest.approx(0.825)
    assert fields["testing_score"] == pytest.approx(0.20 + 0.65 * 0.75, abs=1e-4)
    assert fields["red_penalty_applied"] == pytest.approx(0.55)
    assert fields["red_analysis"]["vulnerability_count"] == 2
    assert fields["red_analysis"]["max_severity"] == "critical"
    assert fields["tests"]["hidden"] == {"passed": 12, "failed": 4, "total": 16}
    raw = 0.25 * (card.final["rationale"] + card.final["architecture"] + card.final["testing"] + card.final["logic"])
    within = raw * 0.45 * card.intent_penalty * 0.825
    assert card.cis_within_band == pytest.approx(within)
    assert card.cis_score == pytest.approx(0.5 * within)  # 4 hidden tests failed: the lower band [0, 0.5]
    assert fields["cis_within_band"] == round(card.cis_within_band, 4)
    assert fields["band"] == {"all_hidden_passed": False, "boundary": 0.5}
    assert fields["components"]["rests_on"]["band"].startswith("not every hidden test passed")
    bands = [e for e in events if isinstance(e, CorrectnessBand)]
    assert [(b.battle_id, b.all_passed, b.boundary) for b in bands] == [("b1", False, 0.5)]
    assert (bands[0].within, bands[0].cis) == (card.cis_within_band, card.cis_score)
    assert fields["anchors"] == {k: round(v, 4) for k, v in card.anchors.items()}
    assert fields["llm_adjustments"]["status"] == "disabled"
    assert all(round(f, 4) == f for f in floats(fields))
    assert len(card.intent_vector) == 384
    intent = fields["components"]["intent"]
    assert intent["reasons"] == [] and intent["margin"] > 0 and len(intent["reference_sha256"]) == 64
    assert intent["distractors"] >= 164 and intent["nearest_distractor"] != "task:rate-limiter"


def test_off_intent_code_takes_the_intent_penalty_from_the_measured_r(model: MiniLM, rate_limiter: TaskSpec) -> None:
    unrelated = Submission("import csv\n\ndef rows(path):\n    with open(path) as f:\n"
                           "        return [r for r in csv.reader(f) if r]\n", "", "")
    events: list[Event] = []
    card = score_submission(rate_limiter, unrelated, measured(suite(0, 16)), emit=events.append)
    r = card.rationale.score
    assert r < DEFAULT_CONFIG.intent_threshold
    assert card.intent.own == pytest.approx(card.rationale.cosine)
    assert card.intent.margin < 0  # a CSV reader is nearer some other intent than a rate limiter
    by_margin = max(0.0, 1 + card.intent.margin / DEFAULT_CONFIG.intent_span)
    assert card.intent_penalty == pytest.approx(0.30 + 0.70 * min(r / 0.35, by_margin))
    assert [e.name for e in events if isinstance(e, PenaltyApplied)] == ["intent", "behaviour"]
    assert card.behaviour_penalty == pytest.approx(0.30)  # it passed none of the judge's observations
    assert card.cis_score == pytest.approx(0.5 * card.cis_raw * card.intent_penalty * 0.30)


def test_correct_code_whose_text_reads_like_another_task_takes_no_intent_penalty(model: MiniLM) -> None:
    """fib by fast doubling (a helper named ``_pair``) reads nearer HumanEval's pairs_sum_to_zero than fib."""
    from logomesh.tasks import load_task

    fib = load_task("fib-recursive")
    code = Submission(fib.reference_bytes.decode("utf-8"), "", "")
    total = 12
    passing = score_submission(fib, code, measured(suite(total)))
    failing = score_submission(fib, code, measured(suite(0, total)))
    assert passing.intent.margin < 0 and passing.intent.text_penalty < 1.0  # the text alone is penalised
    assert passing.intent_penalty == 1.0 and passing.intent.reasons == ()
    assert failing.intent_penalty == pytest.approx(passing.intent.text_penalty)
    assert failing.intent_penalty < 1.0
    assert failing.result_fields()["components"]["intent"]["text_penalty"] == round(failing.intent_penalty, 4)


def test_code_that_reproduces_nothing_keeps_at_most_the_floor_however_it_looks(
    model: MiniLM, rate_limiter: TaskSpec,
) -> None:
    """The good source, unchanged as text, scored against a suite it passed in full, in part and not at all."""
    good = rate_limiter.labelled_submission("good").submission
    cards = {passed: score_submission(rate_limiter, good, measured(suite(passed, 16 - passed)))
             for passed in (16, 8, 0)}
    assert [cards[p].behaviour_penalty for p in (16, 8, 0)] == pytest.approx([1.0, 0.65, 0.30])
    assert cards[16].intent_penalty == cards[0].intent_penalty == 1.0  # as text it is on intent either way
    for passed, card in cards.items():
        assert card.cis_within_band == pytest.approx(card.cis_raw * card.behaviour_penalty), passed
    assert cards[16].all_hidden_passed and not cards[8].all_hidden_passed and not cards[0].all_hidden_passed
    assert cards[16].cis_score == pytest.approx(0.5 + 0.5 * cards[16].cis_within_band)
    assert cards[8].cis_score == pytest.approx(0.5 * cards[8].cis_within_band)
    assert cards[0].cis_score <= 0.5 * 0.30 * cards[0].cis_raw + 1e-12


def test_config_hash_is_stable_and_changes_with_any_weight() -> None:
    assert DEFAULT_CONFIG.sha256() == ScoringConfig().sha256()
    assert len(DEFAULT_CONFIG.sha256()) == 64
    assert dataclasses.replace(DEFAULT_CONFIG, intent_threshold=0.4).sha256() != DEFAULT_CONFIG.sha256()
    assert dataclasses.replace(DEFAULT_CONFIG, correctness_band=0.4).sha256() != DEFAULT_CONFIG.sha256()
    assert set(DEFAULT_CONFIG.model_ids()) == {"embedding"}
    assert "all-MiniLM-L6-v2" in DEFAULT_CONFIG.model_ids()["embedding"]


_SCRIPT = """
import json, sys
from logomesh.sandbox import SuiteRun, TestOutcome
from logomesh.scoring import score_submission
from logomesh.scoring.measure import Measured
from logomesh.tasks import all_tasks
from ledger.canonical import canonical_sha256
out = {}
for task in all_tasks():
    for name in [n for n in task.submission_names() if n in ("good", "off-intent")]:
        sub = task.labelled_submission(name).submission
        names = enumerate(task.hidden_tests)
        hidden = SuiteRun(tuple(TestOutcome(n, "passed" if i % 3 else "failed") for i, n in names))
        card = score_submission(task, sub, Measured(hidden, None, None, ()))
        fields = card.result_fields()
        out[f"{task.id}/{name}"] = [json.dumps(fields, sort_keys=True), canonical_sha256(fields), card.intent_vector]
sys.stdout.write(json.dumps(out, sort_keys=True))
"""


@pytest.mark.slow
def test_two_processes_give_byte_identical_results_for_every_task() -> None:
    root = Path(__file__).resolve().parents[2]
    runs = [subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, cwd=root, timeout=120, check=True)
            for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout
    data = json.loads(runs[0].stdout)
    from logomesh.tasks import all_tasks

    assert {key.split("/")[0] for key in data} == {task.id for task in all_tasks()}
