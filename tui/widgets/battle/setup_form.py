"""The battle setup form: task, purple agent (mock variant or URL), battle id, seed, red budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, Select, Static

from logomesh.purple.agent_url import agent_url_problem
from logomesh.tasks import TaskSpec
from tui.widgets.form_values import FormError, good_first, red_budget, whole_number
from tui.widgets.start_form import StartForm

URL_CHOICE = "url"


@dataclass(frozen=True)
class BattleChoice:
    """What the user picked; the screen turns it into a ``BattleRequest``."""

    task_id: str
    purple_url: str | None
    mock_variant: str | None
    battle_id: str | None
    seed: int
    red_budget_s: float  # 0 runs no red agent


def mock_variants(task: TaskSpec | None) -> list[str]:
    """The task's canned submissions, ``good`` first."""
    if task is None:
        return []
    return good_first(task.submission_names())


class SetupForm(StartForm[BattleChoice]):
    DEFAULT_CSS = """
    SetupForm {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-muted;
        padding: 0 1;
    }
    SetupForm:focus-within { border: round $primary; }
    SetupForm Horizontal { height: 1; margin-bottom: 0; }
    SetupForm Label { width: 10; color: $text-muted; }
    SetupForm Select { width: 1fr; }
    SetupForm Input { width: 1fr; }
    SetupForm #description { height: auto; max-height: 3; color: $text-muted; margin: 0 0 0 10; }
    SetupForm #seed, SetupForm #budget { width: 10; }
    SetupForm #start { min-width: 12; margin-left: 1; }
    SetupForm .small-label { width: 7; padding-left: 1; }
    """

    class BattleRequested(Message):
        def __init__(self, choice: BattleChoice) -> None:
            super().__init__()
            self.choice = choice

    def __init__(self, tasks: Sequence[TaskSpec], recent_urls: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tasks = {task.id: task for task in tasks}
        self.recent_urls = list(recent_urls)

    def compose(self) -> ComposeResult:
        first = next(iter(self.tasks.values()), None)
        with Horizontal():
            yield Label("Task")
            yield Select([(f"{t.id}  {t.title}", t.id) for t in self.tasks.values()], id="task", compact=True,
                         allow_blank=first is None, value=first.id if first else Select.NULL)
        yield Static(self._describe(first), id="description")
        with Horizontal():
            yield Label("Purple")
            yield Select(self._purple_options(first), id="purple", compact=True, allow_blank=False)
        with Horizontal():
            yield Label("URL")
            yield Input(placeholder="http://host:port (A2A purple agent)", id="url", compact=True,
                        suggester=SuggestFromList(self.recent_urls, case_sensitive=False),
                        value=self.recent_urls[0] if self.recent_urls else "")
        with Horizontal():
            yield Label("Battle id")
            yield Input(placeholder="derived from task, purple, seed", id="battle-id", compact=True)
        with Horizontal():
            yield Label("Seed")
            yield Input("0", id="seed", type="integer", compact=True)
            yield Label("Red s", classes="small-label")
            yield Input("10", id="budget", type="number", compact=True)
            yield Button("Start", id="start", variant="success", compact=True)

    def on_mount(self) -> None:
        self.border_title = "New battle  (ctrl+r start)"
        self._sync_url_row()

    def focus_first(self) -> None:
        self.query_one("#task", Select).focus()

    @on(Select.Changed, "#task")
    def _task_changed(self, event: Select.Changed) -> None:
        task = self.tasks.get(str(event.value)) if event.value != Select.NULL else None
        self.query_one("#description", Static).update(self._describe(task))
        purple = self.query_one("#purple", Select)
        purple.set_options(self._purple_options(task))
        self._sync_url_row()

    @on(Select.Changed, "#purple")
    def _purple_changed(self, event: Select.Changed) -> None:
        self._sync_url_row()

    def requested(self, choice: BattleChoice) -> Message:
        return self.BattleRequested(choice)

    def choice(self) -> BattleChoice:
        """The form's values, validated; raises ``FormError`` naming the bad field."""
        task_value = self.query_one("#task", Select).value
        if task_value == Select.NULL:
            raise FormError("no task: add a task folder under tasks/ (see tasks/README.md)")
        purple = str(self.query_one("#purple", Select).value)
        url = self.query_one("#url", Input).value.strip()
        if purple == URL_CHOICE and (problem := agent_url_problem(url)):
            raise FormError(f"the purple URL {problem}")
        seed = whole_number(self.query_one("#seed", Input).value.strip() or "0", "seed")
        budget = red_budget(self.query_one("#budget", Input).value.strip() or "10")
        battle_id = self.query_one("#battle-id", Input).value.strip() or None
        return BattleChoice(
            task_id=str(task_value),
            purple_url=url if purple == URL_CHOICE else None,
            mock_variant=None if purple == URL_CHOICE else purple,
            battle_id=battle_id,
            seed=seed,
            red_budget_s=budget,
        )

    def remember_url(self, urls: Sequence[str]) -> None:
        self.recent_urls = list(urls)
        self.query_one("#url", Input).suggester = SuggestFromList(self.recent_urls, case_sensitive=False)

    def _sync_url_row(self) -> None:
        url_input = self.query_one("#url", Input)
        url_input.disabled = self.query_one("#purple", Select).value != URL_CHOICE

    @staticmethod
    def _purple_options(task: TaskSpec | None) -> list[tuple[str, str]]:
        options = [(f"mock: {name}", name) for name in mock_variants(task)]
        return [*options, ("A2A agent at URL…", URL_CHOICE)]

    @staticmethod
    def _describe(task: TaskSpec | None) -> str:
        if task is None:
            return "no tasks found"
        return " ".join(task.description.split())
