"""The battle screen: set up a battle, then watch the search, the sandbox and the score live."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Header

from logomesh.battle.request import BattleRequest, default_battle_id
from logomesh.events import (
    BattleFailed,
    BattleFinished,
    BattleStarted,
    CorrectnessBand,
    Event,
    FindingConfirmed,
    LedgerAppended,
    MctsNodeAdded,
    MctsNodeUpdated,
    PenaltyApplied,
    PurpleFinishReported,
    PurpleResponded,
    SandboxOutput,
    ScoreComponent,
    StageStarted,
    TestResult,
)
from logomesh.progress import describe
from logomesh.tasks import TaskSpec
from tui.engine import BattleRunner, Engine
from tui.ledger_source import LedgerSource
from tui.memory import settle_garbage
from tui.messages import BattleEnded, BattleEventsReceived
from tui.recent import load_recent_urls, remember_url
from tui.screens.run_screen import RunScreen
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.battle.output_log import SandboxLog
from tui.widgets.battle.score_panel import ScorePanel
from tui.widgets.battle.setup_form import BattleChoice, SetupForm
from tui.widgets.battle.status_line import StatusLine
from tui.widgets.console_footer import ConsoleFooter


class BattleScreen(RunScreen):
    DEFAULT_CSS = """
    BattleScreen #panels { height: 1fr; }
    BattleScreen MctsTree { width: 1fr; min-width: 30; }
    BattleScreen #right { width: 1fr; }
    BattleScreen SandboxLog { height: 1fr; min-height: 4; }
    BattleScreen.running SetupForm { display: none; }
    BattleScreen.hide-form SetupForm { display: none; }
    BattleScreen.-narrow #panels { layout: vertical; }
    BattleScreen.-narrow MctsTree { width: 100%; height: 10fr; min-width: 0; min-height: 3; }
    BattleScreen.-narrow #right { width: 100%; height: 12fr; max-height: 12; min-height: 7; layout: horizontal; }
    BattleScreen.-narrow ScorePanel { width: 44; height: 100%; max-height: 100%; }
    BattleScreen.-narrow ScorePanel #cis-row { display: none; }
    BattleScreen.-narrow SandboxLog { width: 1fr; height: 100%; min-height: 0; }
    """

    runner: BattleRunner

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "start", "Start", priority=True),
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+n", "new_battle", "Form"),
        Binding("ctrl+t", "focus_tree", "Focus the search tree", show=False),
        Binding("ctrl+o", "focus_output", "Focus the sandbox output", show=False),
    ]

    def __init__(self, home: Path, tasks: Sequence[TaskSpec], engine: Engine) -> None:
        super().__init__(id="battle")
        self.home = home
        self.tasks = list(tasks)
        self.runner = BattleRunner(self, engine)
        self.last_ending: BattleEnded | None = None
        self._panel_cache: tuple[MctsTree, SandboxLog, ScorePanel, StatusLine] | None = None
        self._failure_shown = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield SetupForm(self.tasks, load_recent_urls(self.home), id="setup")
        with Horizontal(id="panels"):
            yield MctsTree(id="tree")
            with Vertical(id="right"):
                yield ScorePanel(id="score")
                yield SandboxLog(id="output")
        yield StatusLine(id="status")
        yield ConsoleFooter()

    # actions

    def action_cancel(self) -> None:
        if self.runner.running and not self.runner.cancelling:
            self.runner.cancel()
            self.query_one(StatusLine).set_stage("cancelling")
            self.query_one(SandboxLog).append_note("cancelling: the engine stops at its next step", "bold yellow")

    def action_new_battle(self) -> None:
        self.toggle_form()

    def action_focus_tree(self) -> None:
        self.query_one(MctsTree).focus()

    def action_focus_output(self) -> None:
        self.query_one(SandboxLog).focus()

    # starting and ending

    @on(SetupForm.BattleRequested)
    def _start(self, message: SetupForm.BattleRequested) -> None:
        if self.runner.running:
            self.notify("a battle is already running: escape cancels it", severity="warning")
            return
        self.start_battle(message.choice)

    def battle_id_for(self, choice: BattleChoice) -> str | None:
        """The typed id if the ledger lacks it (else None), or the derived id made unique with ``-2``, ``-3``…"""
        try:
            taken = set(self.ledger_ids())
        except Exception:  # an unreadable ledger fails the battle at the ledger stage, with its reason
            taken = set()
        if choice.battle_id:
            return None if choice.battle_id in taken else choice.battle_id
        label = choice.purple_url or f"mock:{choice.mock_variant}"
        base = default_battle_id(choice.task_id, label, choice.seed)
        candidate, suffix = base, 1
        while candidate in taken:
            suffix += 1
            candidate = f"{base}-{suffix}"
        return candidate

    def ledger_ids(self) -> list[str]:
        return LedgerSource(self.home).battle_ids()

    def start_battle(self, choice: BattleChoice) -> BattleRequest | None:
        battle_id = self.battle_id_for(choice)
        if battle_id is None:
            self.notify(f"battle id {choice.battle_id!r} is already in the ledger: pick another or leave it blank",
                        severity="error", timeout=6)
            return None
        request = BattleRequest(
            task_id=choice.task_id,
            battle_id=battle_id,
            seed=choice.seed,
            home=self.home,
            purple_url=choice.purple_url,
            mock_variant=choice.mock_variant,
            red_budget_s=choice.red_budget_s or 10.0,
            red=choice.red_budget_s > 0,
        )
        if choice.purple_url:
            self.query_one(SetupForm).remember_url(remember_url(self.home, choice.purple_url))
        self.query_one(MctsTree).clear_search()
        self.query_one(MctsTree).set_enabled(request.red)
        self.query_one(SandboxLog).reset()
        self.query_one(ScorePanel).reset()
        self.query_one(StatusLine).begin(request.battle_id)
        self.last_ending = None
        self._failure_shown = False
        self.add_class("running")
        self.runner.start(request)
        self.query_one(MctsTree).focus()
        self.refresh_bindings()
        return request

    @on(BattleEnded)
    def _ended(self, message: BattleEnded) -> None:
        self.last_ending = message
        self.remove_class("running")
        self.add_class("hide-form")
        log = self.query_one(SandboxLog)
        where = f", recorded as entry #{message.sequence}" if message.sequence is not None else ""
        if message.status == "scored":
            log.append_note(f"battle scored: CIS {message.cis_score or 0.0:.3f}{where}", "bold green")
        elif self._failure_shown:
            log.append_note(f"battle {message.status}{where}", "bold red")
        else:
            log.append_note(f"battle {message.status}{where}: {message.reason}", "bold red")
            if message.status == "error":  # it could not start (pre-flight) or the engine broke: stays until dismissed
                self.notify(f"battle {message.status}: {message.reason}", severity="error")
            elif message.status == "cancelled":
                self.notify(f"battle {message.status}: {message.reason}", severity="warning", timeout=6)
        self.query_one(StatusLine).end(message.status)
        self.refresh_bindings()
        self.call_after_refresh(settle_garbage)

    # the live panels

    def _panels(self) -> tuple[MctsTree, SandboxLog, ScorePanel, StatusLine]:
        """The four live panels, looked up once (thousands of events per second pass through here)."""
        if self._panel_cache is None:
            self._panel_cache = (self.query_one(MctsTree), self.query_one(SandboxLog), self.query_one(ScorePanel),
                                 self.query_one(StatusLine))
        return self._panel_cache

    @on(BattleEventsReceived)
    def _apply(self, message: BattleEventsReceived) -> None:
        tree = self.query_one(MctsTree)
        for event in message.events:
            self.apply_event(event)
        if tree.settle() and tree.best_value is not None:
            self.query_one(ScorePanel).push_best_value(tree.best_value)
        self.query_one(StatusLine).nodes = len(tree.stats)
        tree.follow_newest()

    def apply_event(self, event: Event) -> None:
        """Route one engine event to the widget that shows it."""
        tree, log, score, status = self._panels()
        match event:
            case MctsNodeAdded(node_id=node_id, parent_id=parent_id, action=action):
                tree.add_node(node_id, parent_id, action)
            case MctsNodeUpdated(node_id=node_id, visits=visits, mean_value=mean):
                tree.update_node(node_id, visits, mean)
            case SandboxOutput(origin=origin, stream=stream, text=text):
                log.append_output(origin, stream, text)
            case TestResult(suite=suite, name=name, status=test_status, reason=reason):
                log.append_test(suite, name, test_status, reason)
            case FindingConfirmed(severity=severity, node_id=node_id):
                tree.mark_finding(node_id, severity)
                log.append_note(f"⚑ {said(event)}", "bold red")
            case ScoreComponent(name=name, value=value, details=details):
                score.show_component(name, value, details)
            case PenaltyApplied(name=name, factor=factor, reason=reason):
                score.show_penalty(name, factor, reason)
            case CorrectnessBand(all_passed=all_passed, boundary=boundary):
                score.show_band(all_passed, boundary)
            case BattleFinished(cis_score=cis, status=final_status):
                score.show_final(cis, final_status)
            case StageStarted(stage=stage):
                status.set_stage(stage)
            case BattleStarted():
                log.append_note(said(event), "bold")
            case PurpleResponded():
                log.append_note(said(event), "cyan")
            case PurpleFinishReported(finish=finish):
                log.append_note(said(event), "bold yellow" if finish.truncated is not False else "dim")
            case BattleFailed():
                self._failure_shown = True
                log.append_note(said(event), "bold red")
            case LedgerAppended():
                log.append_note(said(event), "green")


def said(event: Event) -> str:
    """What the log says of ``event``: the engine's one wording (``logomesh.progress.describe``)."""
    return (describe(event) or "").strip()
