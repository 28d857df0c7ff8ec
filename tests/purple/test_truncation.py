"""Truncation on the record: the model endpoint's ``finish_reason``, from the LLM purple agent to the ledger.

The agent reads ``finish_reason`` (and its absence) and reports it in the artifact's ``logomesh_llm``
metadata; the battle reads it into ``Submission.finish``; the result and the signed ledger entry carry
``purple_finish`` (``truncated`` true for ``"length"``); the progress log and the console say it. A cut
answer is judged as the code it is. Agents that report nothing (mocks) leave results exactly as before.
A stand-in endpoint serves the protocol cases; the real packaged model serves the real ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from logomesh.battle.request import BattleRequest
from logomesh.battle.result import BattleResult
from logomesh.battle.spine import run_battle
from logomesh.events import Event, PurpleFinishReported, PurpleResponded
from logomesh.purple.a2a_parse import finish_of
from logomesh.purple.client import ExchangeSettings, PurpleTaskFailed, request_submission
from logomesh.purple.llm import LlmSettings, llm_app_factory
from logomesh.purple.model_server import finish_reason
from logomesh.purple.server import RunningServer, start_in_thread
from logomesh.submission import Finish
from logomesh.tasks import TaskSpec

ABSENT = object()  # the endpoint's reply has no finish_reason key at all
MODULE = "def add(a, b):\n    return a + b\n"
CUT = "```python\n" + MODULE + "\n# Test"  # cut inside its fence: the finished statements are the module


@dataclass
class Endpoint:
    """A chat-completions stand-in whose replies (text, finish_reason) the test chooses, in order."""

    replies: list[tuple[str, object]] = field(default_factory=lambda: [("```python\n" + MODULE + "```", "stop")])
    asked: int = 0

    def app(self, url: str) -> Starlette:
        async def completions(request: Request) -> Response:
            await request.json()
            text, reason = self.replies[min(self.asked, len(self.replies) - 1)]
            self.asked += 1
            choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}}
            if reason is not ABSENT:
                choice["finish_reason"] = reason
            return JSONResponse({"id": "x", "object": "chat.completion", "choices": [choice]})

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture
def endpoint() -> Iterator[tuple[Endpoint, str]]:
    stand_in = Endpoint()
    with start_in_thread(stand_in.app) as server:
        yield stand_in, server.url + "v1"


def _agent(base_url: str, max_tokens: int | None = None) -> RunningServer:
    """The LLM purple agent; it waits on the model as long as the battles here wait on it (``purple_timeout_s``):
    on a loaded 2-core machine the packaged model's 1,024 tokens took longer than the agent's default 300 s."""
    return start_in_thread(llm_app_factory(LlmSettings(base_url, "stand-in", None, timeout_s=900.0,
                                                       max_tokens=max_tokens, response_format="fenced")))


def _report(response: bytes) -> dict[str, Any]:
    """The agent's ``logomesh_llm`` report in the artifact of a non-streamed A2A answer."""
    result = json.loads(response)["result"]
    task = result.get("task", result)
    report: dict[str, Any] = task["artifacts"][0]["metadata"]["logomesh_llm"]
    return report


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
@pytest.mark.parametrize(("reason", "kept", "truncated"),
                         [("length", "length", True), ("stop", "stop", False), (ABSENT, None, None),
                          (None, None, None), (7, None, None)])
def test_the_agent_reads_finish_reason_and_the_battle_gets_it_on_the_submission(
        endpoint: tuple[Endpoint, str], adder: TaskSpec, protocol: str, reason: object, kept: str | None,
        truncated: bool | None) -> None:
    stand_in, base_url = endpoint
    stand_in.replies = [(CUT if reason == "length" else "```python\n" + MODULE + "```", reason)]
    with _agent(base_url) as purple:
        exchange = request_submission(purple.url, adder, "trunc-1", ExchangeSettings(protocol=protocol))
    assert exchange.submission.finish == Finish(kept)
    assert exchange.submission.finish.truncated is truncated
    report = _report(exchange.response_bytes)
    assert (report["finish_reason"], report["truncated"], report["finish_reasons"]) == (kept, truncated, [kept])
    assert "def add(a, b)" in exchange.submission.source  # a cut answer is still the code it holds


