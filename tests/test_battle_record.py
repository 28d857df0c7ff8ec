"""The battle record: one builder for scored, failed and cancelled results, and what each entangles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger import Ledger
from logomesh.battle.record import (
    CancelledAt,
    FailedAt,
    StageValues,
    failed_played,
    played_battle,
    scored_result,
)
from logomesh.battle.request import BattleRequest
from logomesh.battle.result import BattleResult, ResultEnding
from logomesh.battle.spine import judge_submission, play_battle, record_battle
from logomesh.cancel import CancelToken
from logomesh.events import Event, StageStarted, discard
from logomesh.purple.exchange import canned_exchange
from logomesh.tasks import load_task

COMMON = {
    "battle_id", "task_id", "rationale_score", "architecture_score", "testing_score", "logic_score", "cis_score",
    "red_penalty_applied", "intent_penalty", "red_analysis", "tests", "anchors", "llm_adjustments", "status",
    "seed", "purple_agent",
}
FAILED_KEYS = COMMON | {"failed_stage", "reason"}
CANCELLED_KEYS = COMMON | {"stage", "reason"}
BATTLE_KEYS = {"battle_id", "task_id", "status", "seed", "purple_agent", "red_enabled", "red_budget_s"}
"""What a scored result holds besides its score card's fields (which grow as scoring does)."""
TASK_INPUTS = {"task_spec", "hidden_tests", "reference_solution", "flawed_variants", "red_module"}
PURPLE_INPUTS = {"purple_request", "purple_response"}


def _request(home: Path, battle_id: str, **overrides: object) -> BattleRequest:
    fields: dict[str, object] = {"task_id": "rate-limiter", "battle_id": battle_id, "seed": 5, "home": home,
                                 "mock_variant": "good", "red": False}
    fields.update(overrides)
    return BattleRequest(**fields)  # type: ignore[arg-type]


def test_failed_and_cancelled_results_have_their_documented_keys(tmp_path: Path) -> None:
    request = _request(tmp_path, "b1", campaign_id="c1")
    task = load_task("rate-limiter")
    failed = played_battle(request, task, StageValues(), FailedAt("sandbox", "no box"))
    cancelled = played_battle(request, task, StageValues(), CancelledAt("red", "cancelled by the user"))
    assert set(failed.result.to_json()) == FAILED_KEYS
    failed_json, cancelled_json = failed.result.to_json(), cancelled.result.to_json()
    assert (failed_json["status"], failed_json["failed_stage"], failed_json["reason"]) == (
        "failed", "sandbox", "no box")
    assert set(cancelled_json) == CANCELLED_KEYS
    assert (cancelled_json["status"], cancelled_json["stage"]) == ("cancelled", "red")
    assert failed.result.ending == ResultEnding("failed", "sandbox", "no box")  # one accessor for either stage key
    assert cancelled.result.ending == ResultEnding("cancelled", "red", "cancelled by the user")
    for played in (failed, cancelled):
        assert played.result.cis_score == 0.0 and played.intent_vector is None
        assert BattleResult.from_json(played.result.to_json()) == played.result
        assert set(played.inputs) == TASK_INPUTS
        variants = json.loads(played.inputs["flawed_variants"])  # read from the task, with no scoring run
        assert variants == task.flawed_variants() and variants
        assert all(task.labelled_submission(name).behaviour_defect for name in variants)
        assert played.attributes == {"purple_agent": "mock:good", "seed": "5", "campaign_id": "c1"}
    assert failed.failed and not failed.cancelled and cancelled.cancelled and not cancelled.failed


def test_a_battle_failed_before_any_stage_entangles_nothing(tmp_path: Path) -> None:
    played = failed_played(_request(tmp_path, "b2"), "engine", "worker error: gone")
    assert set(played.result.to_json()) == FAILED_KEYS and played.inputs == {}
    assert played.attributes == {"purple_agent": "mock:good", "seed": "5"}


def test_a_sandbox_failure_after_purple_answered_records_the_purple_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    request = _request(tmp_path, "b3", sandbox="docker")  # Docker went away after the pre-flight: recorded
    outcome = record_battle(tmp_path, "b3", play_battle(request, load_task("rate-limiter")))
    assert outcome.failed and outcome.result.to_json()["failed_stage"] == "sandbox"
    with Ledger.open(tmp_path) as led:
        stored = led.get("b3")
    assert stored is not None
    assert set(stored.result) == FAILED_KEYS
    exchange = canned_exchange(load_task("rate-limiter"), "good", "b3")
    assert set(stored.inputs) == TASK_INPUTS | PURPLE_INPUTS
    assert stored.inputs["purple_request"] == exchange.request_bytes
    assert stored.inputs["purple_response"] == exchange.response_bytes
    assert stored.attributes == {"purple_agent": "mock:good", "seed": "5", "purple_protocol": "in-process"}


@pytest.mark.docker
def test_a_cancel_after_measuring_records_the_sandbox_and_its_observations(tmp_path: Path) -> None:
    token = CancelToken()

    def cancel_at_scoring(event: Event) -> None:
        if isinstance(event, StageStarted) and event.stage == "scoring":
            token.cancel()

    played = play_battle(_request(tmp_path, "b4", cancel=token), load_task("rate-limiter"), cancel_at_scoring)
    assert set(played.result.to_json()) == CANCELLED_KEYS and played.result.to_json()["stage"] == "scoring"
    assert set(played.inputs) == TASK_INPUTS | PURPLE_INPUTS | {"reference_observations"}
    assert played.inputs["reference_observations"]
    assert {"sandbox_image", "sandbox_backend", "purple_protocol"} <= set(played.attributes)
    assert "scorer_config_sha256" not in played.attributes and played.intent_vector is None


@pytest.mark.docker
def test_a_scored_battle_entangles_every_stage_and_replay_builds_the_same_result(tmp_path: Path) -> None:
    request = _request(tmp_path, "b5")
    task = load_task("rate-limiter")
    played = play_battle(request, task)
    judged = judge_submission(request, task, canned_exchange(task, "good", "b5").submission, request.context(discard))
    result = played.result.to_json()
    assert set(result) == BATTLE_KEYS | set(judged.card.result_fields()) and result["status"] == "scored"
    assert COMMON | {"cis_raw", "components", "scorer_config_sha256"} <= set(result)
    assert (result["red_enabled"], result["red_budget_s"]) == (False, 0.0)
    assert BattleResult.from_json(result) == played.result and BattleResult.from_json(result).to_json() == result
    assert set(played.inputs) == TASK_INPUTS | PURPLE_INPUTS | {"reference_observations", "intent_library"}
    library = json.loads(played.inputs["intent_library"])  # the intents the check judged among: replay needs them
    assert ["task:rate-limiter", task.entry_point] in [row[:2] for row in library]
    assert played.inputs["intent_library"] == judged.card.intent_library  # carried by the card, not re-read
    assert played.attributes["scorer_config_sha256"] == result["scorer_config_sha256"]
    assert any(name.startswith("model:") for name in played.attributes)
    assert played.intent_vector
    assert scored_result(request, judged.card) == played.result
    assert judged.measured.reference_observations == played.inputs["reference_observations"]
    assert (judged.sandbox.image, judged.sandbox.backend) == (
        played.attributes["sandbox_image"], played.attributes["sandbox_backend"])
