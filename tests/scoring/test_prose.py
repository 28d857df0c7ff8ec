"""Prose cannot buy R: the task's own text, inserted in any form a string or comment can take, barely moves R."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from tiers import sampled

from logomesh.scoring.config import DEFAULT_CONFIG
from logomesh.scoring.minilm import MiniLM
from logomesh.scoring.prose import code_text
from logomesh.scoring.rationale import intent_text, rationale_score
from logomesh.tasks import TaskSpec, all_tasks

TOLERANCE = 0.02  # the bound on what inserted prose may move R


def _fstring(text: str) -> str:
    return "f" + repr(text.replace("{", "{{").replace("}", "}}"))


def _docstring_inside(source: str, text: str) -> str:
    """``text`` as the docstring of the first ``def`` or ``class`` (indented like the line after it)."""
    lines = source.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "class ")))
    body = lines[first + 1]
    indent = body[: len(body) - len(body.lstrip())]
    return "".join([*lines[: first + 1], f"{indent}{text!r}\n", *lines[first + 1:]])


def _call_arguments(source: str, text: str) -> str:
    return source + f"\nprint({text!r}, sep={text!r})\n"


def _concatenated(text: str) -> str:
    words = text.split()
    return "SPEC = (\n" + "".join(f"    {' '.join(words[i:i + 6]) + ' '!r}\n" for i in range(0, len(words), 6)) + ")\n"


# Each form takes the source and the task text and returns the source with the text inserted.
FORMS: dict[str, Callable[[str, str], str]] = {
    "module docstring": lambda src, text: f'"""{text.replace(chr(92), "").replace(chr(34) * 3, "")}"""\n{src}',
    "string bound to a name": lambda src, text: f"{src}\nSPEC = {text!r}\n",
    "list of strings": lambda src, text: f"{src}\nNOTES = {text.splitlines()!r}\n",
    "dict of strings": lambda src, text: f"{src}\nMETA = { {'title': text.splitlines()[0], 'text': text}!r}\n",
    "f-string": lambda src, text: f"{src}\nBANNER = {_fstring(text)}\n",
    "bytes": lambda src, text: f"{src}\nRAW = {text.encode()!r}\n",
    "implicit concatenation": lambda src, text: f"{src}\n{_concatenated(text)}",
    "comments": lambda src, text: src + "\n" + "".join(f"# {line}\n" for line in text.splitlines()),
    "docstring of the first def or class": lambda src, text: _docstring_inside(src, text),
    "unterminated string in broken source": lambda src, text: f"{src}\nSPEC = \"{' '.join(text.split())}\n",
    "open triple-quoted string in broken source": lambda src, text: f"{src}\nSPEC = '''{text}\n",
}

TASKS = all_tasks()
CASES = [(task, name) for task in TASKS for name in ("good", "off-intent") if name in task.submission_names()]


CASE_IDS = [f"{t.id}/{n}" for t, n in CASES]


@pytest.mark.parametrize(("task", "name"), sampled(CASES, CASE_IDS, several=True,
                                                   keep={"rate-limiter/good", "email-validator/off-intent"}))
def test_inserting_the_task_text_moves_r_by_at_most_the_tolerance(model: MiniLM, task: TaskSpec, name: str) -> None:
    source = task.labelled_submission(name).submission.source
    text = intent_text(task)
    plain = rationale_score(task, source, DEFAULT_CONFIG).cosine
    moved = {}
    for form, insert in FORMS.items():
        pasted = insert(source, text)
        moved[form] = rationale_score(task, pasted, DEFAULT_CONFIG).cosine - plain
    everything = source
    for form, insert in FORMS.items():
        if "broken" not in form:
            everything = insert(everything, text)
    moved["all valid forms at once"] = rationale_score(task, everything, DEFAULT_CONFIG).cosine - plain
    too_far = {form: round(delta, 4) for form, delta in moved.items() if abs(delta) > TOLERANCE}
    assert not too_far, too_far


def test_no_word_of_the_inserted_text_reaches_the_embedded_code() -> None:
    """Every form leaves only code tokens: the text's own words never appear (the test is the tokens, not R)."""
    source = "class Ledger:\n    def post(self, amount):\n        return amount\n"
    text = "Zebra quokka\nnarwhal {axolotl} pangolin"
    forms = {**FORMS, "call arguments": _call_arguments}
    for form, insert in forms.items():
        kept = code_text(insert(source, text))
        assert not any(word in kept for word in ("Zebra", "quokka", "narwhal", "axolotl", "pangolin")), (form, kept)
        assert "def post ( self , amount ) : return amount" in kept, form


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_a_missing_colon_moves_r_by_at_most_the_tolerance(model: MiniLM, task: TaskSpec) -> None:
    """Source that does not parse is lexed, not embedded with its prose: one missing colon is one token."""
    source = task.labelled_submission("good").submission.source
    broken = re.sub(r"^(\s*(?:def|class) .*):[ \t]*$", r"\1", source, count=1, flags=re.MULTILINE)
    with pytest.raises(SyntaxError):
        compile(broken, "solution.py", "exec")
    plain = rationale_score(task, source, DEFAULT_CONFIG).cosine
    assert abs(rationale_score(task, broken, DEFAULT_CONFIG).cosine - plain) <= TOLERANCE


def test_broken_source_keeps_its_code_after_the_error() -> None:
    source = "def f(:\n    return 1\n  bad indent = 'prose words'\nclass After:\n    pass\n"
    assert code_text(source) == "def f ( : return 1 bad indent = class After : pass"


def test_source_made_only_of_prose_embeds_no_prose() -> None:
    assert code_text('"""All prose."""\n# more prose\n') == ""
