"""What a purple agent returns: source, tests and rationale, plus the raw bytes and how the model's answer ended."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_SUBMISSION_BYTES = 2 * 1024 * 1024
"""The most a submission may weigh: a purple agent's whole answer, or a file given to ``score``."""

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*?)\n\s*```\s*$", re.DOTALL)


FINISH_REASON_CHARS = 40
"""The most of a reported ``finish_reason`` kept: the values are short words ("stop", "length")."""


class SubmissionError(ValueError):
    """The purple agent's answer is not a valid submission; the message says why."""


@dataclass(frozen=True)
class Finish:
    """How the model's generation of the answer ended, as the purple agent reported it.

    ``reason`` is the model endpoint's ``finish_reason`` for the reply the code was read from (``"stop"``,
    ``"length"``, ...), or ``None`` where the endpoint gave none. An answer cut at the token limit
    (``"length"``) is judged as the code it is and flagged ``truncated``; where the endpoint said nothing,
    whether it was cut is unknown (``None``), never "not cut". A submission from an agent that reports
    nothing of the kind (a mock, another agent) carries no ``Finish`` at all.
    """

    reason: str | None

    @property
    def truncated(self) -> bool | None:
        """``True``: generation stopped at the token limit; ``False``: it stopped otherwise; ``None``: not said."""
        return None if self.reason is None else self.reason == "length"

    @property
    def note(self) -> str:
        """One line for the console and the progress log."""
        if self.reason is None:
            return "the model endpoint gave no finish_reason: whether the answer was cut is unknown"
        if self.truncated:
            return f"TRUNCATED: the model's answer was cut at the token limit (finish_reason {self.reason})"
        return f"the model's answer ended with finish_reason {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"finish_reason": self.reason, "truncated": self.truncated}

    @classmethod
    def from_json(cls, value: object) -> Finish | None:
        """Parse a recorded ``{"finish_reason": ...}`` (or a bare reason) tolerantly; ``None`` if nothing is there."""
        if isinstance(value, dict):
            if "finish_reason" not in value:
                return None
            value = value["finish_reason"]
        return cls(reason(value))


def reason(value: object) -> str | None:
    """A reported ``finish_reason`` as kept: a short one-line string, or ``None`` for anything else."""
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:FINISH_REASON_CHARS]


@dataclass(frozen=True)
class Submission:
    """A purple agent's answer in the original LogoMesh format.

    ``raw`` holds the exact bytes the answer arrived in, for the ledger's input
    entanglement; it is empty for submissions built in memory. ``finish`` is how the
    model's answer ended where the agent reported it (the LLM purple agent does), read
    from those bytes: ``None`` where it reported nothing.
    """

    source: str
    tests: str
    rationale: str
    raw: bytes = field(default=b"", repr=False)
    finish: Finish | None = None

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
