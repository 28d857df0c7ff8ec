"""The bounded LLM review against a local OpenAI-compatible stand-in, and the swing bound as a property."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logomesh.scoring import llm_review
from logomesh.scoring.cis import combine
from logomesh.scoring.config import DEFAULT_CONFIG, LlmConfig
from logomesh.scoring.minilm import MiniLM
from logomesh.tasks import TaskSpec

from .runs import measured, suite

ANCHORS = {"rationale": 0.6, "architecture": 0.8, "logic": 0.95}


class _ChatHandler(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions with whatever ``reply`` the test set; records each request."""

    reply: ClassVar[dict[str, Any]] = {"status": 200, "content": "{}"}
    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        status = int(self.reply["status"])
        if status != 200:
            payload = b'{"error": "boom"}'
        else:
            message = {"role": "assistant", "content": self.reply["content"]}
            payload = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def ask(endpoint: str, content: str, status: int = 200) -> llm_review.Review:
    _ChatHandler.reply = {"status": status, "content": content}
    llm = LlmConfig(base_url=endpoint, model="stand-in", timeout_s=5.0, seed=7)
    return llm_review.review(llm, "the task", "def f(): pass", ANCHORS, DEFAULT_CONFIG.llm_bound)


def test_no_llm_configured_means_zero_adjustments_and_no_call() -> None:
    review = llm_review.review(None, "task", "code", ANCHORS, 0.1)
    assert review.adjustments == {"rationale": 0.0, "architecture": 0.0, "logic": 0.0}
    assert review.status == "disabled"


