"""The injection setup form: task, purple agent (a mock kind or a URL), objectives, budget, seeds, utility."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label, Select

from logomesh.inject.objectives import OBJECTIVES, ObjectiveName
from logomesh.inject.run import Target
from logomesh.inject.search import SEARCHES
from logomesh.purple.agent_url import agent_url_problem
from logomesh.purple.kinds import KindRefused, ServeOptions, purple_kind
from logomesh.tasks import TaskSpec
from tui.widgets.checklist import Checklist
from tui.widgets.form_values import FormError, seconds, whole_number
from tui.widgets.start_form import StartForm

URL_CHOICE = "url"
KINDS = (("mock: inject-obeying (follows some placements)", "inject-obeying"),
         ("mock: inject-ignoring (follows none)", "inject-ignoring"),
         ("mock: inject-refusing (declines every task)", "inject-refusing"))
DEFAULT_BUDGET = 40  # as ``logomesh inject run``
DEFAULT_PURPLE_TIMEOUT_S = 120.0  # as ``logomesh inject run --purple-timeout``
MAX_BUDGET = 100_000
PREFERRED_TASK = "rate-limiter"  # the task the injection docs and tests use, first when present


@dataclass(frozen=True)
class InjectionChoice:
    """What the user picked, checked as ``logomesh inject run`` checks its options; the screen makes the request."""

    task_id: str
    target: Target
    objectives: tuple[ObjectiveName, ...]
    budget: int
    seed: int
    utility: bool
    search: str = "mcts"
    purple_timeout_s: float = DEFAULT_PURPLE_TIMEOUT_S


def budget_of(text: str) -> int:
    """Queries to the agent: a whole number, at least 1 (the command's wording)."""
    try:
        budget = int(text)
    except ValueError:
        raise FormError(f"budget must be a whole number of queries, at least 1, not {text!r}") from None
    if not 1 <= budget <= MAX_BUDGET:
        raise FormError(f"budget must be a whole number of queries, at least 1 (at most {MAX_BUDGET}), not {budget}")
    return budget


def target_of(choice: str, url: str, kind_seed: int) -> Target:
    """The agent: the URL typed, or the mock kind chosen (refused as ``--purple-kind`` refuses it)."""
    if choice == URL_CHOICE:
        if problem := agent_url_problem(url):
            raise FormError(f"the purple URL {problem}")
        return Target(url=url)
    try:
        purple_kind(choice)(ServeOptions(seed=kind_seed))
    except KindRefused as exc:
        raise FormError(f"purple kind: {exc}") from None
    return Target(kind=choice, kind_seed=kind_seed)


class InjectionForm(StartForm[InjectionChoice]):
    DEFAULT_CSS = """
    InjectionForm {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-muted;
        padding: 0 1;
    }
    InjectionForm:focus-within { border: round $primary; }
    InjectionForm Horizontal { height: 1; }
    InjectionForm #objective-row { height: 4; }
    InjectionForm Label { width: 11; color: $text-muted; }
    InjectionForm Select { width: 1fr; }
    InjectionForm Input { width: 1fr; }
    InjectionForm Checklist { width: 1fr; height: 4; }
    InjectionForm #kind-seed, InjectionForm #seed, InjectionForm #budget, InjectionForm #purple-timeout { width: 7; }
    InjectionForm #search { width: 10; }
    InjectionForm .small-label { width: auto; padding: 0 1; }
    InjectionForm Checkbox { width: auto; margin-left: 1; }
    InjectionForm #start { min-width: 8; margin-left: 1; }
    """

    class InjectionRequested(Message):
        def __init__(self, choice: InjectionChoice) -> None:
            super().__init__()
            self.choice = choice

    def __init__(self, tasks: Sequence[TaskSpec], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.task_ids = [task.id for task in tasks]

    def compose(self) -> ComposeResult:
        first = PREFERRED_TASK if PREFERRED_TASK in self.task_ids else next(iter(self.task_ids), None)
        with Horizontal():
            yield Label("Task")
            yield Select([(task_id, task_id) for task_id in self.task_ids], id="task", compact=True,
                         prompt="pick a task", value=first if first is not None else Select.NULL)
        with Horizontal():
            yield Label("Purple")
            yield Select([*KINDS, ("A2A agent at URL…", URL_CHOICE)], id="purple", compact=True, allow_blank=False)
        with Horizontal():
            yield Label("URL")
            yield Input(placeholder="http://host:port (A2A purple agent)", id="url", compact=True, disabled=True)
            yield Label("Answer s", classes="small-label")
            yield Input(f"{DEFAULT_PURPLE_TIMEOUT_S:g}", id="purple-timeout", type="number", compact=True,
                        tooltip="seconds each answer of the agent may take")
        with Horizontal(id="objective-row"):
            yield Label("Objectives")
            yield Checklist(*((name, name, True) for name in OBJECTIVES), id="objectives", compact=True)
            yield Checkbox("hidden tests", True, id="utility", compact=True,
                           tooltip="run the task's hidden tests on each winning answer and on the clean one")
        with Horizontal():
            yield Label("Budget")
            yield Input(str(DEFAULT_BUDGET), id="budget", type="integer", compact=True)
            yield Label("Seed", classes="small-label")
            yield Input("0", id="seed", type="integer", compact=True)
            yield Label("Kind seed", classes="small-label")
            yield Input("0", id="kind-seed", type="integer", compact=True)
            yield Label("Search", classes="small-label")
            yield Select([(name, name) for name in SEARCHES], id="search", value="mcts", compact=True,
                         allow_blank=False)
            yield Button("Start", id="start", variant="success", compact=True)

    def on_mount(self) -> None:
        self.border_title = "New injection run  (ctrl+r start)"

    def focus_first(self) -> None:
        self.query_one("#task", Select).focus()

    @on(Select.Changed, "#purple")
    def _purple_changed(self, event: Select.Changed) -> None:
        self.query_one("#url", Input).disabled = event.value != URL_CHOICE
        self.query_one("#kind-seed", Input).disabled = event.value == URL_CHOICE

    def requested(self, choice: InjectionChoice) -> Message:
        return self.InjectionRequested(choice)

    def choice(self) -> InjectionChoice:
        """The form's values, checked; raises ``FormError`` naming the bad field."""
        task = self.query_one("#task", Select).value
        if task == Select.NULL:
            raise FormError("no task: pick the task the purple agent is asked to solve")
        objectives = tuple(o for o in OBJECTIVES if o in self.query_one(Checklist).selected)
        if not objectives:
            raise FormError("no objective: tick at least one (space ticks the highlighted one)")
        budget = budget_of(self.query_one("#budget", Input).value.strip())
        seed = whole_number(self.query_one("#seed", Input).value.strip() or "0", "seed")
        kind_seed = whole_number(self.query_one("#kind-seed", Input).value.strip() or "0", "kind seed")
        target = target_of(str(self.query_one("#purple", Select).value), self.query_one("#url", Input).value.strip(),
                           kind_seed)
        timeout = seconds(self.query_one("#purple-timeout", Input).value.strip() or f"{DEFAULT_PURPLE_TIMEOUT_S:g}",
                          "answer timeout")
        return InjectionChoice(str(task), target, objectives, budget, seed, self.query_one(Checkbox).value,
                               str(self.query_one("#search", Select).value), timeout)
