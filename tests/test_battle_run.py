"""``run_battle`` in process: determinism, and failures that are still recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from logomesh.battle.preflight import EnvironmentProblem
from logomesh.battle.record import failed_played
from logomesh.battle.request import BattleRequest, BattleSetupError
from logomesh.battle.spine import play_battle, record_battle, result_json, run_battle
from logomesh.events import BattleFailed, BattleFinished, Event, LedgerAppended, ScoreComponent, StageStarted
from logomesh.tasks import load_task


def _request(home: Path, **overrides: object) -> BattleRequest:
    fields: dict[str, object] = {
        "task_id": "rate-limiter",
        "battle_id": "rl-det",
        "seed": 11,
        "home": home,
        "mock_variant": "good",
        "red_budget_s": 3.0,
    }
    fields.update(overrides)
    return BattleRequest(**fields)  # type: ignore[arg-type]


def test_setup_errors_raise_before_anything_is_recorded(tmp_path: Path) -> None:
    with pytest.raises(BattleSetupError, match="exactly one purple agent"):
        run_battle(_request(tmp_path, mock_variant=None))
    with pytest.raises(BattleSetupError, match="unknown task"):
        run_battle(_request(tmp_path, task_id="nope"))
    with pytest.raises(BattleSetupError, match="below 2\\*\\*53"):  # JSON cannot hold it exactly: refuse up front
        run_battle(_request(tmp_path, seed=2**53))
    assert not (tmp_path / "battles.db").exists()


def test_docker_down_before_the_battle_is_refused_and_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    events: list[Event] = []
    with pytest.raises(EnvironmentProblem, match=r"(?i)docker") as refused:
        run_battle(_request(tmp_path, sandbox="docker", red=False), events.append)
    assert "sandbox doctor" in str(refused.value) and "\n" not in str(refused.value)
    assert events == [] and not (tmp_path / "battles.db").exists()


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("red_budget_s", float("nan"), "red budget must be a finite"),
    ("red_budget_s", float("inf"), "red budget must be a finite"),
    ("purple_timeout_s", -1.0, "purple timeout must be a finite"),
    ("battle_id", "x" * 129, "bad battle id"),
    ("battle_id", "a/b", "bad battle id"),
])
def test_bad_inputs_are_refused_before_anything_runs(tmp_path: Path, field: str, value: object, needle: str) -> None:
    events: list[Event] = []
    with pytest.raises(BattleSetupError, match=needle):
        run_battle(_request(tmp_path, **{field: value}), events.append)
    assert events == [] and not tmp_path.joinpath("battles.db").exists()


def test_docker_down_during_the_battle_is_a_recorded_failure_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    events: list[Event] = []
    request = _request(tmp_path, sandbox="docker", red=False)  # as if Docker died after the pre-flight
    outcome = record_battle(tmp_path, request.battle_id, play_battle(request, load_task("rate-limiter"), events.append),
                            events.append)
    assert outcome.failed and outcome.result.to_json()["failed_stage"] == "sandbox"
    assert "docker" in str(outcome.result.to_json()["reason"]).lower()
    assert outcome.sequence is not None
    assert any(isinstance(e, BattleFailed) and e.stage == "sandbox" for e in events)
    assert isinstance(events[-1], BattleFinished) and events[-1].status == "failed"


@pytest.mark.slow
@pytest.mark.docker
def test_same_inputs_and_seed_give_byte_identical_results(tmp_path: Path) -> None:
    events: list[Event] = []
    first = run_battle(_request(tmp_path / "a"), events.append)
    second = run_battle(_request(tmp_path / "b"))
    assert first.result.to_json()["status"] == "scored"
    assert result_json(first.result.to_json()) == result_json(second.result.to_json())
    stages = [e.stage for e in events if isinstance(e, StageStarted)]
    assert stages == ["purple", "sandbox", "red", "scoring", "ledger"]
    components = [e.name for e in events if isinstance(e, ScoreComponent)]
    assert {"rationale", "architecture", "testing", "logic"} <= set(components)
    assert any(isinstance(e, LedgerAppended) and e.sequence == first.sequence for e in events)


def test_a_recorded_battle_id_is_never_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logomesh.battle.request import free_battle_id

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    request = _request(tmp_path, sandbox="docker", red=False)
    record_battle(tmp_path, request.battle_id, failed_played(request, "engine", "recorded earlier"))
    with pytest.raises(BattleSetupError, match="already in the ledger"):
        run_battle(_request(tmp_path, sandbox="docker", red=False))
    assert free_battle_id(tmp_path, "rl-det") == "rl-det-2"
    assert free_battle_id(tmp_path, "other") == "other"