def test_the_finish_is_that_of_the_reply_the_code_came_from(endpoint: tuple[Endpoint, str],
                                                            adder: TaskSpec) -> None:
    """Cut before any code, then repaired in full: the submission is the repair's, and it was not cut."""
    stand_in, base_url = endpoint
    stand_in.replies = [("```python\ndef add(a", "length"), ("```python\n" + MODULE + "```", "stop")]
    with _agent(base_url) as purple:
        exchange = request_submission(purple.url, adder, "trunc-2")
    assert exchange.submission.finish == Finish("stop")
    report = _report(exchange.response_bytes)
    assert (report["repaired"], report["finish_reasons"], report["truncated"]) == (True, ["length", "stop"], False)


def test_an_answer_cut_before_any_code_fails_saying_it_was_cut(endpoint: tuple[Endpoint, str],
                                                               adder: TaskSpec) -> None:
    stand_in, base_url = endpoint
    stand_in.replies = [("Sure! Here is", "length")]
    with _agent(base_url) as purple, pytest.raises(PurpleTaskFailed, match="cut at the token limit"):
        request_submission(purple.url, adder, "trunc-3")


def test_an_agent_that_reports_nothing_gives_a_submission_with_no_finish(mock_server: RunningServer,
                                                                         adder: TaskSpec) -> None:
    exchange = request_submission(mock_server.url, adder, "adder:good")
    assert exchange.submission.finish is None


@pytest.mark.docker
@pytest.mark.slow  # a whole battle, about 25 s with the model's first load: the full tier's
def test_a_mock_battle_records_no_finish_and_emits_no_finish_event(tmp_path: Path) -> None:
    events: list[Event] = []
    outcome = run_battle(BattleRequest("fib-recursive", "mock-no-finish", 1, tmp_path, mock_variant="good",
                                       red=False), events.append)
    assert outcome.result.finish is None and "purple_finish" not in outcome.result.to_json()
    assert not any(isinstance(e, PurpleFinishReported) for e in events)


@pytest.mark.parametrize(("metadata", "finish"), [
    ({"logomesh_llm": {"finish_reason": "length"}}, Finish("length")),
    ({"logomesh_llm": {"finish_reason": None}}, Finish(None)),
    ({"logomesh_llm": {"finish_reason": ["length"]}}, Finish(None)),
    ({"logomesh_llm": {"finish_reason": " length\n" + "x" * 100}}, Finish("length " + "x" * 33)),
    ({"logomesh_llm": {"form": "fenced"}}, None),  # an older agent: no report of how the answer ended
    ({"logomesh_llm": "length"}, None),
    ({"other": {"finish_reason": "length"}}, None),
    (None, None),
    ([1], None),
])
def test_the_metadata_is_read_tolerantly(metadata: object, finish: Finish | None) -> None:
    assert finish_of(metadata) == finish


def test_the_model_server_says_length_only_when_generation_hit_max_tokens() -> None:
    end = {2}
    assert finish_reason([5, 6, 7], 3, end) == "length"
    assert finish_reason([5, 6, 2], 3, end) == "stop"  # the model ended its turn on the last allowed token
    assert finish_reason([5, 2], 3, end) == "stop"
    assert finish_reason([5, 6], 3, end) == "stop"  # stopped early for another reason


def test_the_result_keeps_the_finish_and_leaves_results_without_one_unchanged() -> None:
    bare = {"battle_id": "b", "task_id": "t", "status": "scored", "cis_score": 0.5, "seed": 1, "purple_agent": "p"}
    assert BattleResult.from_json(bare).finish is None
    assert BattleResult.from_json(bare).to_json() == bare
    for finish, truncated in ((Finish("length"), True), (Finish("stop"), False), (Finish(None), None)):
        stored = {**bare, "purple_finish": finish.to_json()}
        parsed = BattleResult.from_json(stored)
        assert parsed.finish == finish and parsed.to_json() == stored
        assert parsed.truncated is (truncated is True)
        assert "purple_finish" not in parsed.scores.to_json()


def test_the_console_and_the_progress_log_say_the_answer_was_cut() -> None:
    from logomesh.progress import describe
    from tui.ledger_source import EntryDetail, LedgerRow
    from tui.widgets.ledger.entry_view import render_summary

    cut = PurpleFinishReported("b", Finish("length"))
    said = "TRUNCATED: the model's answer was cut at the token limit (finish_reason length)"
    assert said in str(describe(cut))
    row = LedgerRow(1, "2026-11-28 06:00:00", "b", "adder", "http://x/", 0.5, "scored")
    for finish, said in ((Finish("length"), "TRUNCATED"), (Finish("stop"), "finish_reason stop"),
                         (Finish(None), "gave no finish_reason")):
        result = {"status": "scored", "cis_score": 0.5, "purple_finish": finish.to_json()}
        text = render_summary(EntryDetail(row, {}, "sig", "inc", result=BattleResult.from_json(result))).plain
        assert f"answer   {finish.note}\n" in text and said in text
    text = render_summary(EntryDetail(row, {}, "sig", "inc", result=BattleResult.from_json(
        {"status": "scored", "cis_score": 0.5}))).plain
    assert "answer   " not in text


