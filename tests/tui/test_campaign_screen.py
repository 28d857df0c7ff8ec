"""Pilot tests of the campaign screen: a scripted executor driven by the real ``run_campaign``, a real ledger.

The scripted scores make the leaderboard known in advance:

* ``good`` scores 0.8 everywhere (its first battle loses its worker once and is retried);
* ``no-lock`` scores 0.55 on repeat 1 and 0.65 on repeat 2;
* ``alice`` scores 0.3, but fails in the sandbox on task-a r1 (infrastructure: left out of its mean)
  and at the purple stage on task-b r2 (counted as CIS 0).
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import scipy.stats
from pilot_helpers import run, run_from_palette, shows, until
from scripted_campaign import AGENT_FAILURE, INFRA_FAILURE, Failed, ScriptedExecutor, nothing_to_check
from scripted_engine import make_task
from textual.pilot import Pilot
from textual.widgets import Input, ProgressBar, SelectionList, Static, TabbedContent, TextArea

from ledger import Ledger
from logomesh.campaign.plan import CAMPAIGNS_DIR, BattleJob, Settings
from logomesh.campaign.runner import campaign_battles
from tui.app import ConsoleApp
from tui.screens.campaign import CampaignScreen
from tui.screens.help import HelpScreen
from tui.widgets.campaign.comparisons import ComparisonsTable
from tui.widgets.campaign.findings_table import FindingsTable
from tui.widgets.campaign.leaderboard import Leaderboard
from tui.widgets.campaign.progress_panel import CampaignProgressPanel
from tui.widgets.campaign.setup_form import CampaignSetupForm
from tui.widgets.campaign.task_table import TaskTable
from tui.widgets.form_values import FormError

TASKS = ("task-a", "task-b")


def score(job: BattleJob) -> float | Failed:
    if job.agent.name == "good":
        return 0.8
    if job.agent.name == "no-lock":
        return 0.55 if job.repeat == 1 else 0.65
    if (job.task_id, job.repeat) == ("task-a", 1):
        return Failed(INFRA_FAILURE)
    if (job.task_id, job.repeat) == ("task-b", 2):
        return Failed(AGENT_FAILURE)
    return 0.3


def expected_row(task_means: list[float]) -> tuple[str, str]:
    """The mean and 95% CI cells the leaderboard must show for these task means (scipy's t interval, clipped)."""
    n = len(task_means)
    mean = sum(task_means) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in task_means) / (n - 1))
    low, high = scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=sd / math.sqrt(n))
    return f"{mean:.3f}", f"{max(0.0, low):.3f}–{min(1.0, high):.3f}"




def make_app(tmp_path: Path, executor: ScriptedExecutor) -> ConsoleApp:
    tasks = [make_task(tmp_path / name, name, ("good", "no-lock", "slow")) for name in TASKS]
    return ConsoleApp(tmp_path / "home", tasks=tasks, executor_factory=executor.factory,
                     campaign_check=nothing_to_check)


async def open_campaign(pilot: Pilot[None], app: ConsoleApp, mocks: str, purples: str = "", repeat: int = 2,
                        workers: int = 3) -> CampaignScreen:
    await pilot.press("ctrl+g")
    await pilot.pause()
    screen = app.campaign_screen
    assert app.screen is screen
    screen.query_one("#mocks", Input).value = mocks
    screen.query_one("#purples", TextArea).text = purples
    screen.query_one("#repeat", Input).value = str(repeat)
    screen.query_one("#workers", Input).value = str(workers)
    return screen


def shown_rows(screen: CampaignScreen) -> list[tuple[str, ...]]:
    table = screen.query_one(Leaderboard)
    return [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]



