"""The purple client against our mock (0.3 and 1.0), an a2a-sdk server, and hostile servers."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from hostile import cut_stream, flood, hang, hostile_server, respond

from logomesh.purple.a2a_request import context_id
from logomesh.purple.client import (
    ExchangeSettings,
    PurpleError,
    PurpleHTTPError,
    PurpleMalformed,
    PurpleRPCError,
    PurpleTimeout,
    PurpleTooLarge,
    PurpleUnreachable,
    PurpleUsageError,
    request_submission,
)
from logomesh.purple.server import RunningServer
from logomesh.tasks import TaskSpec


def _jsonrpc(result: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": "b", "result": result}).encode()


SUBMISSION = {"sourceCode": "def add(a, b):\n    return a + b\n", "testCode": "", "rationale": "sum"}


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
@pytest.mark.parametrize("stream", [False, True])
def test_mock_serves_the_canned_submission_under_both_protocols(
    mock_server: RunningServer, adder: TaskSpec, protocol: str, stream: bool
) -> None:
    settings = ExchangeSettings(protocol=protocol, stream=stream)
    exchange = request_submission(mock_server.url, adder, "adder:bad:run-1", settings)
    canned = adder.labelled_submission("bad").submission
    got = exchange.submission
    assert (got.source, got.tests, got.rationale) == (canned.source, canned.tests, canned.rationale)
    assert exchange.protocol == f"a2a-{protocol}"
    assert exchange.agent == "LogoMesh mock purple agent"
    sent = json.loads(exchange.request_bytes)
    assert sent["id"] == "adder:bad:run-1"
    assert sent["params"]["message"]["metadata"]["battle_id"] == "adder:bad:run-1"
    assert sent["params"]["message"]["contextId"] == context_id("adder:bad:run-1")
    assert "CODING TASK: Add two numbers" in json.dumps(sent)
    assert exchange.submission.raw == exchange.response_bytes


def test_card_decides_the_protocol_and_requests_are_deterministic(mock_server: RunningServer, adder: TaskSpec) -> None:
    first = request_submission(mock_server.url, adder, "adder:good")
    again = request_submission(mock_server.url, adder, "adder:good")
    assert first.protocol == "a2a-1.0"  # the card offers 1.0 and 0.3; 1.0 is preferred
    assert first.request_bytes == again.request_bytes
    assert b'"method":"SendMessage"' in first.request_bytes


def test_mock_response_file_wins_and_a_broken_file_is_a_typed_error(mock_server: RunningServer,
                                                                   adder: TaskSpec) -> None:
    assert request_submission(mock_server.url, adder, "from-file").submission.rationale == "served from a file"
    with pytest.raises(PurpleMalformed, match="no valid submission"):
        request_submission(mock_server.url, adder, "broken")


def test_unknown_battle_id_is_a_jsonrpc_error(mock_server: RunningServer, adder: TaskSpec) -> None:
    with pytest.raises(PurpleRPCError, match=r"-32602.*unknown battle_id 'adder:nope'"):
        request_submission(mock_server.url, adder, "adder:nope")
    with pytest.raises(PurpleRPCError, match="unknown battle_id"):
        request_submission(mock_server.url, adder, "no-such-task:good", ExchangeSettings(protocol="0.3"))


def test_unknown_protocol_is_a_usage_error(mock_server: RunningServer, adder: TaskSpec) -> None:
    with pytest.raises(PurpleUsageError, match=r"unknown A2A protocol '2\.0'"):
        request_submission(mock_server.url, adder, "adder:good", ExchangeSettings(protocol="2.0"))


def test_refused_connection(adder: TaskSpec) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(PurpleUnreachable, match="cannot connect"):
        request_submission(f"http://127.0.0.1:{port}/", adder, "b")


def test_hanging_server_hits_the_total_timeout(adder: TaskSpec) -> None:
    with hostile_server(hang) as url, pytest.raises(PurpleTimeout, match=r"within 1\.5 s"):
        request_submission(url, adder, "b", ExchangeSettings(total_timeout_s=1.5))  # the deadline's own message


def test_ten_megabytes_hit_the_size_cap(adder: TaskSpec) -> None:
    with hostile_server(flood(10 * 1024 * 1024)) as url, pytest.raises(PurpleTooLarge, match="2097152-byte cap"):
        request_submission(url, adder, "b")


def test_declared_oversize_is_refused_before_reading(adder: TaskSpec) -> None:
    body = _jsonrpc({"kind": "message", "parts": [{"kind": "text", "text": json.dumps(SUBMISSION)}]})
    with hostile_server(respond(200, body)) as url, pytest.raises(PurpleTooLarge):
        request_submission(url, adder, "b", ExchangeSettings(max_bytes=len(body) - 1))


def test_stream_closed_mid_way(adder: TaskSpec) -> None:
    with hostile_server(cut_stream) as url, pytest.raises(PurpleUnreachable, match="closed the connection"):
        request_submission(url, adder, "b", ExchangeSettings(stream=True))


@pytest.mark.parametrize(
    ("status", "body", "content_type", "error", "reason"),
    [
        (500, b"oops", "text/plain", PurpleHTTPError, "HTTP 500"),
        (200, b"<html>garbage</html>", "text/html", PurpleMalformed, "not JSON"),
        (200, b'{"jsonrpc": "2.0", "id": "b"}', "application/json", PurpleMalformed, "neither 'result' nor"),
        (200, b"\xff\xfe{}", "application/json", PurpleMalformed, "not UTF-8"),
        (200, _jsonrpc({"kind": "task", "id": "t", "status": {"state": "failed", "message": {
            "parts": [{"kind": "text", "text": "model overloaded"}]}}}), "application/json", PurpleError,
         r"ended \(failed\): model overloaded"),
        (200, _jsonrpc({"task": {"id": "t", "status": {"state": "TASK_STATE_REJECTED"}}}), "application/json",
         PurpleError, r"\(rejected\)"),
        (200, _jsonrpc({"kind": "message", "parts": [{"kind": "text", "text": '{"sourceCode": "x=1"}'}]}),
         "application/json", PurpleMalformed, "lacks field"),
    ],
)
def test_bad_answers_become_one_line_typed_errors(adder: TaskSpec, status: int, body: bytes, content_type: str,
                                                  error: type[PurpleError], reason: str) -> None:
    with hostile_server(respond(status, body, content_type)) as url, pytest.raises(error, match=reason) as caught:
        request_submission(url, adder, "b")
    assert "\n" not in str(caught.value)


def test_fenced_json_in_a_message_and_a_data_part_in_a_task(adder: TaskSpec) -> None:
    fenced = "Here you go:\n```json\n" + json.dumps(SUBMISSION) + "\n```\nEnjoy."
    message = _jsonrpc({"message": {"role": "ROLE_AGENT", "parts": [{"text": fenced}]}})
    with hostile_server(respond(200, message)) as url:
        assert request_submission(url, adder, "b").submission.rationale == "sum"
    task = _jsonrpc({"kind": "task", "id": "t", "status": {"state": "completed"},
                     "artifacts": [{"artifactId": "a", "parts": [{"kind": "data", "data": SUBMISSION}]}]})
    with hostile_server(respond(200, task)) as url:
        exchange = request_submission(url, adder, "b")
    assert exchange.submission.source == SUBMISSION["sourceCode"]
    assert exchange.response_bytes == task


def test_sse_answer_to_message_send(adder: TaskSpec) -> None:
    events = [
        {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "submitted"}},
        {"kind": "artifact-update", "taskId": "t", "artifact": {"artifactId": "a", "parts": [
            {"kind": "text", "text": json.dumps(SUBMISSION)[:20]}]}},
        {"kind": "artifact-update", "taskId": "t", "append": True, "artifact": {"artifactId": "a", "parts": [
            {"kind": "text", "text": json.dumps(SUBMISSION)[20:]}]}},
        {"kind": "status-update", "taskId": "t", "status": {"state": "completed"}, "final": True},
    ]
    body = b"".join(b"data: " + _jsonrpc(e) + b"\n\n" for e in events)
    with hostile_server(respond(200, body, "text/event-stream")) as url:
        assert request_submission(url, adder, "b").submission.rationale == "sum"


def test_card_on_another_origin_is_ignored_and_no_card_means_0_3(adder: TaskSpec, tmp_path: Path) -> None:
    seen: list[bytes] = []
    answer = _jsonrpc({"kind": "message", "parts": [{"kind": "text", "text": json.dumps(SUBMISSION)}]})

    def behave(conn: socket.socket, request: bytes) -> None:
        seen.append(request)
        respond(200, answer)(conn, request)

    with hostile_server(behave) as url:
        exchange = request_submission(url, adder, "b")
    assert exchange.protocol == "a2a-0.3"
    assert seen[-1].startswith(b"POST / ")
    assert b'"method":"message/send"' in seen[-1]


def test_a_task_answered_unfinished_is_polled_until_done(adder: TaskSpec) -> None:
    methods: list[str] = []
    working = _jsonrpc({"task": {"id": "t9", "status": {"state": "TASK_STATE_WORKING"}}})
    done = _jsonrpc({"task": {"id": "t9", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [
        {"artifactId": "a", "parts": [{"text": json.dumps(SUBMISSION)}]}]}})
    card = json.dumps({"name": "slow", "supportedInterfaces": [
        {"url": "http://elsewhere:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}).encode()

    def behave(conn: socket.socket, request: bytes) -> None:
        if request.startswith(b"GET"):
            respond(200, card)(conn, b"POST")
            return
        method = json.loads(request.partition(b"\r\n\r\n")[2])["method"]
        methods.append(method)
        respond(200, done if len(methods) >= 3 else working)(conn, request)

    with hostile_server(behave) as url:
        exchange = request_submission(url, adder, "b")
    assert methods == ["SendMessage", "GetTask", "GetTask"]
    assert exchange.protocol == "a2a-1.0" and exchange.agent == "slow"
    assert exchange.submission.rationale == "sum"


def test_stream_left_open_after_the_final_event_returns_at_once(adder: TaskSpec) -> None:
    """The client hangs up after the final event: the server, which would keep the stream open, sees it go."""
    final = _jsonrpc({"kind": "task", "id": "t", "status": {"state": "completed"}, "artifacts": [
        {"artifactId": "a", "parts": [{"kind": "text", "text": json.dumps(SUBMISSION)}]}]})
    hung_up: list[bool] = []

    def behave(conn: socket.socket, request: bytes) -> None:
        if request.startswith(b"GET"):
            respond(404, b"")(conn, request)
            return
        event = b"data: " + final + b"\n\n"
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.sendall(f"{len(event):x}\r\n".encode() + event + b"\r\n")
        conn.settimeout(60)  # a client waiting for the stream's end gets it after 60 s, and fails the test
        try:
            hung_up.append(conn.recv(1) == b"")
        except TimeoutError:
            hung_up.append(False)
        except OSError:  # reset by the client: hung up too
            hung_up.append(True)

    with hostile_server(behave) as url:
        exchange = request_submission(url, adder, "b", ExchangeSettings(stream=True, total_timeout_s=120))
        deadline = time.monotonic() + 120  # a hang guard: the server notes the hang-up as it happens
        while not hung_up and time.monotonic() < deadline:
            time.sleep(0.01)
    assert hung_up == [True], "the client waited for the stream to end instead of hanging up after the final event"
    assert exchange.submission.rationale == "sum"
    assert exchange.response_bytes == b"data: " + final + b"\n\n"