def _battle(tmp_path: Path, url: str, battle_id: str, events: list[Event] | None = None) -> BattleResult:
    from ledger import Ledger

    sink = events.append if events is not None else (lambda event: None)
    outcome = run_battle(BattleRequest("adder", battle_id, 3, tmp_path, purple_url=url, red=False,
                                       purple_timeout_s=900.0), sink)
    with Ledger.open(tmp_path) as led:
        stored = led.get(battle_id)
    assert stored is not None and stored.result == outcome.result.to_json()  # the signed entry says the same
    return outcome.result


@pytest.mark.docker
def test_a_cut_answer_is_scored_as_its_code_and_flagged_in_result_ledger_and_replay(
        endpoint: tuple[Endpoint, str], task_lib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logomesh.battle.replay import replay_battle

    monkeypatch.setenv("LOGOMESH_TASKS", str(task_lib))
    stand_in, base_url = endpoint
    stand_in.replies = [(CUT, "length")]
    events: list[Event] = []
    with _agent(base_url) as purple:
        result = _battle(tmp_path, purple.url, "trunc-battle", events)
    assert result.status == "scored" and result.scores.hidden is not None and result.scores.hidden.passed == 1
    assert result.truncated and result.to_json()["purple_finish"] == {"finish_reason": "length", "truncated": True}
    kinds = [type(e) for e in events]
    assert kinds[kinds.index(PurpleResponded) + 1] is PurpleFinishReported
    assert [e.finish for e in events if isinstance(e, PurpleFinishReported)] == [Finish("length")]
    replayed = replay_battle(tmp_path, "trunc-battle")
    assert replayed.matches and replayed.replayed.truncated


@pytest.mark.docker
def test_a_cut_answer_that_is_no_module_fails_and_is_still_flagged(
        endpoint: tuple[Endpoint, str], task_lib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGOMESH_TASKS", str(task_lib))
    stand_in, base_url = endpoint
    stand_in.replies = [("```python\nimport math\n\ndef ad", "length")]
    with _agent(base_url) as purple:
        result = _battle(tmp_path, purple.url, "trunc-failed")
    assert result.failed and result.ending.stage == "purple"
    assert result.truncated


# ---- the real model: the packaged SmolLM2-135M behind our model server ----

REAL_CUT_TOKENS = 24  # the model's answer to the adder task is ~150 tokens; 24 cut it after `return a + b`


@pytest.fixture(scope="module")
def real_model_url() -> Iterator[str]:
    from logomesh.purple.model_server import ModelUnavailable, app, load_model, missing_libraries, model_path

    try:
        model_path()
    except ModelUnavailable as exc:
        pytest.skip(f"real model unavailable: {exc}")
    if missing := missing_libraries():
        pytest.skip(f"real model unavailable: missing {', '.join(missing)}")
    loaded = load_model(threads=1)  # the full tier's workers share the cores (model_server --threads says why)
    with start_in_thread(lambda url: app(loaded)) as server:
        yield server.url + "v1"


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_the_real_model_cut_at_max_tokens_gives_a_truncated_result_and_entry(
        real_model_url: str, task_lib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGOMESH_TASKS", str(task_lib))
    with _agent(real_model_url, max_tokens=REAL_CUT_TOKENS) as purple:
        result = _battle(tmp_path, purple.url, "real-cut")
    assert result.finish == Finish("length") and result.truncated
    assert result.status == "scored", result.ending.reason  # judged as the code it is


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_the_real_models_ordinary_answer_is_not_truncated(real_model_url: str, task_lib: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGOMESH_TASKS", str(task_lib))
    with _agent(real_model_url, max_tokens=1024) as purple:
        result = _battle(tmp_path, purple.url, "real-whole")
    assert result.finish == Finish("stop") and not result.truncated
    assert result.to_json()["purple_finish"] == {"finish_reason": "stop", "truncated": False}
