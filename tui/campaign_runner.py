"""The one place where a campaign's progress becomes Textual messages.

``CampaignRunner`` runs ``run_campaign`` in a thread worker. Its observer, which
the campaign driver calls on that thread after every executor event, only copies
the progress and the battle just recorded into a locked buffer, so the driver
never waits on the UI. A 50 ms timer on the UI thread drains the buffer into one
``CampaignProgressed`` (the latest progress and every battle recorded since the
last tick), then posts ``CampaignEnded`` once ``run_campaign`` has returned.

Cancel takes effect at once: it interrupts the executor, whose ``run`` stops
waiting for battles in flight, drops them and stops its workers, and the observer
raises ``CampaignCancelled`` if the driver was between events. Every battle
already recorded stays in the ledger and has been reported; none is half-written,
because the driver records a battle before it calls the observer.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.timer import Timer
from textual.widget import Widget

from logomesh.campaign.executor import Executor
from logomesh.campaign.model import BattleRow
from logomesh.campaign.plan import CampaignPlan, Settings, save_plan
from logomesh.campaign.reading import rows_from_ledger
from logomesh.campaign.runner import CampaignProgress, campaign_battles, run_campaign
from logomesh.campaign.work import JobDone
from logomesh.cancel import CANCEL_REASON
from tui.messages import CampaignEnded, CampaignProgressed

ExecutorFactory = Callable[[int, Settings, Path], Executor]
"""Builds the executor for a campaign from (workers, settings, home); tests pass a scripted one."""
CampaignCheck = Callable[[CampaignPlan], None]
"""Checks, before anything is recorded, that a campaign can start; raises ``EnvironmentProblem`` if not."""
NOT_STARTED = "the campaign cannot start (nothing was recorded)"

FLUSH_INTERVAL_S = 0.05
_swap_lock = threading.Lock()


class CampaignCancelled(Exception):
    """Raised inside the campaign driver, from its observer, once the user cancels."""


def local_executor(workers: int, settings: Settings, home: Path) -> Executor:
    from logomesh.campaign.local import LocalExecutor

    start_resource_tracker()
    return LocalExecutor(workers, settings, home, log_file=home / "logs" / "console-campaign.log")


def environment_check(plan: CampaignPlan) -> None:
    """What ``campaign run`` checks once before its first battle (``logomesh.battle.preflight``): every purple agent's
    card answers with the protocol asked for, then a sandbox opens here, where the local workers run their battles.
    The agents go first: an unreachable URL is the likelier mistake and the quicker check."""
    from logomesh.battle.preflight import check_environment

    settings = plan.settings
    urls = tuple(agent.url for agent in plan.agents if agent.url is not None)
    check_environment(None, urls, settings.protocol, min(10.0, settings.purple_timeout_s))
    check_environment(settings.sandbox)


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with a real stderr, before the first worker is spawned.

    The first spawn starts the tracker and hands it ``sys.stderr.fileno()``; under Textual
    ``sys.stderr`` is a print capture whose ``fileno()`` is -1, and the spawn fails with
    "bad value(s) in fds_to_keep". The tracker is started once per process.
    """
    from multiprocessing import resource_tracker

    real = sys.__stderr__
    if real is None or sys.stderr is real:
        resource_tracker.ensure_running()
        return
    with _swap_lock:
        captured, sys.stderr = sys.stderr, real
        try:
            resource_tracker.ensure_running()
        finally:
            sys.stderr = captured


def battle_row(done: JobDone) -> BattleRow:
    """A battle the driver just recorded, as the leaderboard counts it."""
    job = done.job
    return BattleRow(battle_id=job.battle_id, agent=job.agent.name, task_id=job.task_id, repeat=job.repeat,
                     result=done.played.result, attempts=job.attempt)


def snapshot(progress: CampaignProgress) -> CampaignProgress:
    """A copy the UI can keep: the driver goes on changing the original."""
    return dataclasses.replace(progress, stage_seconds=dict(progress.stage_seconds))


@dataclass(frozen=True)
class _Ending:
    status: str  # finished, cancelled or error
    reason: str