def test_a_campaign_runs_to_the_end_and_ranks_the_agents_by_mean_cis(tmp_path: Path) -> None:
    executor = ScriptedExecutor(score, lose=[("good", "task-a", 1)])
    app = make_app(tmp_path, executor)

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_campaign(pilot, app, "good, no-lock", "alice=http://127.0.0.1:9")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            await pilot.pause(0.1)
            assert screen.last_ending is not None and screen.last_ending.status == "finished"
            assert (executor.workers, executor.settings.red, executor.settings.red_budget_s) == (3, True, 10.0)

            total = len(TASKS) * 3 * 2
            panel = screen.query_one(CampaignProgressPanel)
            progress = panel.progress
            assert progress is not None
            assert (progress.total, progress.recorded, progress.done) == (total, total, total)
            assert (progress.failed, progress.retried, progress.running) == (2, 1, 0)
            bar = screen.query_one(ProgressBar)
            assert (bar.total, bar.progress) == (total, total)
            counts = str(screen.query_one("#counts", Static).render())
            assert counts.startswith("done 12  failed 2  running 0  retried 1  ")
            assert str(screen.query_one("#recorded", Static).render()) == "12/12 battles"
            assert panel.status == "finished"

            # two tasks: the task is the unit, so good's and no-lock's identical task means give no interval, and
            # no pair can be separated (a paired bootstrap needs five shared tasks): all three tie at rank 1
            alice = expected_row([0.3, (0.3 + 0.0) / 2])  # task-a without its sandbox failure, task-b with the 0
            assert alice == ("0.225", "0.000–1.000")  # t with 1 df reaches far past both ends: clipped
            assert shown_rows(screen) == [
                ("=1", "good", "0.800", "n/a", "2", "0/2", "4", "0"),
                ("=1", "no-lock", "0.600", "n/a", "2", "0/2", "4", "0"),
                ("=1", "alice", *alice, "2", "0/2", "4", "2"),
            ]
            subtitle = str(screen.query_one(Leaderboard).border_subtitle)
            assert subtitle.startswith("n/a for good: all 2 tasks have the same mean 0.8000: no spread")
            assert "n/a for no-lock: all 2 tasks have the same mean 0.6000" in subtitle
            assert screen.plan is not None
            recorded = campaign_battles(app.home, screen.plan.campaign_id)
            assert sorted(r.battle_id for r in recorded) == sorted(j.battle_id for j in screen.plan.jobs())
            retried = [r.battle_id for r in recorded if r.attributes.get("attempts") == "2"]
            assert retried == [f"task-a:good:{screen.plan.campaign_id}:r1"]
    run(scenario)


def test_cancel_stops_the_campaign_keeps_what_was_reported_and_a_restart_resumes_it(tmp_path: Path) -> None:
    executor = ScriptedExecutor(score, hold_after=3)
    app = make_app(tmp_path, executor)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_campaign(pilot, app, "good, no-lock", workers=2)
            await pilot.press("ctrl+r")
            panel = screen.query_one(CampaignProgressPanel)
            await until(pilot, lambda: panel.progress is not None and panel.progress.done == 3)
            await pilot.press("escape")  # the executor is holding its next battle back: cancel must not wait for it
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            assert screen.last_ending is not None and screen.last_ending.status == "cancelled"
            assert not executor.release.is_set() and executor.interrupted.is_set()
            assert "2 battle(s) in flight dropped" in screen.last_ending.reason  # two workers were busy
            assert panel.progress is not None and panel.progress.running == 0
            assert executor.closed.wait(60), "the executor was not closed"
            events = len(executor.events)
            await pilot.pause(0.3)
            assert len(executor.events) == events, "the executor went on after the cancel"
            assert panel.progress is not None
            reported = panel.progress.done
            assert 3 <= reported < 8
            plan = screen.plan
            assert plan is not None
            in_ledger = {r.battle_id for r in campaign_battles(app.home, plan.campaign_id)}
            assert in_ledger == set(screen.rows) == set(executor.finished)
            assert len(in_ledger) == reported
            assert sum(int(row[6]) for row in shown_rows(screen)) == reported

            executor.release.set()  # the resumed run is not held (it waited out the hold's old 10 s before)
            await pilot.press("ctrl+n", "ctrl+r")  # the same choices: the same campaign, resumed
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            assert screen.last_ending is not None and screen.last_ending.status == "finished"
            assert screen.plan is not None and screen.plan.campaign_id == plan.campaign_id
            assert set(executor.runs[1]) == {job.battle_id for job in plan.jobs()} - in_ledger
            progress = panel.progress
            assert progress is not None and (progress.already, progress.recorded) == (reported, 8)
            assert str(screen.query_one("#recorded", Static).render()) == f"8/8 battles ({reported} from before)"
            assert sum(int(row[6]) for row in shown_rows(screen)) == 8
            assert [row[1] for row in shown_rows(screen)] == ["good", "no-lock"]
            with Ledger.open(app.home) as led:
                ids = [entry.battle_id for entry in led.entries()]
            assert len(ids) == len(set(ids)) == 8
    run(scenario)


