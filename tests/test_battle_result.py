"""``BattleResult``: its JSON keys for each ending, and parsing a stored result back once into typed scores."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from logomesh import sandbox
from logomesh.battle.record import scored_result
from logomesh.battle.request import BattleRequest
from logomesh.battle.result import BattleResult, RedSettings, ResultEnding, ResultError
from logomesh.battle.scores import Band, Scores, SuiteTally, read_finding
from logomesh.findings import Finding
from logomesh.scoring import score_submission
from logomesh.scoring.measure import Measured
from logomesh.tasks import load_task

SCORES = Scores.from_json({"cis_score": 0.5,
                           "red_analysis": {"vulnerabilities": [{"family": "sqli"}, "not an object"]}})


def _suite(passed: int, failed: int) -> sandbox.SuiteRun:
    return sandbox.SuiteRun(tuple(sandbox.TestOutcome(f"test_x.T.test_{i}", "passed" if i < passed else "failed")
                                  for i in range(passed + failed)))


def test_each_ending_writes_its_stage_under_its_own_key_and_reads_back_under_one() -> None:
    failed = BattleResult("b1", "t", 3, "mock:good", ResultEnding("failed", "purple", "timed out"), SCORES)
    cancelled = BattleResult("b2", "t", 3, "mock:good", ResultEnding("cancelled", "red", "stopped"), SCORES)
    scored = BattleResult("b3", "t", 3, "mock:good", ResultEnding("scored"), SCORES, RedSettings(True, 2.0))
    assert failed.to_json()["failed_stage"] == "purple" and "stage" not in failed.to_json()
    assert cancelled.to_json()["stage"] == "red" and "failed_stage" not in cancelled.to_json()
    assert not {"stage", "failed_stage", "reason"} & set(scored.to_json())
    assert (scored.to_json()["red_enabled"], scored.to_json()["red_budget_s"]) == (True, 2.0)
    for result in (failed, cancelled, scored):
        assert BattleResult.from_json(result.to_json()) == result
    assert [BattleResult.from_json(r.to_json()).ending.stage for r in (failed, cancelled, scored)] == [
        "purple", "red", ""]


def test_the_key_order_is_the_one_results_always_had() -> None:
    failed = BattleResult("b1", "t", 3, "mock:good", ResultEnding("failed", "purple", "timed out"), SCORES)
    assert list(failed.to_json()) == ["battle_id", "task_id", "cis_score", "red_analysis", "status", "failed_stage",
                                      "reason", "seed", "purple_agent"]


def test_a_malformed_finding_reads_as_an_empty_one_and_a_missing_cis_as_none() -> None:
    result = BattleResult.from_json({"status": "scored", "red_analysis": SCORES.to_json()["red_analysis"]})
    assert result.scores.findings == (Finding("sqli", None, "", "", ""), Finding("", None, "", "", ""))
    assert result.scores.cis is None and result.cis_score == 0.0


def test_a_scored_cards_fields_parse_once_and_go_back_to_the_ledger_byte_for_byte(tmp_path: Path) -> None:
    task = load_task("rate-limiter")
    findings = (Finding("concurrency", "high", "CWE-362", "race", "run(threads=8)", confirmations=3),)
    measured = Measured(_suite(12, 4), _suite(5, 1), None, findings)
    card = score_submission(task, task.labelled_submission("good").submission, measured)
    request = BattleRequest(task_id=task.id, battle_id="b1", seed=5, home=tmp_path, mock_variant="good", red=True,
                            red_budget_s=2.0)
    result = scored_result(request, card)
    signed = json.loads(json.dumps(result.to_json()))  # what a reader of the ledger gets back
    parsed = BattleResult.from_json(signed)
    assert json.dumps(parsed.to_json()) == json.dumps(signed) == json.dumps(result.to_json())
    assert parsed == result and hash(parsed) == hash(result)
    fields = card.result_fields()
    scores = parsed.scores
    assert (scores.cis, scores.cis_raw, scores.cis_within_band) == (
        fields["cis_score"], fields["cis_raw"], fields["cis_within_band"])
    assert scores.band == Band(False, 0.5)  # 4 hidden tests failed
    assert [value for _, _, value in scores.components.named()] == [
        fields["rationale_score"], fields["architecture_score"], fields["testing_score"], fields["logic_score"]]
    assert scores.penalties.by_name() == {"red": fields["red_penalty_applied"], "intent": fields["intent_penalty"],
                                          "behaviour": fields["behaviour_penalty"]}
    assert (scores.hidden, scores.purple) == (SuiteTally(12, 4, 16), SuiteTally(5, 1, 6))
    assert scores.findings == findings  # the scorer's own finding, read back as the one type
    assert scores.intent_reference == card.intent.reference_sha256 and len(scores.intent_reference) == 64
    assert pickle.loads(pickle.dumps(parsed)) == parsed


ENDINGS = {
    "all passed, a race found": Measured(_suite(16, 0), None, None, (
        Finding("concurrency", "high", "CWE-362", "race", "run(threads=8)", 1, 3, evidence="7 of 8 kept"),)),
    "the suite errored": Measured(dataclasses.replace(_suite(0, 0), error="ImportError: no module\nline two"),
                                  _suite(2, 0), None, ()),
    "the suite was tampered with": Measured(
        dataclasses.replace(_suite(3, 1), tampered=True, tamper_reasons=("a trace hook was installed",)),
        _suite(0, 0), None, (Finding("differential", "low", "CWE-20", "f(-1)", "f(-1)", 2, 2, penalised=False),)),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("variant", ["good", "off-intent"])
def test_a_card_gives_the_same_scores_typed_directly_as_parsed_from_its_fields(ending: str, variant: str) -> None:
    """``Scores.from_card`` reads the card's values; ``from_json`` reads a stored result: they must agree,
    field for field, or a battle just played would read differently from the same battle read from the ledger."""
    task = load_task("rate-limiter")
    card = score_submission(task, task.labelled_submission(variant).submission, ENDINGS[ending])
    direct, parsed = Scores.from_card(card), Scores.from_json(json.loads(json.dumps(card.result_fields())))
    assert direct == parsed and direct.to_json() == card.result_fields()
    assert all(not f.evidence for f in direct.findings) and len(direct.findings) == len(card.findings)
    assert direct.hidden is not None and direct.hidden.total == card.hidden.total


def test_a_finding_goes_from_the_red_agent_to_the_record_and_back_as_one_type() -> None:
    produced = (Finding("race", "high", "CWE-362", "lost update", "run(threads=8)", confirmations=1, attempts=3,
                        evidence="8 threads, 7 increments kept"),
                Finding("differential", "low", "CWE-20", "f(-1) differs", "f(-1)", 2, 2, "f(-1) = 0, want 1",
                        penalised=False))
    for finding in produced:
        recorded = json.loads(json.dumps(finding.to_json()))  # as the ledger gives it back
        back = read_finding(recorded)
        assert back == dataclasses.replace(finding, evidence="")  # evidence is kept beside the result, not in it
        assert back.to_json() == finding.to_json() == recorded
    assert [read_finding(f.to_json()).penalised for f in produced] == [True, False]


@pytest.mark.parametrize("severity", ["severe", "", 3, None, ["high"]])
def test_a_stored_finding_whose_severity_is_none_of_the_four_reads_with_severity_none(severity: object) -> None:
    stored = {"family": "race", "severity": severity, "cwe": "CWE-362", "summary": "s", "reproducer": "r",
              "confirmations": 2, "attempts": 2}
    result = BattleResult.from_json({"status": "scored", "red_analysis": {"vulnerabilities": [stored]}})
    assert result.scores.findings == (Finding("race", None, "CWE-362", "s", "r", 2, 2),)
    assert read_finding({**stored, "severity": "critical"}).severity == "critical"


MALFORMED: dict[str, Any] = {
    "cis_score": "0.9", "cis_raw": float("nan"), "rationale_score": True, "architecture_score": None,
    "behaviour_penalty": float("inf"), "band": {"all_hidden_passed": True, "boundary": "half"},
    "tests": {"hidden": [3, 4], "purple": {"passed": -1, "total": "6", "error": 7}},
    "red_analysis": {"vulnerabilities": {"family": "sqli"}}, "components": {"intent": ["x"]},
}


def test_malformed_fields_read_as_none_or_empty_and_are_signed_as_they_were() -> None:
    stored = {"status": "scored", "battle_id": "b", **MALFORMED}
    result = BattleResult.from_json(stored)
    scores = result.scores
    assert (scores.cis, scores.cis_raw, scores.band, scores.hidden) == (None, None, None, None)
    assert (scores.components.rationale, scores.components.architecture, scores.penalties.behaviour) == (
        None, None, None)
    assert scores.purple == SuiteTally(0, 0, 0)
    assert (scores.findings, scores.intent_reference) == ((), "")
    signed = {"battle_id": "b", "task_id": "", **MALFORMED, "status": "scored", "seed": 0, "purple_agent": ""}
    assert json.dumps(result.to_json()) == json.dumps(signed)  # keys, order and values


def test_an_old_result_without_band_or_behaviour_parses_with_those_absent() -> None:
    old = {"battle_id": "b", "task_id": "t", "rationale_score": 0.5, "architecture_score": 0.75,
           "testing_score": 1.0, "logic_score": 0.25, "cis_score": 0.6, "red_penalty_applied": 0.0,
           "intent_penalty": 1.0, "tests": {"hidden": {"passed": 4, "failed": 0, "total": 4}}, "status": "scored"}
    scores = BattleResult.from_json(old, seed=9).scores
    assert (scores.band, scores.cis_within_band, scores.penalties.behaviour, scores.purple) == (
        None, None, None, None)
    assert (scores.cis, scores.penalties.red, scores.penalties.intent) == (0.6, 0.0, 1.0)
    assert scores.components.named() == (("R", "rationale", 0.5), ("A", "architecture", 0.75),
                                         ("T", "testing", 1.0), ("L", "logic", 0.25))
    assert scores.hidden == SuiteTally(4, 0, 4)
    assert BattleResult.from_json(old, seed=9).to_json() == {**old, "seed": 9, "purple_agent": ""}


def test_an_old_result_takes_its_seed_from_the_caller() -> None:
    assert BattleResult.from_json({"status": "scored", "battle_id": "b"}, seed=9).seed == 9
    assert BattleResult.from_json({"status": "scored", "seed": 4}, seed=9).seed == 4


@pytest.mark.parametrize("stored", [{"kind": "key-rotation", "new_key": "x"}, {"status": "done"}, {}])
def test_what_is_no_battle_result_is_refused_with_its_status(stored: dict[str, object]) -> None:
    with pytest.raises(ResultError, match="status"):
        BattleResult.from_json(stored)


def test_a_result_survives_the_trip_to_a_campaign_worker_and_back() -> None:
    result = BattleResult("b1", "t", 3, "mock:good", ResultEnding("scored"), SCORES, RedSettings(False, 0.0))
    back = pickle.loads(pickle.dumps(result))
    assert back == result and back.to_json() == result.to_json() and back.scores.findings == SCORES.findings
