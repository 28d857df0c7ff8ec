"""``BattleResult``: its JSON keys for each ending, and parsing a stored result back once."""

from __future__ import annotations

import pickle

import pytest

from logomesh.battle.result import BattleResult, RedSettings, ResultEnding, ResultError

SCORES = {"cis_score": 0.5, "red_analysis": {"vulnerabilities": [{"family": "sqli"}, "not an object"]}}


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


def test_a_malformed_finding_reads_as_an_empty_one_and_a_missing_cis_as_zero() -> None:
    result = BattleResult.from_json({"status": "scored", "red_analysis": SCORES["red_analysis"]})
    assert result.vulnerabilities() == [{"family": "sqli"}, {}]
    assert result.cis_score == 0.0


def test_an_old_result_takes_its_seed_from_the_caller() -> None:
    assert BattleResult.from_json({"status": "scored", "battle_id": "b"}, seed=9).seed == 9
    assert BattleResult.from_json({"status": "scored", "seed": 4}, seed=9).seed == 4


@pytest.mark.parametrize("stored", [{"kind": "key-rotation", "new_key": "x"}, {"status": "done"}, {}])
def test_what_is_no_battle_result_is_refused_with_its_status(stored: dict[str, object]) -> None:
    with pytest.raises(ResultError, match="status"):
        BattleResult.from_json(stored)


def test_a_result_survives_the_trip_to_a_campaign_worker_and_back() -> None:
    result = BattleResult("b1", "t", 3, "mock:good", ResultEnding("scored"), SCORES, RedSettings(False, 0.0))
    assert pickle.loads(pickle.dumps(result)) == result