def test_the_form_refuses_what_cannot_run_and_names_the_fix(tmp_path: Path) -> None:
    executor = ScriptedExecutor(score)
    tasks = [make_task(tmp_path / "task-a", "task-a", ("good", "slow")), make_task(tmp_path / "task-b", "task-b")]
    app = ConsoleApp(tmp_path / "home", tasks=tasks, executor_factory=executor.factory,
                     campaign_check=nothing_to_check)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+g")
            await pilot.pause()
            screen = app.campaign_screen
            form = screen.query_one(CampaignSetupForm)
            mocks = screen.query_one("#mocks", Input)
            purples = screen.query_one("#purples", TextArea)
            assert form.choice().agents[0].mock_variant == "good"  # the default: one mock agent, every task
            assert form.choice().task_ids == TASKS
            mocks.value = "good, slow"
            with pytest.raises(FormError, match="'slow' is not offered by every chosen task"):
                form.choice()
            mocks.value = ""
            with pytest.raises(FormError, match="no agent"):
                form.choice()
            purples.text = "bob"
            with pytest.raises(FormError, match="write NAME=URL"):
                form.choice()
            purples.text = "bob=ftp://x"
            with pytest.raises(FormError, match="http:// or https://"):
                form.choice()
            purples.text = "bob=http://127.0.0.1:9\nbob=http://127.0.0.1:10"
            with pytest.raises(FormError, match="given twice"):
                form.choice()
            purples.text = "bob=http://127.0.0.1:9"
            screen.query_one("#workers", Input).value = "0"
            with pytest.raises(FormError, match="workers must lie between 1"):
                form.choice()
            screen.query_one("#workers", Input).value = "2"
            screen.query_one("#seed", Input).value = "-1"  # campaign seeds run from 0, as on the command line
            with pytest.raises(FormError, match="seed must lie between 0"):
                form.choice()
            screen.query_one("#seed", Input).value = "0"
            screen.query_one("#repeat", Input).value = "12700000"  # a pasted number, refused before any job is built
            with pytest.raises(FormError, match="repeat must lie between 1 and 1000"):
                form.choice()
            screen.query_one("#repeat", Input).value = "1"
            screen.query_one("#tasks", SelectionList).deselect_all()
            await pilot.pause()
            with pytest.raises(FormError, match="no task chosen"):
                form.choice()
            await pilot.press("ctrl+r")
            await pilot.pause(0.1)
            assert executor.runs == [] and not screen.runner.running
            screen.query_one("#tasks", SelectionList).select("task-a")
            mocks.value = "slow"
            await pilot.pause()
            choice = form.choice()  # task-a alone offers "slow"
            assert choice.task_ids == ("task-a",) and [a.name for a in choice.agents] == ["bob", "slow"]
    run(scenario)


def test_an_executor_that_cannot_start_ends_the_campaign_with_its_reason(tmp_path: Path) -> None:
    def broken(workers: int, settings: Settings, home: Path) -> ScriptedExecutor:
        raise RuntimeError("no Docker engine answers\nsecond line")

    tasks = [make_task(tmp_path / name, name) for name in TASKS]
    app = ConsoleApp(tmp_path / "home", tasks=tasks, executor_factory=broken, campaign_check=nothing_to_check)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+g")
            screen = app.campaign_screen
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            assert screen.last_ending is not None
            assert (screen.last_ending.status, screen.last_ending.reason) == \
                ("error", "RuntimeError: no Docker engine answers")
            assert screen.query_one(CampaignProgressPanel).status == "error"
            assert not screen.runner.running
            assert screen.check_action("start", ())
    run(scenario)


