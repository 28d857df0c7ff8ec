"""Stateful models try aliased arguments, foreign objects and repeated calls; both backends.

Each hostile library submission below passes the simple sequences a model
drew before: it breaks its task's contract only when arguments alias (a
transfer to its own source account creates money; a key equal to a stored
one, not the same object) or come from outside the instance (a connection
released twice, or one the pool never handed out, or one it tracks by
equality), when values are falsy, when len() is asked between calls, or
when an answer only needs to be truthy. The model reports the first call that breaks the
contract (the self-transfer that should have raised, before the balance it
inflates). Each is an edit of a correct submission, which is the control:
its model sequences show no divergence.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tiers import sampled

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.sandbox import Sandbox
from logomesh.tasks import TaskSpec, load_task

from .tricks import model_divergences

POOL_CHECK = ("            if key not in self._out or self._out[key] is not conn:\n"
              "                raise ValueError(\"this connection was not acquired from this pool\")\n"
              "            del self._out[key]\n")
@dataclass(frozen=True)
class Hostile:
    task: str
    control: str  # the correct submission it edits
    edits: tuple[tuple[str, str], ...]  # (old, new), applied in order
    says: str  # in the divergence's last line


HOSTILE = {
    "self-transfer creates money": Hostile(
        "bank-ledger", "reference",
        (("            if src == dst:\n"
          "                raise ValueError(\"cannot transfer to the same account\")\n", ""),),
        "the contract says it raises ValueError"),
    "a second release accepted": Hostile(
        "connection-pool", "good",
        ((POOL_CHECK, "            if key not in self._out and not any(c is conn for c in self._idle):\n"
                      "                raise ValueError(\"not from this pool\")\n"
                      "            self._out.pop(key, None)\n"),),
        "checked out"),
    "connections tracked by equality": Hostile(
        "connection-pool", "good",
        ((POOL_CHECK, "            key = next((k for k, c in self._out.items() if c == conn), None)\n"
                      "            if key is None:\n"
                      "                raise ValueError(\"not from this pool\")\n"
                      "            del self._out[key]\n"),),
        "releasing what is not checked out"),
    "falsy values lost": Hostile(
        "lru-cache", "good",
        (("            return node.value\n", "            return node.value or None\n"),),
        "an LRU cache returns"),
    "len counts overwrites": Hostile(
        "lru-cache", "good",
        (("            return len(self._map)\n", "            return len(self._map) + self._overwrites\n"
          "\n    _overwrites = 0\n"),
         ("                node.value = value\n", "                node.value = value\n"
          "                self._overwrites += 1\n")),
        "len(c)"),
    "answers 1 and 0": Hostile(
        "rate-limiter", "good",
        (("                return True\n            return False\n",
          "                return 1\n            return 0\n"),),
        "returned 1"),
}


LIBRARY = ["bank-ledger", "connection-pool", "lru-cache", "rate-limiter"]


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


def source_of(task: TaskSpec, which: str) -> str:
    return task.reference if which == "reference" else task.labelled_submission(which).submission.source


@pytest.mark.parametrize("name", sampled(sorted(HOSTILE), sorted(HOSTILE), keep={
    "self-transfer creates money", "connections tracked by equality", "falsy values lost"}))
def test_aliased_and_foreign_arguments_break_the_model_and_the_control_holds(box: Sandbox, name: str) -> None:
    case = HOSTILE[name]
    task = load_task(case.task)
    plain = hostile = source_of(task, case.control)
    for old, new in case.edits:
        assert old in hostile, "the edit no longer matches the submission it edits"
        hostile = hostile.replace(old, new, 1)
    assert model_divergences(box, task, plain) == [[], [], []]
    found = [calls for calls in model_divergences(box, task, hostile) if calls]
    assert found, name
    assert case.says in found[0][-1], found[0][-3:]


@pytest.mark.parametrize("task_id", sampled(LIBRARY, LIBRARY, keep={"connection-pool", "rate-limiter"}))
def test_every_correct_library_submission_agrees_with_the_model(box: Sandbox, task_id: str) -> None:
    task = load_task(task_id)
    good = [n for n in task.submission_names() if task.labelled_submission(n).label == "good"]
    for which in ["reference", *good]:
        assert model_divergences(box, task, source_of(task, which)) == [[], [], []], which


@pytest.mark.slow
def test_the_agent_reports_a_self_transfer_at_medium_with_its_reproducer(box: Sandbox) -> None:
    case = HOSTILE["self-transfer creates money"]
    [(old, new)] = case.edits
    task = load_task(case.task)
    report = attack(task, source_of(task, case.control).replace(old, new, 1), box, BattleContext(seed=3),
                    budget_s=6.0)
    models = [f for f in report.findings if f.family == "stateful-model"]
    assert models and models[0].severity == "medium", [(f.family, f.severity) for f in report.findings]
    assert "bank.transfer('a', 'a'" in models[0].reproducer or "bank.transfer('b', 'b'" in models[0].reproducer
