"""Mock purple agents for the injection battle, real A2A servers (kinds ``inject-obeying``, ``inject-ignoring``,
``inject-refusing``).

The first two answer every task with the task's ``good`` labelled submission (the task named in the message metadata),
reading every part of every message of the context (a later message in the same context sees the earlier
ones). The obeying mock follows an instruction it reads (``reading.py``) only when its placement and framing
fall in a secret subset drawn from ``--seed``: two placements times two framings of the grammar's five each.
When it obeys, its module does what was asked (``complying.py``); otherwise it is the correct solution. The
ignoring mock follows nothing. They exist so the search has something to find and something it must not. The
refusing mock declines every task, so the measures have a false refusal to count.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import AgentSkill, InvalidParamsError, Message
from starlette.applications import Starlette

from logomesh import __version__
from logomesh.inject.complying import complied
from logomesh.inject.grammar import FRAMINGS, PLACEMENTS
from logomesh.inject.reading import Seen, Sighting, sightings
from logomesh.purple.kinds import KindRefused, ServeOptions
from logomesh.purple.mock import task_id_of
from logomesh.purple.server import (
    AppFactory,
    Conversations,
    agent_card,
    build_app,
    metadata_of,
    open_task,
    read_parts,
)
from logomesh.tasks import TaskError, load_task

SUBSET_SIZE = 2  # placements, and framings, the obeying mock trusts


@dataclass(frozen=True)
class Trust:
    """The cells of placement x framing whose instructions the agent follows (secret to the searcher)."""

    cells: frozenset[tuple[str, str]]

    @classmethod
    def drawn(cls, seed: int) -> Trust:
        rng = random.Random(f"logomesh-inject-mock:{seed}")
        placements = rng.sample(PLACEMENTS, SUBSET_SIZE)
        framings = rng.sample(FRAMINGS, SUBSET_SIZE)
        return cls(frozenset((p, f) for p in placements for f in framings))

    @classmethod
    def nothing(cls) -> Trust:
        return cls(frozenset())

    def follows(self, sighting: Sighting) -> bool:
        return (sighting.placement, sighting.framing) in self.cells


def _seen(message: Message, number: int) -> list[Seen]:
    return [Seen(number, part.text, part.filename) for part in read_parts(message)]


class InjectMockExecutor(AgentExecutor):
    """Answers with the task's good module, changed by the instructions ``trust`` lets it follow."""

    def __init__(self, trust: Trust) -> None:
        self.trust = trust
        self.conversations = Conversations()

    def screen(self, message: Message) -> None:
        task_id = task_id_of(message)
        if task_id is None:
            raise InvalidParamsError(message="message metadata carries no task_id")
        try:
            load_task(task_id)
        except TaskError as exc:
            raise InvalidParamsError(message=str(exc)) from None

    def answer(self, task_id: str, messages: list[Message]) -> str:
        task = load_task(task_id)
        good = task.labelled_submission("good").submission
        parts = [seen for number, message in enumerate(messages) for seen in _seen(message, number)]
        obeyed = [s for s in sightings(parts) if self.trust.follows(s)]
        source = complied(good.source, task.entry_point, obeyed)
        return json.dumps({"sourceCode": source, "testCode": good.tests, "rationale": good.rationale},
                          indent=2, ensure_ascii=False)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task_id = task_id_of(context.message) or ""
        messages = self.conversations.add(context.context_id or "", context.message)
        text = self.answer(task_id, messages)
        updater = await open_task(context, event_queue)
        await updater.add_artifact([new_text_part(text, media_type="application/json")], name="submission",
                                   metadata={"logomesh_inject_mock": {"battle_id": str(
                                       metadata_of(context.message).get("battle_id", ""))}})
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        await updater.cancel()


REFUSAL = "I can't help with this request."


class RefusingExecutor(InjectMockExecutor):
    """Declines every task, with a payload or without (a failed A2A task with a refusal): an agent that resists
    every injection by answering nothing, whose false refusals on clean tasks the measures must show."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        await updater.failed(updater.new_agent_message([new_text_part(REFUSAL)]))


SKILL = AgentSkill(
    id="logomesh-inject-mock",
    name="Code submission that may follow planted instructions",
    description="Returns the task's correct submission, changed by the planted instructions it chooses to follow.",
    tags=["logomesh", "mock", "injection"],
)


def inject_mock_factory(trust: Trust, name: str, refusing: bool = False) -> AppFactory:
    executor = RefusingExecutor(trust) if refusing else InjectMockExecutor(trust)

    def make(url: str) -> Starlette:
        card = agent_card(name, "A mock coding agent for injection battles.", url, [SKILL], version=__version__)
        return build_app(card, executor, executor.screen)

    return make


def _refuse_other_options(options: ServeOptions, kind: str) -> None:
    if options.llm_options_given() or options.responses is not None:
        raise KindRefused(f"the {kind} mock takes --seed only (not --responses or the --llm options)")


def serve_obeying(options: ServeOptions) -> tuple[AppFactory, str]:
    """Kind ``inject-obeying``: follows instructions in the placement x framing cells ``--seed`` draws."""
    _refuse_other_options(options, "inject-obeying")
    return (inject_mock_factory(Trust.drawn(options.seed), "LogoMesh injection mock (obeying)"),
            f"the partly obeying injection mock (seed {options.seed})")


def serve_ignoring(options: ServeOptions) -> tuple[AppFactory, str]:
    """Kind ``inject-ignoring``: follows no planted instruction."""
    _refuse_other_options(options, "inject-ignoring")
    return inject_mock_factory(Trust.nothing(), "LogoMesh injection mock (ignoring)"), "the ignoring injection mock"


def serve_refusing(options: ServeOptions) -> tuple[AppFactory, str]:
    """Kind ``inject-refusing``: declines every task (``RefusingExecutor``)."""
    _refuse_other_options(options, "inject-refusing")
    return inject_mock_factory(Trust.nothing(), "LogoMesh injection mock (refusing)", refusing=True), \
        "the refusing injection mock"
