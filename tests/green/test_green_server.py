"""The green agent driven end to end by the a2a-sdk client, under protocol 0.3 and 1.0."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part
from a2a.types import Part, StreamResponse, TaskState
from green_sdk import sdk_send
from tiers import sampled

from ledger import Ledger
from logomesh.green.app import green_app_factory
from logomesh.green.executor import GreenSettings
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import RunningServer, start_in_thread


@pytest.fixture
def green(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    home = tmp_path / "home"
    with start_in_thread(green_app_factory(GreenSettings(home=home))) as server:
        yield server, home


@pytest.fixture(scope="module")
def purple() -> Iterator[RunningServer]:
    with start_in_thread(mock_app_factory(MockResponses())) as server:
        yield server


def _status_texts(events: list[StreamResponse]) -> list[str]:
    return [" ".join(get_text_parts(e.status_update.status.message.parts)) for e in events
            if e.HasField("status_update")]


def _final_state(events: list[StreamResponse]) -> int:
    last = events[-1]
    return last.status_update.status.state if last.HasField("status_update") else last.task.status.state


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
@pytest.mark.parametrize(
    ("request_part", "reason"),
    [(Part(text="please judge something"), "as JSON text or data"),
     (Part(text=json.dumps({"participants": {"purple": "ftp://x"}, "config": {"task_id": "rate-limiter"}})),
      "participants.purple"),
     (new_data_part({"participants": {"purple": "http://127.0.0.1:1/"}, "config": {"task_id": "no-such-task"}}),
      "unknown task 'no-such-task'"),
     (new_data_part({"participants": {"purple": "http://127.0.0.1:1/"},
                     "config": {"task_id": "rate-limiter", "seed": 1.5}}), "config.seed"),
     (new_data_part({"participants": {"purple": "http://127.0.0.1:1/"},
                     "config": {"task_id": "rate-limiter", "colour": "red"}}), "unknown config key")],
)
def test_malformed_assessment_is_rejected_with_a_reason(green: tuple[RunningServer, Path], protocol: str,
                                                       request_part: Part, reason: str) -> None:
    server, home = green
    events = sdk_send(server.url, protocol, [request_part])
    assert _final_state(events) == TaskState.TASK_STATE_REJECTED
    assert reason in " ".join(_status_texts(events))
    if (home / "battles.db").exists():
        with Ledger.open(home) as led:
            assert led.size() == 0


def _assessment(purple_url: str, battle_id: str, red: bool) -> dict[str, Any]:
    return {"participants": {"purple": purple_url},
            "config": {"task_id": "rate-limiter", "seed": 3, "battle_id": battle_id, "red": red, "red_budget_s": 2}}


def _result(events: list[StreamResponse]) -> tuple[dict[str, Any], str]:
    updates = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert len(updates) == 1 and updates[0].name == "assessment-result"
    (data,) = get_data_parts(updates[0].parts)
    (summary,) = get_text_parts(updates[0].parts)
    return data, summary


@pytest.mark.docker
@pytest.mark.parametrize(("protocol", "as_data"), sampled([("0.3", False), ("1.0", True)], ["0.3-False", "1.0-True"],
                                                          keep={"1.0-True"}, several=True))
def test_assessment_end_to_end(green: tuple[RunningServer, Path], purple: RunningServer, protocol: str,
                               as_data: bool) -> None:
    server, home = green
    battle_id = f"rate-limiter:good:green-{protocol}"
    request = _assessment(purple.url, battle_id, red=True)
    part = new_data_part(request) if as_data else Part(text=json.dumps(request))
    events = sdk_send(server.url, protocol, [part], timeout_s=300)
    assert _final_state(events) == TaskState.TASK_STATE_COMPLETED
    progress = _status_texts(events)
    assert "stage: sandbox" in progress and "stage: red" in progress
    assert any(t.startswith("hidden test ") and t.endswith(": passed") for t in progress)
    result, summary = _result(events)
    assert result["status"] == "scored" and result["battle_id"] == battle_id
    assert 0.0 < result["cis_score"] <= 1.0
    assert summary.startswith(f"battle {battle_id} on task rate-limiter: CIS {result['cis_score']:.3f} (scored)")
    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    assert stored is not None
    assert stored.result["cis_score"] == pytest.approx(result["cis_score"])
    assert battle_id.encode() in stored.inputs["purple_request"]


@pytest.mark.docker
def test_concurrent_assessments_keep_their_own_streams(green: tuple[RunningServer, Path],
                                                       purple: RunningServer) -> None:
    server, home = green
    outcomes: dict[str, list[StreamResponse]] = {}

    def assess(battle_id: str, protocol: str) -> None:
        request = _assessment(purple.url, battle_id, red=False)
        outcomes[battle_id] = sdk_send(server.url, protocol, [new_data_part(request)], timeout_s=300)

    threads = [threading.Thread(target=assess, args=(battle_id, protocol))
               for battle_id, protocol in (("rate-limiter:good:concurrent", "1.0"),
                                           ("rate-limiter:fixed-window:concurrent-2", "0.3"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert set(outcomes) == {"rate-limiter:good:concurrent", "rate-limiter:fixed-window:concurrent-2"}
    for battle_id, events in outcomes.items():
        result, _ = _result(events)
        assert result["battle_id"] == battle_id
        assert result["status"] == "scored", result.get("reason")
        texts, other = _status_texts(events), next(b for b in outcomes if b != battle_id)
        assert next(t for t in texts if ": task " in t).startswith(f"battle {battle_id}: task ")
        assert not [t for t in texts if other in t]  # not a line of the other battle's stream
    with Ledger.open(home) as led:
        assert {e.battle_id for e in led.entries()} == set(outcomes)


def test_failed_battle_still_completes_with_its_recorded_reason(green: tuple[RunningServer, Path],
                                                                purple: RunningServer) -> None:
    server, home = green
    request = _assessment(purple.url, "rate-limiter:no-such-variant", red=False)
    events = sdk_send(server.url, "1.0", [new_data_part(request)], timeout_s=120)
    assert _final_state(events) == TaskState.TASK_STATE_COMPLETED
    result, summary = _result(events)
    assert result["status"] == "failed" and result["failed_stage"] == "purple"
    assert "unknown battle_id" in result["reason"]
    assert "(failed)" in summary
    with Ledger.open(home) as led:
        stored = led.get("rate-limiter:no-such-variant")
    assert stored is not None and stored.result["status"] == "failed"


def test_a_battle_id_already_recorded_is_rejected(green: tuple[RunningServer, Path], purple: RunningServer) -> None:
    server, _ = green
    request = _assessment(purple.url, "rate-limiter:missing:twice", red=False)
    first = sdk_send(server.url, "0.3", [new_data_part(request)], timeout_s=120)
    assert _final_state(first) == TaskState.TASK_STATE_COMPLETED
    again = sdk_send(server.url, "0.3", [new_data_part(request)], timeout_s=120)
    assert _final_state(again) == TaskState.TASK_STATE_REJECTED
    assert "already in the ledger" in " ".join(_status_texts(again))