class CampaignRunner:
    """Runs one campaign off the UI thread and reports it to ``target`` as messages."""

    def __init__(self, target: Widget, home: Path, executor_factory: ExecutorFactory = local_executor,
                 check: CampaignCheck = environment_check) -> None:
        self._target = target
        self._home = home
        self._executor_factory = executor_factory
        self._check = check
        self._lock = threading.Lock()
        self._progress: CampaignProgress | None = None
        self._rows: list[BattleRow] = []
        self._dirty = False
        self._ending: _Ending | None = None
        self._cancel = threading.Event()
        self._executor: Executor | None = None
        self._timer: Timer | None = None
        self.running = False

    def start(self, plan: CampaignPlan, workers: int) -> None:
        """Start ``plan`` with ``workers`` workers in a thread worker; call on the UI thread."""
        if self.running:
            raise RuntimeError("a campaign is already running")
        self.running = True
        self._cancel.clear()
        with self._lock:
            self._progress, self._rows, self._dirty, self._ending = None, [], False, None
        self._timer = self._target.set_interval(FLUSH_INTERVAL_S, self.flush)
        self._target.run_worker(lambda: self._run(plan, workers), thread=True, group="campaign",
                                name=plan.campaign_id)

    def cancel(self) -> None:
        """Stop the campaign now (see the module docstring); safe before the executor exists."""
        if not self.running:
            return
        self._cancel.set()
        with self._lock:
            executor = self._executor
        if executor is not None:
            executor.interrupt()

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set()

    def observe(self, progress: CampaignProgress, recorded: JobDone | None) -> None:
        """The driver's observer: buffer, then raise if the user cancelled (the battle is recorded by then)."""
        copy = snapshot(progress)
        row = battle_row(recorded) if recorded is not None else None
        with self._lock:
            self._progress = copy
            if row is not None:
                self._rows.append(row)
            self._dirty = True
        if self._cancel.is_set():
            raise CampaignCancelled(CANCEL_REASON)

    def _run(self, plan: CampaignPlan, workers: int) -> None:
        from logomesh.battle.preflight import EnvironmentProblem

        try:
            self._check(plan)  # before the plan is saved: a campaign that cannot start leaves nothing behind
        except EnvironmentProblem as exc:
            with self._lock:
                self._ending = _Ending("error", f"{NOT_STARTED}: {exc}".splitlines()[0])
            return
        try:
            if self._cancel.is_set():
                raise CampaignCancelled(CANCEL_REASON)
            save_plan(self._home, plan)
            earlier = rows_from_ledger(plan, campaign_battles(self._home, plan.campaign_id))
            with self._lock:
                self._rows.extend(earlier)  # a campaign started again resumes: its recorded battles count
            executor = self._executor_factory(workers, plan.settings, self._home)
            with self._lock:
                self._executor = executor
            if self._cancel.is_set():  # cancelled while the executor was being built
                raise CampaignCancelled(CANCEL_REASON)
            progress = run_campaign(plan, self._home, executor, self.observe)
        except CampaignCancelled:
            ending = _Ending("cancelled", CANCEL_REASON)
        except Exception as exc:  # the UI must survive any driver or executor failure
            ending = _Ending("error", f"{type(exc).__name__}: {exc}".splitlines()[0])
        else:
            cut_short = self._cancel.is_set() and progress.already + progress.done < progress.total
            ending = _Ending("cancelled", CANCEL_REASON) if cut_short else _Ending("finished", "")
        finally:
            with self._lock:
                self._executor = None
        with self._lock:
            if ending.status == "cancelled" and self._progress is not None and self._progress.running:
                dropped, self._progress = self._progress.running, dataclasses.replace(self._progress, running=0)
                ending = _Ending("cancelled", f"{CANCEL_REASON}; {dropped} battle(s) in flight dropped, none recorded")
            self._ending = ending

    def flush(self) -> None:
        """Post what the driver reported since the last tick; once it returned, post ``CampaignEnded``."""
        posted: tuple[CampaignProgress, list[BattleRow]] | None = None
        with self._lock:
            if self._dirty and self._progress is not None:
                posted = (self._progress, self._rows)
                self._rows, self._dirty = [], False
            ending, last = self._ending, self._progress
        if posted is not None:
            self._target.post_message(CampaignProgressed(*posted))
        if ending is not None and self.running:
            self.running = False
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self._target.post_message(CampaignEnded(ending.status, last, ending.reason))
