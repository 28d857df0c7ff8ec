"""Parsing the assessment request: defaults, both part kinds, and nothing but AssessmentError escapes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logomesh.green.assessment import Assessment, AssessmentError, parse_assessment

URL = "http://127.0.0.1:9009/"


def test_text_and_data_parts_give_the_same_assessment_with_defaults() -> None:
    request = {"participants": {"purple": URL}, "config": {"task_id": "rate-limiter"}}
    from_data = parse_assessment([], [request])
    from_text = parse_assessment([f"```json\n{json.dumps(request)}\n```"], [])
    assert from_data == from_text == Assessment(purple_url=URL, task_id="rate-limiter")


def test_whole_floats_from_data_parts_are_integers() -> None:
    request = {"participants": {"purple": URL}, "config": {"task_id": "rate-limiter", "seed": 42.0, "red": False,
                                                           "protocol": "0.3", "sandbox": "docker"}}
    parsed = parse_assessment([], [request])
    assert (parsed.seed, parsed.red, parsed.protocol, parsed.sandbox) == (42, False, "0.3", "docker")


@pytest.mark.parametrize(
    ("config", "reason"),
    [({"task_id": "rate-limiter", "red_budget_s": 0}, "red_budget_s"),
     ({"task_id": "rate-limiter", "sandbox": "vm"}, "config.sandbox"),
     ({"task_id": "rate-limiter", "protocol": "2.0"}, "config.protocol"),
     ({"task_id": "rate-limiter", "red": "yes"}, "config.red"),
     ({"task_id": "rate-limiter", "battle_id": ""}, "config.battle_id"),
     ({"task_id": "rate-limiter", "battle_id": "x" * 150}, "config.battle_id.*1-128"),  # the ledger's one rule
     ({"task_id": "rate-limiter", "battle_id": "a/b"}, "config.battle_id.*bad battle id"),
     ({"task_id": "rate-limiter", "red_budget_s": float("nan")}, "red_budget_s"),
     ({"task_id": 7}, "config.task_id")],
)
def test_bad_config_names_the_field(config: dict[str, Any], reason: str) -> None:
    with pytest.raises(AssessmentError, match=reason):
        parse_assessment([], [{"participants": {"purple": URL}, "config": config}])


@pytest.mark.parametrize(
    ("url", "reason"),
    [("ftp://x", "must start with http:// or https://"),
     ("localhost:19103", "has no scheme: write http://localhost:19103"),
     ("http://", "names no host"),
     ("http://127.0.0.1:99999/", "not a valid URL"),
     ("http://127.0.0.1:0/", "port 0"),
     ("http://a b/", "spaces"),
     ("", "is empty")],
)
def test_a_purple_url_is_checked_by_the_shared_rule(url: str, reason: str) -> None:
    with pytest.raises(AssessmentError, match=f"participants.purple.*{reason}"):
        parse_assessment([], [{"participants": {"purple": url}, "config": {"task_id": "rate-limiter"}}])


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.sampled_from(["rate-limiter", URL, "participants", "config", "purple", "task_id"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["participants", "config", "purple", "task_id", "seed", "red", "red_budget_s", "sandbox",
                         "protocol", "battle_id", "x"]), inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(data=_json, text=st.text(max_size=60))
def test_any_input_is_an_assessment_or_an_assessment_error(data: Any, text: str) -> None:
    try:
        parse_assessment([text, json.dumps(data)], [data])
    except AssessmentError as exc:
        assert str(exc)

_edge_numbers = st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e300, 2**70, -(2**70), 42.0, 1.5, -0.0])


@settings(max_examples=300, deadline=None)
@given(config=st.dictionaries(st.sampled_from(["seed", "red", "red_budget_s", "sandbox", "protocol", "battle_id"]),
                              _json | st.floats() | st.integers() | _edge_numbers, max_size=4))
def test_any_config_on_a_valid_request_is_parsed_or_refused_cleanly(config: dict[str, Any]) -> None:
    request = {"participants": {"purple": URL}, "config": {"task_id": "rate-limiter", **config}}
    try:
        parsed = parse_assessment([], [request])
    except AssessmentError:
        return
    assert isinstance(parsed.seed, int) and 0 < parsed.red_budget_s <= 3600
