from __future__ import annotations

import json

import pytest

from logomesh.submission import Submission, SubmissionError

GOOD = {"sourceCode": "def f():\n    return 1\n", "testCode": "", "rationale": "returns one"}


def test_plain_json_is_parsed_and_raw_bytes_kept() -> None:
    text = json.dumps(GOOD)
    sub = Submission.from_text(text)
    assert sub.source == GOOD["sourceCode"]
    assert sub.raw == text.encode()


def test_fenced_json_is_parsed() -> None:
    sub = Submission.from_text("```json\n" + json.dumps(GOOD) + "\n```")
    assert sub.rationale == "returns one"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({"sourceCode": "x"}), "lacks field(s): testCode, rationale"),
        (json.dumps({**GOOD, "testCode": 3}), "'testCode' is not a string"),
        (json.dumps({**GOOD, "sourceCode": "  "}), "'sourceCode' is empty"),
    ],
)
def test_invalid_submissions_name_the_problem(payload: str, message: str) -> None:
    with pytest.raises(SubmissionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Submission.from_text(payload)


def test_round_trip_to_json() -> None:
    sub = Submission.from_mapping(GOOD)
    assert sub.to_json() == GOOD
