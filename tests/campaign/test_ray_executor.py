"""The Ray executor against a real local Ray instance started here (not a mock)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import campaign_fakes
import pytest

from ledger.verify import verify_ledger
from logomesh.campaign.plan import CampaignPlan, Settings, new_plan, parse_agents
from logomesh.campaign.ray_executor import RayExecutor, RayUnavailable
from logomesh.campaign.runner import CampaignProgress, campaign_battles, run_campaign
from logomesh.campaign.work import JobDone

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'logomesh[ray]')")


def test_an_unreachable_cluster_is_one_clear_error_within_seconds(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port on loopback that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    executor = RayExecutor(1, Settings(), tmp_path, address=f"127.0.0.1:{port}")
    with pytest.raises(RayUnavailable, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        next(executor.run(_plan("ray-none").jobs()))
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One small local Ray instance for the module; the executor joins it rather than starting its own."""
    ray.cloudpickle.register_pickle_by_value(campaign_fakes)  # Ray workers need not import the tests
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _plan(campaign_id: str, repeat: int = 2, **settings: object) -> CampaignPlan:
    return new_plan(parse_agents([], ["good"]), ("rate-limiter", "fib-recursive"), repeat, 5,
                    Settings(**settings), campaign_id)  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_ray_worker_lost_mid_battle_is_retried_and_the_retry_recorded(local_ray: None, tmp_path: Path) -> None:
    plan = _plan("ray-crash", red=False)
    progress = run_campaign(plan, tmp_path, RayExecutor(2, plan.settings, tmp_path,
                                                        play=campaign_fakes.crash_first_attempt))
    even = {j.battle_id for j in plan.jobs() if j.index % 2 == 0}
    assert (progress.done, progress.failed, progress.retried) == (4, 0, len(even))
    rows = campaign_battles(tmp_path, "ray-crash")
    retried = {r.battle_id for r in rows if r.attributes.get("attempts") == "2"}
    assert retried == even
    pids = {r.attributes["worker_pid"] for r in rows}
    assert str(os.getpid()) not in pids  # the battles ran in Ray's worker processes
    assert verify_ledger(tmp_path).ok


def test_an_interrupt_stops_ray_battles_in_flight_at_once(local_ray: None, tmp_path: Path) -> None:
    plan = _plan("ray-cancel", red=False)
    executor = RayExecutor(2, plan.settings, tmp_path, play=campaign_fakes.endless_play)
    interrupted_at: list[float] = []

    def observe(progress: CampaignProgress, recorded: JobDone | None) -> None:
        if progress.running == 2 and not interrupted_at:
            interrupted_at.append(time.monotonic())
            threading.Timer(0.5, executor.interrupt).start()

    progress = run_campaign(plan, tmp_path, executor, observe)
    assert interrupted_at  # the battles never end (endless_play): returning at all is not waiting for them
    assert (progress.done, progress.running) == (0, 2)
    assert campaign_battles(tmp_path, "ray-cancel") == []


@pytest.mark.slow
@pytest.mark.docker
def test_real_battles_run_as_ray_tasks_and_land_in_the_one_ledger(local_ray: None, tmp_path: Path) -> None:
    plan = _plan("ray-real", repeat=1, red=True, red_budget_s=2.0, sandbox="docker")
    progress = run_campaign(plan, tmp_path, RayExecutor(2, plan.settings, tmp_path))
    assert (progress.done, progress.failed) == (2, 0)
    rows = campaign_battles(tmp_path, "ray-real")
    assert sorted(r.battle_id for r in rows) == sorted(j.battle_id for j in plan.jobs())
    for row in rows:
        result = row.result
        assert result is not None
        hidden = result.scores.hidden
        assert result.status == "scored" and hidden is not None and hidden.passed == hidden.total > 0
        assert row.attributes["sandbox_backend"] == "docker"
    assert verify_ledger(tmp_path).ok