def test_a_campaign_whose_agent_does_not_answer_never_starts_and_records_nothing(tmp_path: Path) -> None:
    """The console's pre-flight is the CLI's (``logomesh.battle.preflight``): the agents' cards, then the sandbox."""
    with socket.socket() as probe:  # a loopback port nobody listens on: the card request is refused at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    executor = ScriptedExecutor(score)
    built: list[int] = []

    def factory(workers: int, settings: Settings, home: Path) -> ScriptedExecutor:
        built.append(workers)
        return executor.factory(workers, settings, home)

    tasks = [make_task(tmp_path / name, name) for name in TASKS]
    app = ConsoleApp(tmp_path / "home", tasks=tasks, executor_factory=factory)  # the real pre-flight

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_campaign(pilot, app, "good", f"alice=http://127.0.0.1:{port}")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            assert screen.last_ending is not None
            status, reason = screen.last_ending.status, screen.last_ending.reason
            assert status == "error" and reason.startswith("the campaign cannot start (nothing was recorded): ")
            assert f"127.0.0.1:{port}" in reason and "\n" not in reason
            await shows(pilot, app, ["the campaign cannot start"], "after a refused pre-flight")
    run(scenario)
    assert built == []  # no worker was started
    assert not (app.home / "battles.db").exists()  # no ledger entry, not even a ledger
    assert not (app.home / CAMPAIGNS_DIR).exists()  # no saved plan


def test_the_campaign_screen_is_reached_by_key_and_palette_and_its_keys_are_listed(tmp_path: Path) -> None:
    app = make_app(tmp_path, ScriptedExecutor(score))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await pilot.pause()
            await pilot.press("ctrl+g")
            await pilot.pause()
            assert isinstance(app.screen, CampaignScreen)
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            described = {description for _, description in app.screen.rows}
            assert {"Start", "Form", "Battle", "Ledger", "Help", "Quit"} <= described
            await pilot.press("escape", "ctrl+b")
            await pilot.pause()
            assert app.screen is app.battle_screen
            titles = {command.title for command in app.get_system_commands(app.screen)}
            assert {"Show campaign screen", "Campaign: start", "Campaign: cancel"} <= titles
            await run_from_palette(pilot, app, "Show campaign screen")
            await until(pilot, lambda: app.screen is app.campaign_screen)
    run(scenario)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_campaign_screen_renders_mid_campaign_and_finished(tmp_path: Path, size: tuple[int, int]) -> None:
    executor = ScriptedExecutor(score, hold_after=3)
    app = make_app(tmp_path, executor)

    async def scenario() -> None:
        async with app.run_test(size=size) as pilot:
            screen = await open_campaign(pilot, app, "good, no-lock", workers=2)
            await shows(pilot, app, ("New campaign", "task-a", "task-b", "Mock", "good, no-lock", "Purple", "Repeat",
                                     "Workers", "Seed", "Red s", "Start",
                                     "mock variants they all offer: good, no-lock, slow"), f"on the form at {size}")
            await pilot.press("ctrl+r")
            panel = screen.query_one(CampaignProgressPanel)
            await until(pilot, lambda: panel.progress is not None and panel.progress.done == 3
                        and screen.query_one(Leaderboard).battles == 3)
            assert screen.plan is not None
            mid = await shows(pilot, app, (f"Campaign {screen.plan.campaign_id}", "running", "3/8 battles",
                                           "done 3  failed 0  running 2  retried 0", "/min", "ETA", "Leaderboard",
                                           "mean CIS", "95% CI", "good", "0.800", "no-lock", "0.550", "Cancel"),
                              f"mid-campaign at {size}")
            assert "New campaign" not in mid, "the form takes room while the campaign runs"
            executor.release.set()
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            await shows(pilot, app, ("finished", "8/8 battles", "100%", "done 8  failed 0  running 0", "over 8 battles",
                                     "=1", "0.800", "0.600", "Start"), f"when finished at {size}")
    run(scenario)


SPAWN_UNDER_CAPTURE = """
import multiprocessing, os, sys

class Capture:  # what Textual puts in sys.stderr while an app runs
    def write(self, text): return len(text)
    def flush(self): pass
    def fileno(self): return -1

if __name__ == "__main__":
    sys.stderr = Capture()
    if sys.argv[1] == "tracker-started":
        from tui.campaign_runner import start_resource_tracker  # here: the spawned child need not import it
        start_resource_tracker()
    worker = multiprocessing.get_context("spawn").Process(target=os.getpid)
    worker.start()
    worker.join()
    sys.__stdout__.write(f"worker exit {worker.exitcode}")
"""


