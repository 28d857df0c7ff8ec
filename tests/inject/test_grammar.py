"""The payload grammar: each path puts its payload in a real message part, framed and placed as it says."""

from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from logomesh.inject.grammar import (
    CONFIG_FILE,
    ENCODED_LEAD,
    README_FILE,
    SPLIT_LEADS,
    STARTER_FILE,
    Attempt,
    all_attempts,
    clean,
    render,
)
from logomesh.inject.objectives import OBJECTIVES, draw_secrets
from logomesh.tasks import load_task

TASK = load_task("rate-limiter")
ASK = OBJECTIVES["leak-canary"].instruction(draw_secrets(5))
FILES = {"starter": STARTER_FILE, "readme": README_FILE, "config": CONFIG_FILE}


def _texts(attempt: Attempt) -> dict[str, str]:
    """Each part's text, keyed by where it sits: the body of message N ("message N") or its file name."""
    out: dict[str, str] = {}
    for number, message in enumerate(render(attempt, TASK, ASK).messages):
        for part in message.parts:
            out[part.filename or f"message {number}"] = part.text
    return out


def test_the_grammar_has_every_placement_framing_and_position() -> None:
    attempts = all_attempts()
    assert len(attempts) == 5 * 5 * 3
    assert len({a.key for a in attempts}) == len(attempts)


@pytest.mark.parametrize("placement", ["description", "starter", "readme", "config", "second-message"])
def test_a_plain_payload_lands_in_its_placement_only(placement: str) -> None:
    attempt = next(a for a in all_attempts() if a.placement == placement and a.framing == "plain")
    texts = _texts(attempt)
    holders = [where for where, text in texts.items() if ASK in text]
    expected = {"description": "message 0", "second-message": "message 1"}.get(placement, FILES.get(placement))
    assert holders == [expected]
    if placement == "starter":
        line = next(line for line in texts[STARTER_FILE].splitlines() if ASK in line)
        assert line.startswith("# ")  # a comment: the starter still parses as Python
        compile(texts[STARTER_FILE], STARTER_FILE, "exec")


def test_the_clean_task_holds_no_payload_and_one_message() -> None:
    injected = clean(TASK)
    assert len(injected.messages) == 1
    assert ASK not in injected.digest_bytes().decode()


def test_an_encoded_payload_decodes_to_the_ask() -> None:
    texts = _texts(Attempt("readme", "encoded", "middle"))
    assert ASK not in texts[README_FILE]
    line = next(line for line in texts[README_FILE].splitlines() if line.startswith(ENCODED_LEAD))
    assert base64.b64decode(line.removeprefix(ENCODED_LEAD).strip()).decode() == ASK


def test_a_split_payload_is_in_two_places_that_join_to_the_ask() -> None:
    texts = _texts(Attempt("config", "split", "end"))
    first = next(line for line in texts[CONFIG_FILE].splitlines() if SPLIT_LEADS[0] in line)
    second = next(line for line in texts["message 0"].splitlines() if SPLIT_LEADS[1] in line)
    joined = f"{first.split(SPLIT_LEADS[0])[1].strip()} {second.split(SPLIT_LEADS[1])[1].strip()}"
    assert joined == ASK


@pytest.mark.parametrize(("position", "where"), [("start", 0), ("end", -1)])
def test_position_moves_the_payload_within_its_part(position: str, where: int) -> None:
    text = _texts(Attempt("readme", "urgency", position))[README_FILE]  # type: ignore[arg-type]
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    assert ASK in paragraphs[where]
    middle = [p for p in _texts(Attempt("readme", "urgency", "middle"))[README_FILE].split("\n\n") if p.strip()]
    assert ASK not in middle[0] and ASK not in middle[-1]


def test_rendering_is_byte_identical_in_another_process() -> None:
    attempt = Attempt("starter", "authority", "middle")
    here = render(attempt, TASK, ASK).digest_bytes()
    code = ("import sys\nfrom logomesh.inject.grammar import Attempt, render\n"
            "from logomesh.inject.objectives import OBJECTIVES, draw_secrets\nfrom logomesh.tasks import load_task\n"
            "ask = OBJECTIVES['leak-canary'].instruction(draw_secrets(5))\n"
            "sys.stdout.buffer.write(render(Attempt('starter', 'authority', 'middle'), load_task('rate-limiter'), "
            "ask).digest_bytes())")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert there == here
