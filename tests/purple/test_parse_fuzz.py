"""Property-based fuzzing of the response parser: whatever the bytes, only ``PurpleError`` escapes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logomesh.purple.a2a_parse import extract_submission, parse_reply
from logomesh.purple.exchange import PurpleError
from logomesh.submission import Submission

_json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
_json = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=20)

_keys = st.sampled_from(["kind", "task", "message", "statusUpdate", "artifactUpdate", "status", "state", "parts",
                         "artifacts", "artifact", "artifactId", "append", "text", "data", "id", "taskId", "result",
                         "error", "code", "sourceCode", "testCode", "rationale"])
_values = st.sampled_from(["task", "message", "status-update", "artifact-update", "text", "data", "completed",
                           "TASK_STATE_COMPLETED", "failed", "working", "input-required", "```json\n{}\n```"])
_a2a_leaf = _values | _json_leaf
_a2a = st.recursive(_a2a_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
                    max_leaves=30)


def _parse(body: bytes, sse: bool) -> Submission | None:
    try:
        return extract_submission(parse_reply(body, sse=sse), body)
    except PurpleError as exc:
        assert "\n" not in str(exc)
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=400), sse=st.booleans())
def test_random_bytes(body: bytes, sse: bool) -> None:
    _parse(body, sse)


@settings(max_examples=300, deadline=None)
@given(result=_a2a, sse=st.booleans())
def test_a2a_shaped_json(result: Any, sse: bool) -> None:
    envelope = json.dumps({"jsonrpc": "2.0", "id": "b", "result": result}).encode()
    _parse(b"data: " + envelope + b"\n\n" if sse else envelope, sse)


@settings(max_examples=200, deadline=None)
@given(data=_json, source=st.text(max_size=30), wrap=st.sampled_from(["plain", "fence", "prose"]))
def test_submission_like_text_parts(data: Any, source: str, wrap: str) -> None:
    obj = {"sourceCode": source, "testCode": "", "rationale": "r"} if isinstance(data, bool) else data
    text = json.dumps(obj)
    text = {"plain": text, "fence": f"```json\n{text}\n```", "prose": f"Sure! {text} Done."}[wrap]
    body = json.dumps({"jsonrpc": "2.0", "id": "b", "result": {"kind": "message", "parts": [
        {"kind": "text", "text": text}]}}).encode()
    submission = _parse(body, False)
    if isinstance(data, bool) and source.strip():
        assert submission is not None and submission.source == source


def test_deeply_nested_json_is_a_typed_error() -> None:
    assert _parse(b"[" * 100_000 + b"]" * 100_000, False) is None
    head = '{"jsonrpc":"2.0","id":"b","result":{"kind":"message","parts":[{"kind":"text","text":"'
    nested = head + "[" * 50_000 + '"}]}}'
    assert _parse(nested.encode(), False) is None