def test_local_workers_can_be_spawned_while_textual_captures_stderr(tmp_path: Path) -> None:
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN_UNDER_CAPTURE)
    repo = Path(__file__).resolve().parents[2]

    def spawn(mode: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), mode], cwd=repo, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PYTHONPATH": str(repo)})

    plain = spawn("plain")
    assert plain.returncode != 0 and "worker exit" not in plain.stdout, "the premise no longer holds"
    fixed = spawn("tracker-started")
    assert (fixed.returncode, fixed.stdout) == (0, "worker exit 0")


def test_a_campaign_keeps_running_while_another_screen_is_shown(tmp_path: Path) -> None:
    executor = ScriptedExecutor(score, hold_after=2)
    app = make_app(tmp_path, executor)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_campaign(pilot, app, "good, no-lock", repeat=1, workers=2)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: len(executor.finished) == 2)
            await pilot.press("ctrl+b")
            await pilot.pause()
            assert app.screen is app.battle_screen
            executor.release.set()
            assert executor.closed.wait(60)
            await pilot.pause(0.3)
            await pilot.press("ctrl+g")
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            panel = screen.query_one(CampaignProgressPanel)
            assert panel.progress is not None and panel.progress.done == 4 and panel.status == "finished"
            assert [row[1:3] for row in shown_rows(screen)] == [("good", "0.800"), ("no-lock", "0.550")]
    run(scenario)


def race_findings(job: BattleJob) -> list[dict[str, object]]:
    """no-lock loses updates under threads on every task; on task-b repeat 2 it also leaks a medium one."""
    if job.agent.name != "no-lock":
        return []
    found: list[dict[str, object]] = [{"family": "race", "severity": "high", "cwe": "CWE-362",
                                       "summary": f"lost update on {job.task_id}", "confirmations": 2,
                                       "reproducer": f"8 threads add to one {job.task_id} counter"}]
    if (job.task_id, job.repeat) == ("task-b", 2):
        found.append({"family": "resource", "severity": "medium", "cwe": "CWE-400", "summary": "unbounded growth",
                      "confirmations": 2})
    return found


@pytest.mark.slow
def test_the_per_task_and_findings_views_break_the_campaign_down(tmp_path: Path) -> None:
    executor = ScriptedExecutor(score, findings=race_findings)
    app = make_app(tmp_path, executor)

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_campaign(pilot, app, "good, no-lock")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            await pilot.pause(0.1)
            views = screen.query_one("#views", TabbedContent)
            assert views.active == "view-leaders"

            await pilot.press("v")
            assert views.active == "view-pairs" and screen.query_one(ComparisonsTable).has_focus
            (pair,) = screen.query_one(ComparisonsTable).comparisons
            assert (pair.first, pair.second, pair.shared_tasks, pair.verdict) == ("good", "no-lock", 2, "tie")
            await shows(pilot, app, ("good − no-lock", "0.200", "tie", "2 shared tasks: a paired bootstrap"),
                        "in the pairs view")

            await pilot.press("v")
            assert views.active == "view-tasks" and screen.query_one(TaskTable).has_focus
            table = screen.query_one(TaskTable)
            rows = [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
            assert [row[:4] for row in rows] == [("task-a", "good", "2/2", "0.800"),
                                                  ("task-a", "no-lock", "2/2", "0.600"),
                                                  ("task-b", "good", "2/2", "0.800"),
                                                  ("task-b", "no-lock", "2/2", "0.600")]
            assert [row[6] for row in rows] == ["0", "2", "0", "3"]  # findings per cell

            await pilot.press("v")
            assert views.active == "view-findings"
            found = screen.query_one(FindingsTable).findings
            assert [(f.finding.severity, f.task_id, f.repeat) for f in found] == [
                ("high", "task-a", 1), ("high", "task-a", 2), ("high", "task-b", 1), ("high", "task-b", 2),
                ("medium", "task-b", 2)]
            assert str(views.get_tab("view-findings").label) == "Findings (5)"
            await shows(pilot, app, ("CWE-400", "unbounded growth", "lost update on task-a"), "in the findings view")
            # the highlighted finding's battle and reproducer, under the table
            await shows(pilot, app, (f"battle  {found[0].battle_id}", "reproduce  8 threads add to one task-a counter"),
                        "under the findings")  # two spaces: the screenshot's text joins the bold label and the rest
            await pilot.press("v")
            assert views.active == "view-leaders"
    run(scenario)
