"""What a purple agent returns: source, tests and rationale, plus the raw bytes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_SUBMISSION_BYTES = 2 * 1024 * 1024
"""The most a submission may weigh: a purple agent's whole answer, or a file given to ``score``."""

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*?)\n\s*```\s*$", re.DOTALL)


class SubmissionError(ValueError):
    """The purple agent's answer is not a valid submission; the message says why."""


@dataclass(frozen=True)
class Submission:
    """A purple agent's answer in the original LogoMesh format.

    ``raw`` holds the exact bytes the answer arrived in, for the ledger's input
    entanglement; it is empty for submissions built in memory.
    """

    source: str
    tests: str
    rationale: str
    raw: bytes = field(default=b"", repr=False)

    def to_json(self) -> dict[str, str]:
        return {"sourceCode": self.source, "testCode": self.tests, "rationale": self.rationale}

    @classmethod
    def from_mapping(cls, data: Any, raw: bytes = b"") -> Submission:
        """Validate a decoded ``{"sourceCode", "testCode", "rationale"}`` object."""
        if not isinstance(data, dict):
            raise SubmissionError("submission is not a JSON object")
        missing = [k for k in ("sourceCode", "testCode", "rationale") if k not in data]
        if missing:
            raise SubmissionError(f"submission lacks field(s): {', '.join(missing)}")
        for key in ("sourceCode", "testCode", "rationale"):
            if not isinstance(data[key], str):
                raise SubmissionError(f"submission field {key!r} is not a string")
        if not data["sourceCode"].strip():
            raise SubmissionError("submission field 'sourceCode' is empty")
        return cls(data["sourceCode"], data["testCode"], data["rationale"], raw)

    @classmethod
    def from_text(cls, text: str, raw: bytes = b"") -> Submission:
        """Parse JSON text, with or without a Markdown ```json fence around it."""
        match = _FENCE.match(text)
        body = match.group("body") if match else text
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise SubmissionError(f"submission is not valid JSON: {json_error(exc)}") from None
        return cls.from_mapping(data, raw or text.encode("utf-8"))


def json_error(exc: json.JSONDecodeError) -> str:
    """Where and why JSON did not parse, once: some messages end in "at" already ("Invalid control character at")."""
    return f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"
