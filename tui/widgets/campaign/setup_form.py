"""The campaign setup form: tasks, agents (mock variants and ``NAME=URL`` lines), repeat, workers, seed, red budget."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, SelectionList, Static, TextArea

from logomesh.campaign.executor import MAX_WORKERS
from logomesh.campaign.plan import MAX_REPEAT, Agent, PlanError, check_size, parse_agents
from logomesh.purple.agent_url import agent_url_problem
from logomesh.tasks import TaskSpec
from tui.widgets.checklist import Checklist
from tui.widgets.form_values import MAX_SEED, FormError, good_first, red_budget, whole_number
from tui.widgets.start_form import StartForm


@dataclass(frozen=True)
class CampaignChoice:
    """What the user picked; the screen turns it into a ``CampaignPlan``."""

    agents: tuple[Agent, ...]
    task_ids: tuple[str, ...]
    repeat: int
    workers: int
    seed: int
    red_budget_s: float  # 0 runs no red agent


def split_words(text: str) -> list[str]:
    """``good, no-lock`` or ``good no-lock``: the words, in order."""
    return [word for word in re.split(r"[,\s]+", text) if word]


def common_variants(tasks: Sequence[TaskSpec]) -> list[str]:
    """The mock variants every one of ``tasks`` offers, ``good`` first."""
    if not tasks:
        return []
    shared = set(tasks[0].submission_names()).intersection(*(t.submission_names() for t in tasks[1:]))
    return good_first(shared)


def purple_specs(text: str) -> list[str]:
    """The ``NAME=URL`` lines, checked here so the message speaks of the form, not of command options."""
    specs: list[str] = []
    for line in text.splitlines():
        spec = line.strip()
        if not spec:
            continue
        name, sep, url = spec.partition("=")
        if not sep or not name.strip() or not url.strip():
            raise FormError(f"purple line {spec!r}: write NAME=URL, e.g. alice=http://127.0.0.1:9009")
        problem = agent_url_problem(url.strip())
        if problem is not None:
            raise FormError(f"purple line {spec!r}: {problem}")
        specs.append(spec)
    return specs


class CampaignSetupForm(StartForm[CampaignChoice]):
    DEFAULT_CSS = """
    CampaignSetupForm {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-muted;
        padding: 0 1;
    }
    CampaignSetupForm:focus-within { border: round $primary; }
    CampaignSetupForm #choose { height: 4; }
    CampaignSetupForm #task-column { width: 1fr; }
    CampaignSetupForm #agent-column { width: 1fr; padding-left: 1; }
    CampaignSetupForm Horizontal { height: auto; }
    CampaignSetupForm Label { width: 7; color: $text-muted; }
    CampaignSetupForm #tasks { height: 4; width: 1fr; }
    CampaignSetupForm #mocks { width: 1fr; }
    CampaignSetupForm #purples { height: 3; width: 1fr; }
    CampaignSetupForm #offered { height: 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    CampaignSetupForm #numbers { height: 1; }
    CampaignSetupForm #numbers Label { width: auto; padding: 0 1; }
    CampaignSetupForm #numbers #repeat-label { padding: 0 1 0 0; }
    CampaignSetupForm #numbers Input { width: 6; }
    CampaignSetupForm #numbers #seed { width: 10; }
    CampaignSetupForm #start { min-width: 10; margin-left: 2; }
    """

    class CampaignRequested(Message):
        def __init__(self, choice: CampaignChoice) -> None:
            super().__init__()
            self.choice = choice

    def __init__(self, tasks: Sequence[TaskSpec], workers: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tasks = {task.id: task for task in tasks}
        self.default_workers = workers

    def compose(self) -> ComposeResult:
        with Horizontal(id="choose"):
            with Horizontal(id="task-column"):
                yield Label("Tasks")
                yield Checklist(*((task_id, task_id, True) for task_id in self.tasks), id="tasks", compact=True)
            with Vertical(id="agent-column"):
                with Horizontal():
                    yield Label("Mock")
                    yield Input("good", placeholder="variants, comma separated", id="mocks", compact=True)
                with Horizontal():
                    yield Label("Purple")
                    yield TextArea(id="purples", compact=True, placeholder="NAME=URL, one a line",
                                   show_line_numbers=False, soft_wrap=False)
        yield Static("", id="offered")
        with Horizontal(id="numbers"):
            yield Label("Repeat", id="repeat-label")
            yield Input("1", id="repeat", type="integer", compact=True)
            yield Label("Workers")
            yield Input(str(self.default_workers), id="workers", type="integer", compact=True)
            yield Label("Seed")
            yield Input("0", id="seed", type="integer", compact=True)
            yield Label("Red s")
            yield Input("10", id="budget", type="number", compact=True)
            yield Button("Start", id="start", variant="success", compact=True)

    def on_mount(self) -> None:
        self.border_title = "New campaign  (ctrl+r start, space toggles a task)"
        self._show_offered()

    def focus_first(self) -> None:
        self.query_one("#mocks", Input).focus()

    def chosen_tasks(self) -> list[TaskSpec]:
        selected = set(self.query_one("#tasks", SelectionList).selected)
        return [task for task_id, task in self.tasks.items() if task_id in selected]

    @on(SelectionList.SelectedChanged, "#tasks")
    def _tasks_changed(self) -> None:
        self._show_offered()

    def _show_offered(self) -> None:
        chosen = self.chosen_tasks()
        variants = ", ".join(common_variants(chosen)) or "none"
        text = f"{len(chosen)}/{len(self.tasks)} tasks chosen; mock variants they all offer: {variants}"
        self.query_one("#offered", Static).update(text)

    def requested(self, choice: CampaignChoice) -> Message:
        return self.CampaignRequested(choice)

    def choice(self) -> CampaignChoice:
        """The form's values, validated; raises ``FormError`` naming the bad field."""
        tasks = self.chosen_tasks()
        if not tasks:
            raise FormError("no task chosen: select at least one (space toggles the highlighted task)")
        mocks = split_words(self.query_one("#mocks", Input).value)
        purples = purple_specs(self.query_one("#purples", TextArea).text)
        if not mocks and not purples:
            raise FormError("no agent: name a mock variant or add a NAME=URL line")
        offered = common_variants(tasks)
        missing = [variant for variant in mocks if variant not in offered]
        if missing:
            raise FormError(f"mock variant {missing[0]!r} is not offered by every chosen task "
                            f"(all offer: {', '.join(offered) or 'none'})")
        try:
            agents = parse_agents(purples, mocks)
        except PlanError as exc:
            raise FormError(str(exc)) from None
        repeat = whole_number(self.query_one("#repeat", Input).value.strip() or "1", "repeat", 1, MAX_REPEAT)
        try:
            check_size(len(agents), len(tasks), repeat)
        except PlanError as exc:
            raise FormError(str(exc).replace("--repeat", "repeat")) from None
        return CampaignChoice(
            agents=agents,
            task_ids=tuple(task.id for task in tasks),
            repeat=repeat,
            workers=whole_number(self.query_one("#workers", Input).value.strip() or str(self.default_workers),
                                 "workers", 1, MAX_WORKERS),
            seed=whole_number(self.query_one("#seed", Input).value.strip() or "0", "seed", 0, MAX_SEED),
            red_budget_s=red_budget(self.query_one("#budget", Input).value.strip() or "10"),
        )
