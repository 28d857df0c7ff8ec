"""The mock purple agent as an A2A server: static answers keyed on battle_id.

Which answer a message gets, first rule that applies (docs/agents.md):

1. ``--responses DIR`` holds ``DIR/<battle_id>.json``: served verbatim (so a
   test can serve a malformed answer too).
2. The battle_id is ``TASK:VARIANT[:anything]``: the task's labelled submission
   ``VARIANT`` from ``tasks/*/submissions/``; an unknown task or variant is refused.
3. Any other battle_id, when the message metadata names a ``task_id`` (LogoMesh's
   own requests always do, the green agent's included): that task's ``good``
   submission, and the answer says so (the status message and the artifact's
   metadata), so a default assessment works against the mock out of the box.

Anything else is refused with a JSON-RPC invalid-params error (-32602). The
in-process twin of this server is ``logomesh.purple.exchange.canned_exchange``.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import AgentSkill, InvalidParamsError, Message
from starlette.applications import Starlette

from logomesh import __version__
from logomesh.purple.kinds import KindRefused, ServeOptions
from logomesh.purple.server import AppFactory, agent_card, build_app, metadata_of, open_task
from logomesh.tasks import TaskError, load_task

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$")
DEFAULT_VARIANT = "good"
"""What a battle_id that names no variant gets: the task's correct submission."""


class UnknownBattle(ValueError):
    """No static answer exists for this battle_id; the message says what would."""


@dataclass(frozen=True)
class Answer:
    """The answer text, and why it was chosen when the battle_id did not say (rule 3)."""

    text: str
    note: str | None = None


class MockResponses:
    """Where the mock's answers come from: a folder of ``<battle_id>.json``, then the task library."""

    def __init__(self, responses_dir: Path | None = None, tasks_dir: Path | None = None) -> None:
        self.responses_dir = responses_dir
        self.tasks_dir = tasks_dir

    def lookup(self, battle_id: str, task_id: str | None = None) -> Answer:
        """The answer for ``battle_id`` (``task_id``: the one the message metadata names); ``UnknownBattle`` if none."""
        if not _SAFE_ID.match(battle_id) or ".." in battle_id:
            raise UnknownBattle(f"battle_id {battle_id[:80]!r} is not a valid id")
        if self.responses_dir is not None:
            path = self.responses_dir / f"{battle_id}.json"
            if path.is_file():
                try:
                    return Answer(path.read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError) as exc:
                    raise UnknownBattle(f"response file {path.name} is unreadable: {exc}") from None
        named_task, colon, rest = battle_id.partition(":")
        if colon:
            variant = rest.split(":", 1)[0]
            if not variant:
                raise UnknownBattle(f"unknown battle_id {battle_id!r}: no response file, and not TASK:VARIANT")
            return Answer(self._submission(battle_id, named_task, variant))
        if not task_id:
            raise UnknownBattle(f"unknown battle_id {battle_id!r}: no response file, not TASK:VARIANT, and the "
                                "message metadata names no task_id")
        note = (f"battle_id {battle_id!r} names no variant (TASK:VARIANT): served the {DEFAULT_VARIANT!r} "
                f"submission of task {task_id!r}")
        return Answer(self._submission(battle_id, task_id, DEFAULT_VARIANT), note)

    def _submission(self, battle_id: str, task_id: str, variant: str) -> str:
        try:
            labelled = load_task(task_id, self.tasks_dir).labelled_submission(variant)
        except TaskError as exc:
            raise UnknownBattle(f"unknown battle_id {battle_id!r}: {exc}") from None
        return json.dumps(labelled.submission.to_json(), indent=2, ensure_ascii=False)


def battle_id_of(message: Message) -> str:
    value = metadata_of(message).get("battle_id")
    return value if isinstance(value, str) else ""


def task_id_of(message: Message) -> str | None:
    value = metadata_of(message).get("task_id")
    return value if isinstance(value, str) and value else None


class MockExecutor(AgentExecutor):
    """Answers each message with the static response for its battle_id, as a completed task."""

    def __init__(self, responses: MockResponses) -> None:
        self.responses = responses

    def screen(self, message: Message) -> None:
        """Refuse (as a JSON-RPC invalid-params error) a message whose battle_id has no answer."""
        battle_id = battle_id_of(message)
        if not battle_id:
            raise InvalidParamsError(message="message metadata carries no battle_id")
        try:
            self.responses.lookup(battle_id, task_id_of(message))
        except UnknownBattle as exc:
            raise InvalidParamsError(message=str(exc)) from None

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        answer = self.responses.lookup(battle_id_of(context.message), task_id_of(context.message))
        updater = await open_task(context, event_queue)
        metadata = {"logomesh_mock": {"default_variant": DEFAULT_VARIANT, "note": answer.note}} if answer.note else None
        await updater.add_artifact([new_text_part(answer.text, media_type="application/json")], name="submission",
                                   metadata=metadata)
        if answer.note is None:
            await updater.complete()
            return
        print(f"logomesh: mock purple agent: {answer.note}", file=sys.stderr, flush=True)
        await updater.complete(_say(updater, answer.note))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        await updater.cancel()


def _say(updater: TaskUpdater, text: str) -> Message:
    return updater.new_agent_message([new_text_part(text)])


MOCK_SKILL = AgentSkill(
    id="logomesh-mock-submission",
    name="Canned code submission",
    description=("Returns the static submission filed for the battle_id in the message metadata: TASK:VARIANT "
                 "serves that labelled submission; any other battle_id with a task_id in the metadata serves "
                 "the task's 'good' submission and says so."),
    tags=["logomesh", "mock", "code"],
)


def mock_app_factory(responses: MockResponses) -> AppFactory:
    """A factory building the mock purple app for a given advertised URL."""
    executor = MockExecutor(responses)

    def make(url: str) -> Starlette:
        card = agent_card("LogoMesh mock purple agent", "Static code submissions keyed on battle_id.", url,
                          [MOCK_SKILL], version=__version__)
        return build_app(card, executor, executor.screen)

    return make


def serve_mock(options: ServeOptions) -> tuple[AppFactory, str]:
    """The ``mock`` purple agent kind (``purple serve --mock``): answers from ``--responses``, then the tasks."""
    if options.llm_options_given():
        raise KindRefused("--base-url, --model, --max-tokens, --prompt-template, --response-format and --defence "
                          "go with --llm, not --mock")
    if options.responses is not None and not options.responses.is_dir():
        raise KindRefused(f"--responses {options.responses} is not a folder")
    return mock_app_factory(MockResponses(options.responses)), "the mock purple agent"
