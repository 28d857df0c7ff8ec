"""The Ray executor against a real local Ray instance started here (not a mock)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import campaign_fakes
import pytest
from ray_cluster import Node, two_node_cluster

from ledger import Ledger
from ledger.verify import verify_ledger
from logomesh.campaign.plan import CampaignPlan, Settings, battle_id, new_plan, parse_agents
from logomesh.campaign.ray_executor import RayExecutor, RayUnavailable, check_joins, check_ray
from logomesh.campaign.runner import CampaignProgress, campaign_battles, run_campaign
from logomesh.campaign.work import JobDone
from logomesh.sandbox.docker import RUN_ENV

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'logomesh[ray]')")


def test_an_unreachable_cluster_is_one_clear_error_within_seconds(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port on loopback that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    executor = RayExecutor(1, Settings(), tmp_path, address=f"127.0.0.1:{port}")
    with pytest.raises(RayUnavailable, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        next(executor.run(_plan("ray-none").jobs()))
    assert not ray.is_initialized()


def test_a_join_that_hangs_is_refused_at_its_deadline_and_ray_stays_down() -> None:
    """An HTTP/2 server that is not Ray passes the greeting; Ray's own join would then retry for minutes."""
    held: list[socket.socket] = []
    with socket.create_server(("127.0.0.1", 0)) as server:
        def greet() -> None:  # HTTP/2 settings, as Ray's GCS sends, then nothing
            with contextlib.suppress(OSError):
                while True:
                    conn, _ = server.accept()
                    conn.sendall(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
                    held.append(conn)

        threading.Thread(target=greet, daemon=True).start()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(RayUnavailable, match=f"no Ray cluster at {address} let this machine join within 3 s"):
            check_joins(address, timeout_s=3)
        assert time.monotonic() - started < 10
        for conn in held:
            conn.close()
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


@pytest.mark.slow  # full tier: a ten-second cluster start
def test_a_running_cluster_passes_the_check_before_a_campaign(local_ray: None) -> None:
    check_ray(ray.get_runtime_context().gcs_address)  # a driver process of its own joined and left
    assert ray.is_initialized()  # this process's session is untouched


@pytest.mark.slow
def test_a_driver_without_the_cluster_token_is_told_so(local_ray: None, monkeypatch: pytest.MonkeyPatch) -> None:
    address = ray.get_runtime_context().gcs_address
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "0" * 64)  # not the token this instance was started with
    with pytest.raises(RayUnavailable, match=f"the Ray cluster at {address} refused this machine's token"):
        check_ray(address)  # after Ray's 20 s of retries

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


@pytest.mark.slow
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


LOGOMESH = [sys.executable, "-m", "logomesh"]
NODE_LOSS_TASKS = ("rate-limiter", "fib-recursive")
NODE_LOSS_REPEAT = 2


def _wait_for_battle_on(node: Node, campaign: subprocess.Popen[str], timeout_s: float = 300.0) -> None:
    """Until one of the node's Ray workers runs a battle (its process title is the task's name)."""
    deadline = time.monotonic() + timeout_s
    while not any(command.startswith("ray::_play_remote") for _, command in node.processes()):
        assert campaign.poll() is None, f"the campaign ended before a battle ran on {node.name}"
        assert time.monotonic() < deadline, f"no battle ran on {node.name} within {timeout_s:.0f} s"
        time.sleep(0.05)


def _logomesh(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LOGOMESH, *args], capture_output=True, text=True, env=env, timeout=300, check=False)


def _remove_containers(run: str) -> list[str]:
    """Remove this run's sandbox containers; the names of those there were."""
    from logomesh.sandbox.docker import RUN_LABEL, docker_client

    client = docker_client()
    try:
        left = client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={run}"})
        for container in left:
            container.remove(force=True)
        return [str(c.name) for c in left]
    finally:
        client.close()


@pytest.mark.slow
@pytest.mark.docker
def test_a_campaign_survives_losing_a_ray_node_mid_battle(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run = f"ray-node-loss-{os.getpid()}-{time.time_ns()}"
    root = Path(tempfile.mkdtemp(prefix="lm-ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    try:
        with two_node_cluster(root, {RUN_ENV: run}) as (cluster, worker):
            campaign = subprocess.Popen(
                [*LOGOMESH, "campaign", "run", "--executor", "ray", "--ray-address", cluster.address,
                 "--workers", "2", "--mock", "good", "--tasks", ",".join(NODE_LOSS_TASKS),
                 "--repeat", str(NODE_LOSS_REPEAT), "--campaign-id", "node-loss", "--no-red",
                 "--sandbox", "docker", "--home", str(home), "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env, start_new_session=True)
            try:
                _wait_for_battle_on(worker, campaign)
                worker.kill()  # raylet, agents and the worker mid-battle, at once
                out, err = campaign.communicate(timeout=600)
            finally:
                if campaign.poll() is None:
                    os.killpg(campaign.pid, signal.SIGKILL)
                    campaign.communicate()
        assert campaign.returncode == 0, err[-3000:]
        assert _remove_containers(run) == []  # the driver swept the sandbox of the battle that died
        summary = json.loads(out)
        planned = sorted(battle_id(t, "good", "node-loss", r)
                         for r in range(1, NODE_LOSS_REPEAT + 1) for t in NODE_LOSS_TASKS)
        assert (summary["planned"], summary["recorded"]) == (len(planned), len(planned))
        rows = campaign_battles(home, "node-loss")
        assert sorted(r.battle_id for r in rows) == planned  # each planned battle exactly once
        with Ledger.open(home) as led:
            assert sorted(e.battle_id for e in led.entries()) == planned  # and nothing else in the ledger
        for row in rows:
            assert row.result is not None and row.result.status == "scored", (row.battle_id, row.result)
        attempts = {r.battle_id: r.attributes["attempts"] for r in rows if "attempts" in r.attributes}
        assert list(attempts.values()) == ["2"], attempts  # the battle on the lost node, and it alone, ran again
        retried = list(attempts)
        assert summary["retries"] == {"count": 1, "battles": [{"battle_id": retried[0], "attempts": 2,
                                                                "outcome": "scored"}]}

        env = cluster.env
        ledger_check = _logomesh(env, "verify", "ledger", "--home", str(home))
        assert ledger_check.returncode == 0, ledger_check.stdout + ledger_check.stderr
        page = tmp_path / "report.html"
        written = _logomesh(env, "campaign", "report", "node-loss", "--format", "html", "--out", str(page),
                            "--home", str(home))
        assert written.returncode == 0, written.stderr
        report_check = _logomesh(env, "verify", "report", str(page), "--home", str(home))
        assert report_check.returncode == 0, report_check.stdout + report_check.stderr
        assert report_check.stdout.splitlines()[0].startswith("report OK: campaign node-loss, 4 entries")
    finally:
        _remove_containers(run)
        shutil.rmtree(root, ignore_errors=True)
