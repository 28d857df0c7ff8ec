"""``ConsoleApp``: the battle, ledger, campaign and injection screens, switched with ctrl+b / ctrl+l / ctrl+g /
ctrl+y."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen

from logomesh.tasks import TaskSpec
from tui.campaign_runner import CampaignCheck, ExecutorFactory, environment_check, local_executor
from tui.engine import Engine, default_engine
from tui.inject_runner import InjectEngine, default_inject_engine
from tui.memory import settle_garbage
from tui.screens.battle import BattleScreen
from tui.screens.campaign import CampaignScreen
from tui.screens.help import HelpScreen
from tui.screens.injection import InjectionScreen
from tui.screens.ledger import LedgerScreen
from tui.task_library import load_tasks
from tui.widgets.console_footer import NARROW_BELOW

ERROR_TIMEOUT_S = 7 * 24 * 3600.0  # an error toast stays until clicked away: a week is "until dismissed"
SCREEN_ACTIONS = {"show_battle": "battle", "show_ledger": "ledger", "show_campaign": "campaign",
                  "show_injection": "injection"}


class ConsoleApp(App[None]):
    TITLE = "LogoMesh"
    SUB_TITLE = "battle console"
    CSS_PATH = "styles/app.tcss"
    ENABLE_COMMAND_PALETTE = True
    # App types it as an instance variable, so mypy refuses a ClassVar annotation here
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]  # noqa: RUF012

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+b", "show_battle", "Battle"),
        Binding("ctrl+l", "show_ledger", "Ledger"),
        Binding("ctrl+g", "show_campaign", "Campaign"),
        # kept out of the footer: at 80 columns the ledger screen's keys would push "f1 Help" off the line
        Binding("ctrl+y", "show_injection", "Injection", show=False),
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),  # Textual's usual quit key; listed in f1
    ]

    def __init__(self, home: Path, tasks: Sequence[TaskSpec] | None = None, engine: Engine = default_engine,
                 executor_factory: ExecutorFactory = local_executor,
                 campaign_check: CampaignCheck = environment_check,
                 inject_engine: InjectEngine = default_inject_engine) -> None:
        super().__init__()
        self.home = home
        if tasks is None:
            loaded, self.task_problems = load_tasks()
        else:
            loaded, self.task_problems = list(tasks), []
        self.tasks = loaded
        self.engine = engine
        self.executor_factory = executor_factory
        self.campaign_check = campaign_check
        self.inject_engine = inject_engine

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification of the console; an error stays until dismissed (a click on it), never vanishes."""
        if severity == "error":
            timeout = ERROR_TIMEOUT_S
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_mount(self) -> None:
        settle_garbage()
        self.install_screen(BattleScreen(self.home, self.tasks, self.engine), "battle")
        self.install_screen(LedgerScreen(self.home), "ledger")
        campaign = CampaignScreen(self.home, self.tasks, self.executor_factory, check=self.campaign_check)
        self.install_screen(campaign, "campaign")
        self.install_screen(InjectionScreen(self.home, self.tasks, self.inject_engine), "injection")
        self.push_screen("battle")
        for problem in self.task_problems:
            self.notify(f"task skipped: {problem}", severity="warning", timeout=10)

    @property
    def battle_screen(self) -> BattleScreen:
        screen = self.get_screen("battle")
        assert isinstance(screen, BattleScreen)
        return screen

    @property
    def ledger_screen(self) -> LedgerScreen:
        screen = self.get_screen("ledger")
        assert isinstance(screen, LedgerScreen)
        return screen

    @property
    def campaign_screen(self) -> CampaignScreen:
        screen = self.get_screen("campaign")
        assert isinstance(screen, CampaignScreen)
        return screen

    @property
    def injection_screen(self) -> InjectionScreen:
        screen = self.get_screen("injection")
        assert isinstance(screen, InjectionScreen)
        return screen

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the key of the screen already shown, leaving room in an 80-column footer."""
        target = SCREEN_ACTIONS.get(action)
        return target is None or target != self.screen.id

    def action_show_battle(self) -> None:
        if self.screen is not self.battle_screen:
            self.switch_screen("battle")

    def action_show_ledger(self) -> None:
        if self.screen is not self.ledger_screen:
            self.switch_screen("ledger")

    def action_show_campaign(self) -> None:
        if self.screen is not self.campaign_screen:
            self.switch_screen("campaign")

    def action_show_injection(self) -> None:
        if self.screen is not self.injection_screen:
            self.switch_screen("injection")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen.of(self.screen))

    async def action_quit(self) -> None:
        self.battle_screen.runner.cancel()
        self.campaign_screen.runner.cancel()
        self.injection_screen.runner.cancel()
        self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        battle, ledger, campaign = self.battle_screen, self.ledger_screen, self.campaign_screen
        yield SystemCommand("Battle: start", "Start a battle with the form's choices", battle.action_start)
        yield SystemCommand("Battle: cancel", "Stop the running battle; it is recorded", battle.action_cancel)
        yield SystemCommand("Battle: new / hide form", "Show or hide the setup form", battle.action_new_battle)
        yield SystemCommand("Battle: follow newest node", "Keep the newest search node in view",
                            battle.query_one("#tree").action_follow)  # type: ignore[attr-defined]
        yield SystemCommand("Show battle screen", "Set up and watch battles", self.action_show_battle)
        yield SystemCommand("Show ledger screen", "Browse the signed ledger", self.action_show_ledger)
        yield SystemCommand("Show campaign screen", "Run many battles in parallel and rank the agents",
                            self.action_show_campaign)
        yield SystemCommand("Campaign: start", "Start a campaign with the form's choices", campaign.action_start)
        yield SystemCommand("Campaign: cancel", "Stop the campaign now; recorded battles stay",
                            campaign.action_cancel)
        yield SystemCommand("Campaign: new / hide form", "Show or hide the campaign setup form",
                            campaign.action_new_campaign)
        injection = self.injection_screen
        yield SystemCommand("Show injection screen", "Search prompt injections against a purple agent, live",
                            self.action_show_injection)
        yield SystemCommand("Injection: start", "Start an injection run with the form's choices",
                            injection.action_start)
        yield SystemCommand("Injection: cancel", "Stop the run; its queries stay recorded", injection.action_cancel)
        yield SystemCommand("Ledger: verify", "Verify every entry, signatures and proofs", ledger.action_verify)
        yield SystemCommand("Ledger: export", "Write a compliance bundle for the marked entries",
                            ledger.action_export)
        yield SystemCommand("Ledger: reload", "Read the ledger again", ledger.action_reload)
        yield SystemCommand("Keys", "List every key binding", self.action_help)


def run_console(home: Path) -> None:
    """Run the console until the user quits."""
    ConsoleApp(home).run()
