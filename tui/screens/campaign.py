"""The campaign screen: plan many battles, watch them run in parallel, and rank the agents live."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from logomesh.campaign.aggregate import build_report
from logomesh.campaign.executor import default_workers
from logomesh.campaign.model import BattleFinding, BattleRow
from logomesh.campaign.plan import CampaignPlan, Settings, default_campaign_id
from logomesh.tasks import TaskSpec
from tui.campaign_runner import CampaignCheck, CampaignRunner, ExecutorFactory, environment_check, local_executor
from tui.findings import finding_rows
from tui.ledger_source import evidence_for, evidence_of
from tui.memory import settle_garbage
from tui.messages import CampaignEnded, CampaignProgressed, LeaderboardComputed
from tui.screens.run_screen import RunScreen
from tui.widgets.campaign.comparisons import ComparisonsTable
from tui.widgets.campaign.findings_table import FindingsTable
from tui.widgets.campaign.leaderboard import Leaderboard
from tui.widgets.campaign.progress_panel import CampaignProgressPanel
from tui.widgets.campaign.setup_form import CampaignChoice, CampaignSetupForm
from tui.widgets.campaign.task_table import TaskTable
from tui.widgets.console_footer import ConsoleFooter

DEFAULT_RED_BUDGET_S = 10.0
# The views under the progress panel: (tab pane id, the id of its table).
VIEWS = (("view-leaders", "#leaderboard"), ("view-pairs", "#comparisons"), ("view-tasks", "#task-table"),
         ("view-findings", "#findings-table"))


def plan_for(choice: CampaignChoice) -> CampaignPlan:
    """The plan the form describes; its id is a hash of it, so the same choices resume the same campaign."""
    settings = Settings(red=choice.red_budget_s > 0, red_budget_s=choice.red_budget_s or DEFAULT_RED_BUDGET_S)
    campaign_id = default_campaign_id(choice.agents, choice.task_ids, choice.repeat, choice.seed, settings)
    return CampaignPlan(campaign_id=campaign_id, agents=choice.agents, task_ids=choice.task_ids,
                        repeat=choice.repeat, seed=choice.seed, settings=settings)


TALL_FROM = 32  # rows: from here the setup form lists up to 12 tasks instead of 4


class CampaignScreen(RunScreen):
    # the "-tall" class lengthens the task list (Screen types it as an instance variable: no ClassVar here)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL_FROM, "-tall")]  # noqa: RUF012
    DEFAULT_CSS = """
    CampaignScreen.-tall CampaignSetupForm #choose, CampaignScreen.-tall CampaignSetupForm #task-column,
    CampaignScreen.-tall CampaignSetupForm #agent-column { height: auto; }
    CampaignScreen.-tall CampaignSetupForm #tasks { height: auto; min-height: 4; max-height: 12; }
    CampaignScreen.running CampaignSetupForm { display: none; }
    CampaignScreen.hide-form CampaignSetupForm { display: none; }
    CampaignScreen #views { height: 1fr; }
    CampaignScreen #views ContentSwitcher { height: 1fr; }
    CampaignScreen #views TabPane { height: 1fr; padding: 0; }
    CampaignScreen #finding-detail, CampaignScreen #pair-detail {
        height: auto; max-height: 4; padding: 0 1; background: $panel;
    }
    CampaignScreen #finding-detail.empty, CampaignScreen #pair-detail.empty { display: none; }
    """

    runner: CampaignRunner

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "start", "Start", priority=True),
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+n", "new_campaign", "Form"),
        Binding("v", "next_view", "View"),
    ]

    def __init__(self, home: Path, tasks: Sequence[TaskSpec], executor_factory: ExecutorFactory = local_executor,
                 workers: int | None = None, check: CampaignCheck = environment_check) -> None:
        super().__init__(id="campaign")
        self.home = home
        self.tasks = list(tasks)
        self.default_workers = workers if workers is not None else default_workers()
        self.runner = CampaignRunner(self, home, executor_factory, check)
        self.plan: CampaignPlan | None = None
        self.rows: dict[str, BattleRow] = {}
        self.last_ending: CampaignEnded | None = None
        self._ranking = False  # a leaderboard worker is running
        self._stale = False  # battles arrived since that worker took its copy

    def compose(self) -> ComposeResult:
        yield Header()
        yield CampaignSetupForm(self.tasks, self.default_workers, id="setup")
        yield CampaignProgressPanel(id="progress")
        with TabbedContent(id="views", initial="view-leaders"):
            with TabPane("Leaderboard", id="view-leaders"):
                yield Leaderboard(id="leaderboard")
            with TabPane("Pairs", id="view-pairs"):
                yield ComparisonsTable(id="comparisons")
                yield Static("", id="pair-detail", classes="empty")
            with TabPane("Per task", id="view-tasks"):
                yield TaskTable(id="task-table")
            with TabPane("Findings", id="view-findings"):
                yield FindingsTable(id="findings-table")
                yield Static("", id="finding-detail")
        yield ConsoleFooter()

    @property
    def settled(self) -> bool:
        """No campaign running and the leaderboard shows every battle reported (what tests wait for)."""
        return not self.runner.running and not self._ranking and not self._stale

    # actions

    def action_cancel(self) -> None:
        if self.runner.running and not self.runner.cancelling:
            self.runner.cancel()
            self.query_one(CampaignProgressPanel).set_status("cancelling: stopping the battles in flight")

    def action_new_campaign(self) -> None:
        self.toggle_form()

    def action_next_view(self) -> None:
        """Leaderboard → pairs → per task → findings → leaderboard; the view's table takes the focus."""
        views = self.query_one("#views", TabbedContent)
        order = [pane for pane, _ in VIEWS]
        views.active = order[(order.index(views.active) + 1) % len(order)] if views.active in order else order[0]
        self.query_one(dict(VIEWS)[views.active]).focus()

    # starting and ending

    @on(CampaignSetupForm.CampaignRequested)
    def _start(self, message: CampaignSetupForm.CampaignRequested) -> None:
        if self.runner.running:
            self.notify("a campaign is already running: escape cancels it", severity="warning")
            return
        self.start_campaign(message.choice)

    def start_campaign(self, choice: CampaignChoice) -> CampaignPlan:
        plan = plan_for(choice)
        self.plan = plan
        self.rows = {}
        self.last_ending = None
        self.query_one(CampaignProgressPanel).begin(plan.campaign_id)
        self.query_one(Leaderboard).show([], [(agent.name, 0) for agent in plan.agents])
        self.query_one(TaskTable).show([])
        self.query_one(ComparisonsTable).show([])
        self._show_findings([])
        self.add_class("running")
        self.runner.start(plan, choice.workers)
        self.query_one(Leaderboard).focus()
        self.refresh_bindings()
        return plan

    @on(CampaignProgressed)
    def _progressed(self, message: CampaignProgressed) -> None:
        self.query_one(CampaignProgressPanel).show(message.progress)
        if message.rows:
            for row in message.rows:
                self.rows.setdefault(row.battle_id, row)
            self._rank()

    @on(CampaignEnded)
    def _ended(self, message: CampaignEnded) -> None:
        self.last_ending = message
        self.remove_class("running")
        self.add_class("hide-form")
        self.query_one(CampaignProgressPanel).end(message.status, message.progress, message.reason)
        progress = message.progress
        done = progress.done if progress is not None else 0
        if message.status == "finished" and progress is not None:
            self.notify(f"campaign finished: {progress.recorded}/{progress.total} battles in the ledger", timeout=6)
        else:
            self.notify(f"campaign {message.status} after {done} battles: {message.reason}",
                        severity="warning" if message.status == "cancelled" else "error", timeout=8)
        self.refresh_bindings()
        self.call_after_refresh(settle_garbage)

    # the leaderboard, rebuilt off the UI thread (a report over a thousand battles takes a fifth of a second)

    def _rank(self) -> None:
        if self._ranking:
            self._stale = True
            return
        plan = self.plan
        if plan is None:
            return
        self._ranking, self._stale = True, False
        rows = list(self.rows.values())
        self.run_worker(lambda: self._compute(plan, rows), thread=True, group="leaderboard")

    def _compute(self, plan: CampaignPlan, rows: list[BattleRow]) -> None:
        try:
            report = build_report(plan, rows)
        except Exception as exc:  # a report bug must not take the campaign's view down
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            self.post_message(LeaderboardComputed([], [], len(rows), reason))
            return
        battles = {agent: 0 for agent in report.unranked}
        for battle in report.battles:
            if battle.agent in battles:
                battles[battle.agent] += 1
        findings = finding_rows(rows)
        self.post_message(LeaderboardComputed(report.leaderboard, list(battles.items()), len(rows),
                                              cells=report.cells, findings=findings,
                                              comparisons=report.comparisons))

    @on(LeaderboardComputed)
    def _ranked(self, message: LeaderboardComputed) -> None:
        self._ranking = False
        if message.error:
            self.notify(f"the leaderboard could not be built: {message.error}", severity="error", timeout=8)
        else:
            self.query_one(Leaderboard).show(message.ranked, message.unranked, message.battles)
            self.query_one(TaskTable).show(message.cells)
            self.query_one(ComparisonsTable).show(message.comparisons)
            self._show_pair_detail(self.query_one(ComparisonsTable).cursor_row)
            self._show_findings(message.findings)
        if self._stale:
            self._rank()

    @on(DataTable.RowHighlighted, "#comparisons")
    def _pair_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_pair_detail(event.cursor_row)

    def _show_pair_detail(self, index: int) -> None:
        """Under the pairs: why the highlighted pair has no interval, whole (its column is cut at 80 columns)."""
        comparisons = self.query_one(ComparisonsTable).comparisons
        pair = comparisons[index] if 0 <= index < len(comparisons) else None
        reason = pair.interval.reason if pair is not None else None
        detail = self.query_one("#pair-detail", Static)
        detail.set_class(not reason, "empty")
        text = Text()
        if pair is not None and reason:
            text.append(f"{pair.first} − {pair.second}", style="bold")
            text.append(f"  why no CI: {reason}")
        detail.update(text)

    @on(DataTable.RowHighlighted, "#findings-table")
    def _finding_highlighted(self, event: DataTable.RowHighlighted) -> None:
        table = self.query_one(FindingsTable)
        row = table.findings[event.cursor_row] if 0 <= event.cursor_row < len(table.findings) else None
        self._show_finding_detail(row)

    def _show_finding_detail(self, found: BattleFinding | None) -> None:
        """Under the findings: the highlighted one's battle, what reproduces it and what the red agent measured."""
        detail = self.query_one("#finding-detail", Static)
        detail.set_class(found is None, "empty")
        if found is None:
            detail.update("")
            return
        finding = found.finding
        try:
            measured = evidence_for(evidence_of(self.home, found.battle_id), finding.family, finding.summary)
        except Exception:  # an unreadable ledger hides the evidence, not the finding
            measured = ""
        text = Text()
        text.append("battle ", style="bold")
        text.append(found.battle_id + "\n")
        for label, value in (("reproduce ", finding.reproducer), ("evidence ", measured)):
            shown = " ".join(value.split())
            if shown:
                text.append(label, style="bold")
                text.append(shown + "\n")
        text.rstrip()
        detail.update(text)

    def _show_findings(self, findings: Sequence[BattleFinding]) -> None:
        self.query_one(FindingsTable).show(findings)
        table = self.query_one(FindingsTable)
        self._show_finding_detail(findings[table.cursor_row] if 0 <= table.cursor_row < len(findings) else None)
        self.query_one("#views", TabbedContent).get_tab("view-findings").label = f"Findings ({len(findings)})"
