"""An answer without a module defining the entry point is a purple failure with its reason, not a score."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import Ledger
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import run_battle
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import RunningServer, start_in_thread
from logomesh.syntax import parse
from logomesh.tasks.module_check import defined_names, module_problem

ANSWERS = {
    "file-name": ({"sourceCode": "solution.py", "testCode": "test_solution.py", "rationale": "see the files"},
                  "the agent returned a file name ('solution.py') instead of a module defining `RateLimiter`"),
    "no-entry": ({"sourceCode": "class Limiter:\n    pass\n", "testCode": "", "rationale": "r"},
                 "the agent returned no module defining `RateLimiter`"),
    "unparsable": ({"sourceCode": "class RateLimiter\n    pass\n", "testCode": "", "rationale": "r"},
                   "the agent returned no module defining `RateLimiter`: the code does not parse (expected ':', "
                   "line 1)"),
}


@pytest.fixture(scope="module")
def answering(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp("answers")
    for name, (answer, _) in ANSWERS.items():
        (folder / f"rate-limiter:{name}.json").write_text(json.dumps(answer), encoding="utf-8")
    with start_in_thread(mock_app_factory(MockResponses(folder))) as server:
        yield server


@pytest.mark.parametrize("name", ["file-name", "no-entry", "unparsable"])
def test_no_module_is_recorded_as_a_purple_failure_with_the_reason(answering: RunningServer, tmp_path: Path,
                                                                  name: str) -> None:
    outcome = run_battle(BattleRequest("rate-limiter", f"rate-limiter:{name}", 0, tmp_path,
                                       purple_url=answering.url))
    result = outcome.result.to_json()
    assert (result["status"], result["failed_stage"]) == ("failed", "purple")
    assert result["reason"] == ANSWERS[name][1]
    assert "rationale_score" not in result or result["cis_score"] == 0.0
    with Ledger.open(tmp_path) as led:  # recorded all the same, with the answer's bytes
        stored = led.get(f"rate-limiter:{name}")
    assert stored is not None and stored.sequence == outcome.sequence
    assert ANSWERS[name][0]["sourceCode"][:10].encode() in stored.inputs["purple_response"]


def test_module_problem_reads_text_only() -> None:
    assert module_problem("def fib(n):\n    return n\n", "fib") is None
    assert module_problem("fib = lambda n: n\n", "fib") is None
    assert module_problem("try:\n    from x import fib\nexcept ImportError:\n    def fib(n): return n\n", "fib") is None
    assert module_problem("", "fib") == "the agent returned no code (an empty module; it must define `fib`)"
    assert module_problem("def fob(n):\n    return n\n", "fib") == "the agent returned no module defining `fib`"
    assert module_problem("def f(:\n", "fib") is not None
    # a real model's answer: the module importing itself defines nothing
    assert module_problem("from solution import fib\n", "fib") == "the agent returned no module defining `fib`"
    assert module_problem("from solution.fib import fib\n", "fib") is not None  # a real answer (HumanEval/27)
    assert module_problem("import solution.fib as fib\n", "fib") is not None
    assert module_problem("\0", "fib") is not None
    assert defined_names(parse("import os.path as p\nfrom a import b as c\nx, (y, z) = 1, (2, 3)\n")) == {
        "p", "c", "x", "y", "z"}


@pytest.mark.slow
@pytest.mark.docker
def test_a_module_failing_on_import_says_where(tmp_path: Path) -> None:
    from logomesh.events import PenaltyApplied, SandboxOutput
    from logomesh.tasks import load_task

    good = load_task("fib-recursive").labelled_submission("good").submission.to_json()
    line = good["sourceCode"].count("\n") + 2
    answer = {**good, "sourceCode": good["sourceCode"] + "\nassert fib(3) == 5, 'a demo check'\n"}
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "fib-recursive:demo-assert.json").write_text(json.dumps(answer), encoding="utf-8")
    events: list[object] = []
    with start_in_thread(mock_app_factory(MockResponses(folder))) as server:
        outcome = run_battle(BattleRequest("fib-recursive", "fib-recursive:demo-assert", 0, tmp_path / "home",
                                           purple_url=server.url, red=False), events.append)
    where = f"import failed at solution.py line {line}: AssertionError: a demo check"
    assert outcome.result.to_json()["status"] == "scored"
    assert outcome.result.to_json()["tests"]["hidden"]["error"] == where
    assert any(isinstance(e, SandboxOutput) and where in e.text for e in events)
    assert any(isinstance(e, PenaltyApplied) and where in e.reason for e in events)