def test_reply_within_the_bound_is_applied_and_recorded(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGOMESH_LLM_API_KEY", "sk-secret-test")
    _ChatHandler.requests.clear()
    content = '{"rationale": 0.1, "architecture": -0.04, "logic": -0.1, "testing": 0.5}'
    review = ask(endpoint, content)
    assert review.status == "ok"
    assert review.adjustments == {"rationale": 0.1, "architecture": -0.04, "logic": -0.1}
    assert review.requested["rationale"] == 0.1
    assert len(review.reply_sha256) == 64
    sent = _ChatHandler.requests[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["temperature"] == 0.0 and sent["body"]["seed"] == 7
    assert sent["auth"] == "Bearer sk-secret-test"
    recorded = json.dumps(review.to_json(4))
    assert "sk-secret-test" not in recorded and "stand-in" in recorded
    adjusted = llm_review.apply(ANCHORS, review.adjustments, 0.1)
    assert adjusted == pytest.approx({"rationale": 0.7, "architecture": 0.76, "logic": 0.85})


@pytest.mark.parametrize(
    ("content", "status", "why"),
    [
        ("I think the code is fine.", 200, "malformed: reply is not JSON"),
        ('{"rationale": 0.05, "architecture": "high", "logic": 0}', 200, "malformed: reply field 'architecture'"),
        ('{"rationale": NaN, "architecture": 0, "logic": 0}', 200, "malformed: reply field 'rationale'"),
        # issue 22: a reply echoing the measured scores was clamped to +0.10 each and recorded ok
        ('{"rationale": 0.6, "architecture": 0.8, "logic": 0.95}', 200, "malformed: reply repeats the measured"),
        ('{"rationale": 0.9, "architecture": -0.04, "logic": -3}', 200,
         "malformed: reply field(s) rationale, logic outside the adjustment range ±0.1 (0.9, -3)"),
        ("{}", 500, "fallback: HTTPStatusError"),
    ],
)
def test_errors_and_malformed_replies_adjust_nothing(endpoint: str, content: str, status: int, why: str) -> None:
    review = ask(endpoint, content, status)
    assert review.adjustments == {"rationale": 0.0, "architecture": 0.0, "logic": 0.0}
    assert review.status.startswith(why)


def test_unreachable_endpoint_falls_back() -> None:
    llm = LlmConfig(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=2.0)
    review = llm_review.review(llm, "t", "c", ANCHORS, 0.1)
    assert review.status.startswith("fallback: ConnectError")
    assert review.adjustments == llm_review.zero()


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
wild = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(r=unit, a=unit, t=unit, l_=unit, dr=wild, da=wild, dl=wild, red=unit, intent=unit)
def test_the_llm_can_move_cis_by_at_most_0_075(r: float, a: float, t: float, l_: float, dr: float, da: float,
                                                dl: float, red: float, intent: float) -> None:
    anchors = {"rationale": r, "architecture": a, "logic": l_}
    adjusted = llm_review.apply(anchors, {"rationale": dr, "architecture": da, "logic": dl}, DEFAULT_CONFIG.llm_bound)
    for key, value in adjusted.items():
        assert 0.0 <= value <= 1.0
        assert abs(value - anchors[key]) <= DEFAULT_CONFIG.llm_bound + 1e-12
    before = combine({**anchors, "testing": t}, DEFAULT_CONFIG)
    after = combine({**adjusted, "testing": t}, DEFAULT_CONFIG)
    assert abs(after - before) <= 0.25 * 3 * 0.10 + 1e-12
    penalised = abs(after * (1 - red) * intent - before * (1 - red) * intent)  # penalties only shrink the swing
    assert penalised <= abs(after - before) + 1e-12


def test_score_submission_with_the_llm_moves_r_a_l_only_and_keeps_the_measured_r_for_intent(
    endpoint: str, model: MiniLM, rate_limiter: TaskSpec
) -> None:
    import dataclasses

    from logomesh.scoring import score_submission

    _ChatHandler.reply = {"status": 200, "content": '{"rationale": 0.1, "architecture": 0.05, "logic": -0.07}'}
    config = dataclasses.replace(DEFAULT_CONFIG, intent_threshold=0.99).with_llm(
        LlmConfig(base_url=endpoint, model="stand-in", timeout_s=5.0))
    good = rate_limiter.labelled_submission("good").submission
    card = score_submission(rate_limiter, good, measured(suite(8, 8)), config)
    plain = score_submission(rate_limiter, good, measured(suite(8, 8)))
    assert card.anchors == plain.anchors
    assert card.final["rationale"] == pytest.approx(min(1.0, card.anchors["rationale"] + 0.10))
    assert card.final["architecture"] == pytest.approx(card.anchors["architecture"] + 0.05)
    assert card.final["logic"] == pytest.approx(card.anchors["logic"] - 0.07)
    assert card.final["testing"] == plain.final["testing"]
    assert card.intent_penalty == pytest.approx(0.30 + 0.70 * card.rationale.score / 0.99)
    assert abs(card.cis_raw - plain.cis_raw) <= 0.075 + 1e-12
    fields = card.result_fields()
    assert fields["llm_adjustments"]["status"] == "ok" and fields["llm_adjustments"]["model"] == "stand-in"
    assert set(config.model_ids()) == {"embedding", "llm"}
    assert config.sha256() != DEFAULT_CONFIG.sha256()


@pytest.mark.slow
@pytest.mark.docker
def test_a_battle_asks_the_review_it_is_given(endpoint: str, tmp_path: Any) -> None:
    """Issue 22: the senior review was only reachable from `score`; battles (and green, campaigns) take it too."""
    from ledger import Ledger
    from logomesh.battle.request import BattleRequest
    from logomesh.battle.spine import run_battle

    _ChatHandler.reply = {"status": 200, "content": '{"rationale": 0.02, "architecture": 0, "logic": -0.03}'}
    llm = LlmConfig(base_url=endpoint, model="stand-in", timeout_s=5.0)
    outcome = run_battle(BattleRequest("fib-recursive", "fib-review", 0, tmp_path, mock_variant="good", red=False,
                                       review_llm=llm))
    adjustments = outcome.result.to_json()["llm_adjustments"]
    assert (adjustments["status"], adjustments["logic"], adjustments["model"]) == ("ok", -0.03, "stand-in")
    with Ledger.open(tmp_path) as led:
        stored = led.get("fib-review")
    assert stored is not None
    assert stored.attributes["scorer_config_sha256"] == DEFAULT_CONFIG.with_llm(llm).sha256()


def test_the_green_agent_takes_the_review_from_its_config() -> None:
    from logomesh.green.assessment import AssessmentError, parse_assessment

    base = {"participants": {"purple": "http://127.0.0.1:9009/"}, "config": {"task_id": "fib-recursive"}}
    assert parse_assessment([], [base]).review_llm is None
    config = {"task_id": "fib-recursive", "llm_base_url": "http://127.0.0.1:8089/v1", "llm_model": "m",
              "llm_timeout_s": 90}
    assessment = parse_assessment([], [{**base, "config": config}])
    assert assessment.review_llm == LlmConfig(base_url="http://127.0.0.1:8089/v1", model="m", timeout_s=90.0)
    with pytest.raises(AssessmentError, match="go together"):
        parse_assessment([], [{**base, "config": {"task_id": "fib-recursive", "llm_model": "m"}}])
