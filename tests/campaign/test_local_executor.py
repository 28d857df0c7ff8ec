"""The local executor with real worker processes, driven by ``run_campaign`` into a real ledger."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import campaign_fakes
import pytest

from ledger import Ledger
from ledger.verify import verify_ledger
from logomesh.campaign.executor import JobFinished, JobStarted
from logomesh.campaign.local import LocalExecutor
from logomesh.campaign.plan import CampaignPlan, Settings, new_plan, parse_agents
from logomesh.campaign.runner import CampaignProgress, campaign_battles, run_campaign
from logomesh.campaign.work import JobDone, PlayFn


def _plan(repeat: int = 3) -> CampaignPlan:
    return new_plan(parse_agents([], ["good"]), ("rate-limiter", "lru-cache"), repeat, 3, Settings(red=False),
                    campaign_id="exec-test")


def _attributes(home: Path, plan: CampaignPlan) -> dict[str, dict[str, str]]:
    return {row.battle_id: dict(row.attributes) for row in campaign_battles(home, plan.campaign_id)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def _wait_until(condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Poll ``condition``; the deadline is a hang guard only (it is met in well under a second)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def _run(plan: CampaignPlan, home: Path, play: PlayFn, workers: int = 2) -> CampaignProgress:
    return run_campaign(plan, home, LocalExecutor(workers, plan.settings, home, play=play))


def test_every_job_is_recorded_once_tagged_and_spread_over_the_workers(tmp_path: Path) -> None:
    plan = _plan()
    progress = _run(plan, tmp_path, campaign_fakes.quick_play)
    assert (progress.done, progress.failed, progress.retried, progress.running) == (6, 0, 0, 0)
    attributes = _attributes(tmp_path, plan)
    assert sorted(attributes) == sorted(j.battle_id for j in plan.jobs())
    assert all(a["campaign_id"] == "exec-test" for a in attributes.values())
    assert len({a["worker_pid"] for a in attributes.values()}) == 2
    assert os.getpid() not in {int(a["worker_pid"]) for a in attributes.values()}
    with Ledger.open(tmp_path) as led:
        scores = {e.battle_id: e.cis_score for e in led.entries()}
    assert scores == {j.battle_id: campaign_fakes.fake_cis(j) for j in plan.jobs()}
    recorded = campaign_battles(tmp_path, plan.campaign_id)
    assert [r.sequence for r in recorded] == list(range(6))  # in ledger order
    assert all(r.result is not None and r.result.battle_id == r.battle_id for r in recorded)
    assert all(isinstance(v, str) for r in recorded for v in r.attributes.values())
    assert verify_ledger(tmp_path).ok


def test_campaign_battles_parse_each_signed_result_once_and_keep_a_stranger_as_none(tmp_path: Path) -> None:
    failed = {"battle_id": "a", "task_id": "t", "status": "failed", "failed_stage": "purple", "reason": "refused",
              "cis_score": 0.0}
    with Ledger.open(tmp_path) as led:
        led.append("a", failed, {"solution.py": b"x = 1\n"}, {"campaign_id": "c", "seed": "5"})
        led.append("z", {**failed, "battle_id": "z"}, {}, {"campaign_id": "elsewhere"})
        led.append("b", {"battle_id": "b", "note": "no status"}, {}, {"campaign_id": "c"})
    rows = campaign_battles(tmp_path, "c")
    assert [(r.sequence, r.battle_id) for r in rows] == [(0, "a"), (2, "b")]
    first = rows[0].result
    assert first is not None and (first.status, first.ending.stage, first.ending.reason) == ("failed", "purple",
                                                                                             "refused")
    assert first.seed == 5  # a result without its seed takes the signed attribute's
    assert rows[0].input_digests == {"solution.py": hashlib.sha256(b"x = 1\n").hexdigest()}
    assert rows[1].result is None and rows[1].attributes == {"campaign_id": "c"}


def test_a_worker_lost_mid_battle_is_replaced_and_the_battle_runs_again_with_the_retry_recorded(
    tmp_path: Path,
) -> None:
    plan = _plan()
    progress = _run(plan, tmp_path, campaign_fakes.crash_first_attempt)
    even = {j.battle_id for j in plan.jobs() if j.index % 2 == 0}
    assert progress.retried == len(even) and progress.done == 6 and progress.failed == 0
    attributes = _attributes(tmp_path, plan)
    assert {b for b, a in attributes.items() if a.get("attempts") == "2"} == even
    assert verify_ledger(tmp_path).ok


def test_a_battle_whose_worker_always_dies_is_recorded_failed_after_three_attempts(tmp_path: Path) -> None:
    plan = new_plan(parse_agents([], ["good"]), ("rate-limiter",), 1, 3, Settings(red=False), campaign_id="doomed")
    progress = _run(plan, tmp_path, campaign_fakes.always_crash, workers=1)
    assert (progress.done, progress.failed, progress.retried) == (1, 1, 2)
    [row] = campaign_battles(tmp_path, "doomed")
    result = row.result
    assert result is not None
    assert result.status == "failed" and result.ending.stage == "engine"
    assert "died (exit code 17)" in result.ending.reason and "(3 attempts)" in result.ending.reason


def test_a_play_function_that_raises_is_a_recorded_failure_not_a_crash(tmp_path: Path) -> None:
    plan = _plan(repeat=1)
    progress = _run(plan, tmp_path, campaign_fakes.raise_error)
    assert (progress.done, progress.failed) == (2, 2)
    reasons = {row.result.ending.reason if row.result else "" for row in campaign_battles(tmp_path, plan.campaign_id)}
    assert reasons == {f"worker error: RuntimeError: play broke on {j.battle_id}" for j in plan.jobs()}


def test_no_job_is_handed_out_until_the_driver_asks_for_more(tmp_path: Path) -> None:
    """Back-pressure: a driver busy writing the ledger holds the pool; finished work waits, it is not lost."""
    plan = _plan()
    executor = LocalExecutor(2, plan.settings, tmp_path, play=campaign_fakes.marking_play)
    events = executor.run(plan.jobs())
    first = [next(events), next(events)]
    assert all(isinstance(e, JobStarted) for e in first)
    played = tmp_path / "played"
    _wait_until(lambda: played.is_dir() and len(list(played.iterdir())) >= 2)  # both workers finished their job
    third = next(events)  # nothing more may have been dispatched meanwhile
    assert isinstance(third, JobFinished)
    seen = [third, *events]
    finished = [e.done for e in [*first, *seen] if isinstance(e, JobFinished)]
    started = [e.job for e in [*first, *seen] if isinstance(e, JobStarted)]
    assert sorted(d.job.index for d in finished) == list(range(6))
    assert sorted(j.index for j in started) == list(range(6))
    assert all(isinstance(d, JobDone) for d in finished)


def test_closing_the_run_stops_every_worker(tmp_path: Path) -> None:
    plan = _plan()
    executor = LocalExecutor(2, plan.settings, tmp_path, play=campaign_fakes.slow_play)
    events = executor.run(plan.jobs())
    next(events)
    pids = executor.worker_pids()
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    events.close()
    assert not any(_alive(p) for p in pids)


def test_a_worker_killed_from_outside_loses_nothing(tmp_path: Path) -> None:
    plan = _plan()
    executor = LocalExecutor(2, plan.settings, tmp_path, play=campaign_fakes.stall_first_job)
    killed: list[int] = []

    def kill_the_busy_worker() -> None:  # the one stalled in job 0: busy, whatever the load
        stalled = tmp_path / campaign_fakes.STALLED
        _wait_until(stalled.exists)
        killed.append(int(stalled.read_text()))
        os.kill(killed[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_the_busy_worker, daemon=True)
    killer.start()
    progress = run_campaign(plan, tmp_path, executor)
    killer.join(timeout=5)
    assert killed and progress.done == 6 and progress.retried == 1 and progress.failed == 0
    attributes = _attributes(tmp_path, plan)
    assert sorted(attributes) == sorted(j.battle_id for j in plan.jobs())
    assert [a.get("attempts") for a in attributes.values()].count("2") == 1
    assert str(killed[0]) not in {a["worker_pid"] for a in attributes.values()}
    assert verify_ledger(tmp_path).ok


def test_worker_output_goes_to_the_log_file_not_the_terminal(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    plan = _plan(repeat=1)
    log = tmp_path / "logs" / "workers.log"
    run_campaign(plan, tmp_path, LocalExecutor(2, plan.settings, tmp_path, play=campaign_fakes.noisy_play,
                                               log_file=log))
    printed = log.read_text()
    for job in plan.jobs():
        assert f"stdout of {job.battle_id}" in printed and f"stderr of {job.battle_id}" in printed
    out, err = capfd.readouterr()
    assert "stdout of" not in out + err
    assert log.stat().st_mode & 0o777 == 0o600


def test_an_executor_needs_a_worker(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        LocalExecutor(0, Settings(), tmp_path)


@pytest.mark.parametrize(("sandbox", "sweeps"), [("bwrap", 0), ("docker", 2), ("auto", 2)])
def test_only_a_campaign_that_may_use_docker_sweeps_docker_for_orphans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str, sweeps: int
) -> None:
    calls: list[int] = []
    monkeypatch.setattr("logomesh.sandbox.docker.remove_orphans", lambda: calls.append(1) or 0)
    plan = new_plan(parse_agents([], ["good"]), ("rate-limiter",), 1, 3, Settings(red=False, sandbox=sandbox),
                    campaign_id="sweep-test")
    progress = _run(plan, tmp_path, campaign_fakes.quick_play, workers=1)
    assert progress.done == 1
    assert len(calls) == sweeps


def test_an_interrupt_from_another_thread_stops_battles_in_flight_at_once(tmp_path: Path) -> None:
    """What the console's cancel does: no waiting for a battle to end, nothing in flight recorded, no worker left."""
    plan = _plan()
    executor = LocalExecutor(2, plan.settings, tmp_path, play=campaign_fakes.endless_play)
    pids: list[int] = []
    interrupted_at: list[float] = []

    def observe(progress: CampaignProgress, recorded: JobDone | None) -> None:
        if progress.running == 2 and not interrupted_at:
            pids.extend(executor.worker_pids())
            interrupted_at.append(time.monotonic())
            threading.Timer(0.5, executor.interrupt).start()  # both battles are in flight

    progress = run_campaign(plan, tmp_path, executor, observe)
    assert interrupted_at  # the battles never end (endless_play): returning at all is not waiting for them
    assert (progress.done, progress.running) == (0, 2)
    assert len(pids) == 2 and not any(_alive(pid) for pid in pids)
    assert campaign_battles(tmp_path, plan.campaign_id) == []
