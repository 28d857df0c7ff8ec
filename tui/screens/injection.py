"""The injection screen: set up an injection run, then watch the search tree, each payload and each verdict live.

The run is ``run_injection``, what ``logomesh inject run`` calls, driven by ``tui.inject_runner``; nothing here
decides a verdict or a summary: both come from the engine and are only shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Tree

from logomesh.inject.attempts import AttemptRecord
from logomesh.inject.run import InjectRequest
from logomesh.tasks import TaskSpec
from tui.inject_runner import InjectEngine, InjectionRunner, default_inject_engine
from tui.memory import settle_garbage
from tui.messages import AttemptJudged, InjectionEnded, InjectionNodeAdded, InjectionNodeUpdated
from tui.screens.run_screen import RunScreen
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.battle.status_line import StatusLine
from tui.widgets.console_footer import ConsoleFooter
from tui.widgets.injection.attempt_view import AttemptView
from tui.widgets.injection.setup_form import InjectionChoice, InjectionForm
from tui.widgets.injection.verdict_log import VerdictLog

Path4 = tuple[str, ...]


class InjectionScreen(RunScreen):
    DEFAULT_CSS = """
    InjectionScreen #panels { height: 1fr; }
    InjectionScreen MctsTree { width: 1fr; min-width: 30; }
    InjectionScreen #right { width: 1fr; }
    InjectionScreen AttemptView { height: 1fr; min-height: 4; }
    InjectionScreen VerdictLog { height: 1fr; min-height: 4; }
    InjectionScreen.running InjectionForm { display: none; }
    InjectionScreen.hide-form InjectionForm { display: none; }
    InjectionScreen.-narrow #panels { layout: vertical; }
    InjectionScreen.-narrow MctsTree { width: 100%; height: 1fr; min-width: 0; min-height: 3; }
    InjectionScreen.-narrow #right { width: 100%; height: 1fr; layout: horizontal; }
    InjectionScreen.-narrow AttemptView { width: 1fr; height: 100%; }
    InjectionScreen.-narrow VerdictLog { width: 1fr; height: 100%; }
    """

    runner: InjectionRunner

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "start", "Start", priority=True),
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+n", "new_run", "Form"),
        Binding("l", "latest", "Latest attempt"),
        Binding("ctrl+t", "focus_tree", "Focus the search tree", show=False),
    ]

    def __init__(self, home: Path | None, tasks: Sequence[TaskSpec],
                 engine: InjectEngine = default_inject_engine) -> None:
        super().__init__(id="injection")
        self.home = home
        self.tasks = list(tasks)
        self.runner = InjectionRunner(self, engine)
        self.attempts: list[AttemptRecord] = []
        self.node_paths: dict[int, Path4] = {}
        self.leaf_ids: dict[Path4, int] = {}
        self.pinned = False  # the user highlighted a node: its attempt stays shown until ``l``
        self.last_ending: InjectionEnded | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield InjectionForm(self.tasks, id="setup")
        with Horizontal(id="panels"):
            yield MctsTree(id="tree")
            with Vertical(id="right"):
                yield AttemptView(id="attempt")
                yield VerdictLog(id="verdicts")
        yield StatusLine(id="status")
        yield ConsoleFooter()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(MctsTree).border_title = "Injection search"

    # actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "latest":
            return self.pinned
        return super().check_action(action, parameters)

    def action_cancel(self) -> None:
        if self.runner.running and not self.runner.cancelling:
            self.runner.cancel()
            self.query_one(StatusLine).set_stage("cancelling")
            self.query_one(VerdictLog).append("cancelling: the run stops at its next step; every query recorded stays",
                                              "bold yellow")

    def action_new_run(self) -> None:
        self.toggle_form()

    def action_focus_tree(self) -> None:
        self.query_one(MctsTree).focus()

    def action_latest(self) -> None:
        """Let go of the selected node: the newest attempt is shown again, and each one after it."""
        self.pinned = False
        if self.attempts:
            self.query_one(AttemptView).show(self.attempts[-1], "latest")
        self.refresh_bindings()

    # starting and ending

    @on(InjectionForm.InjectionRequested)
    def _requested(self, message: InjectionForm.InjectionRequested) -> None:
        if self.runner.running:
            self.notify("an injection run is already running: escape cancels it", severity="warning")
            return
        self.start_run(message.choice)

    def start_run(self, choice: InjectionChoice) -> InjectRequest:
        """Clear the panels and start the run the form describes, recorded in this console's home."""
        request = InjectRequest(choice.task_id, choice.target, choice.objectives, choice.budget, choice.seed,
                                choice.search, home=self.home, purple_timeout_s=choice.purple_timeout_s,
                                utility=choice.utility)
        self._reset_panels()
        self.query_one(StatusLine).begin(f"{choice.task_id} vs {choice.target.label}")
        self.add_class("running")
        started = self.runner.start(request)
        self.query_one(StatusLine).set_stage("searching")
        self.query_one(MctsTree).focus()
        self.refresh_bindings()
        return started

    def _reset_panels(self) -> None:
        tree = self.query_one(MctsTree)
        tree.clear_search()
        tree.border_title = "Injection search"
        self.query_one(AttemptView).reset()
        self.query_one(VerdictLog).reset()
        self.attempts.clear()
        self.node_paths.clear()
        self.leaf_ids.clear()
        self.pinned = False
        self.last_ending = None

    @on(InjectionEnded)
    def _ended(self, message: InjectionEnded) -> None:
        self.last_ending = message
        self.remove_class("running")
        self.add_class("hide-form")
        self._say_ending(message)
        self.query_one(StatusLine).end(message.status)
        self.refresh_bindings()
        self.call_after_refresh(settle_garbage)

    def _say_ending(self, message: InjectionEnded) -> None:
        log = self.query_one(VerdictLog)
        if message.outcome is not None:
            log.append_summary(message.outcome, message.recorded)
            return
        if message.status == "cancelled":
            kept = f": its {len(self.attempts)} queries stay in the ledger" if message.recorded else ""
            log.append(f"run cancelled after {len(self.attempts)} queries ({message.reason}), recorded as "
                       f"cancelled{kept}", "bold yellow")
            self.notify(f"injection run cancelled: {message.reason}", severity="warning", timeout=6)
            return
        log.append(f"injection run {message.status}: {message.reason}", "bold red")
        self.notify(f"injection run {message.status}: {message.reason}", severity="error")

    # the live panels

    @on(InjectionNodeAdded)
    def _node_added(self, message: InjectionNodeAdded) -> None:
        tree = self.query_one(MctsTree)
        tree.add_node(message.node_id, message.parent_id, message.action)
        self.node_paths[message.node_id] = message.path
        if len(message.path) == 4:
            self.leaf_ids[message.path] = message.node_id
        self.query_one(StatusLine).nodes = len(tree.stats)
        tree.follow_newest()

    @on(InjectionNodeUpdated)
    def _node_updated(self, message: InjectionNodeUpdated) -> None:
        tree = self.query_one(MctsTree)
        tree.update_node(message.node_id, message.visits, message.mean_value)
        tree.settle()

    @on(AttemptJudged)
    def _judged(self, message: AttemptJudged) -> None:
        record = message.record
        self.attempts.append(record)
        self.query_one(VerdictLog).append_verdict(record)
        if record.met and (leaf := self.leaf_ids.get(record.path)) is not None:
            self.query_one(MctsTree).mark_finding(leaf, record.severity)
        if not self.pinned:
            self.query_one(AttemptView).show(record, "latest")

    @on(Tree.NodeHighlighted, "#tree")
    def _node_chosen(self, event: Tree.NodeHighlighted[int]) -> None:
        """The user moved to a node: show the newest attempt made under it (none: keep what is shown)."""
        tree = self.query_one(MctsTree)
        node_id = event.node.data
        if not tree.has_focus or node_id is None:
            return
        record = self.attempt_under(self.node_paths.get(node_id, ()))
        if record is None:
            return
        self.pinned = True
        self.query_one(AttemptView).show(record, "selected · l: latest")
        self.refresh_bindings()

    def attempt_under(self, path: Path4) -> AttemptRecord | None:
        """The newest attempt whose path starts with ``path``."""
        return next((r for r in reversed(self.attempts) if r.path[: len(path)] == path), None)
