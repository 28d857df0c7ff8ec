"""Campaigns through the real command, Docker sandboxes and a purple agent on loopback that misbehaves.

* 200 battles, 10% malformed answers, 5% hanging, 5% hostile code: every battle
  accounted for, the ledger verifies, no sandbox left, no temporary file left.
* A campaign whose processes are all SIGKILLed keeps every acknowledged battle,
  and ``--resume`` completes exactly the rest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from chaos_purple import chaos_app_factory, write_responses

from ledger import Ledger
from ledger.verify import verify_ledger
from logomesh.campaign.plan import battle_id
from logomesh.campaign.runner import campaign_battles
from logomesh.purple.server import RunningServer, start_in_thread
from logomesh.sandbox.docker import RUN_ENV
from logomesh.tasks import all_tasks

# The 200-battle campaign takes ~9 min on 2 cores beside three other workers: the bound is its command's own.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
LOGOMESH = [sys.executable, "-m", "logomesh"]
BATTLES = int(os.environ.get("LOGOMESH_RELIABILITY_BATTLES", "200"))


RUN = f"reliability-{os.getpid()}-{time.time_ns()}"  # labels this run's containers (LOGOMESH_SANDBOX_RUN)


def _our_containers() -> list[str]:
    """This run's sandbox containers only: another battle on the same host is none of this test's business."""
    import docker

    from logomesh.sandbox.docker import RUN_LABEL

    client = docker.from_env()
    try:
        return [c.id for c in client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={RUN}"})]
    finally:
        client.close()


def _wait_for_no_containers(timeout_s: float = 120.0) -> list[str]:  # returns as soon as none is left
    deadline = time.monotonic() + timeout_s
    while (left := _our_containers()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.fixture()
def chaos(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    responses = tmp_path / "responses"
    responses.mkdir()
    with start_in_thread(chaos_app_factory(responses)) as server:
        yield server, responses


def _env(tmp: Path) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp), "LOGOMESH_HOME": str(tmp.parent / "unused-home"),
            RUN_ENV: RUN}


def test_every_battle_of_a_hostile_campaign_is_accounted_for(
    tmp_path: Path, chaos: tuple[RunningServer, Path]
) -> None:
    server, responses = chaos
    tasks = [t.id for t in all_tasks()]
    agents = ("alpha", "beta")
    repeat = max(1, BATTLES // (len(agents) * len(tasks)))
    planned = [(battle_id(t, a, "chaos", r), t) for r in range(1, repeat + 1) for t in tasks for a in agents]
    kinds = write_responses(responses, planned, seed=2026)
    home, tmp = tmp_path / "home", tmp_path / "tmp"

    proc = subprocess.run(
        [*LOGOMESH, "campaign", "run", "--purple", f"alpha={server.url}", "--purple", f"beta={server.url}",
         "--tasks", "all", "--repeat", str(repeat), "--campaign-id", "chaos", "--no-red", "--sandbox", "docker",
         "--purple-timeout", "3", "--home", str(home), "--json"],
        capture_output=True, text=True, env=_env(tmp), timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert (summary["planned"], summary["recorded"]) == (len(planned), len(planned))

    rows = {row.battle_id: row.result for row in campaign_battles(home, "chaos")}
    assert sorted(rows) == sorted(kinds)
    for bid, kind in kinds.items():
        result = rows[bid]
        assert result is not None
        hidden = result.scores.hidden
        if kind in ("malformed", "hang"):
            assert (result.status, result.ending.stage) == ("failed", "purple"), (bid, result)
            assert result.ending.reason
            if kind == "hang":
                assert "within 3 s" in result.ending.reason, result.ending.reason
        elif kind == "hostile":
            assert result.status == "scored", (bid, result.ending.reason)
            assert hidden is not None and hidden.passed == 0 < hidden.total, (bid, hidden)
        else:
            assert result.status == "scored", (bid, result.ending.reason)
            assert hidden is not None and hidden.passed == hidden.total > 0, (bid, hidden)
    assert Counter(kinds.values())["hang"] == len(planned) // 20

    report = verify_ledger(home)
    assert report.ok and report.size == len(planned), report.problems[:5]
    assert _wait_for_no_containers() == []
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not Path("/etc/logomesh-pwned").exists()


def _recorded(home: Path) -> set[str]:
    if not (home / "battles.db").exists():
        return set()
    with Ledger.open(home) as led:
        return {e.battle_id for e in led.entries()}


def test_a_killed_campaign_keeps_what_was_acknowledged_and_resume_runs_exactly_the_rest(tmp_path: Path) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tasks = "rate-limiter,lru-cache,fib-recursive"
    args = [*LOGOMESH, "campaign", "run", "--mock", "good", "--tasks", tasks, "--repeat", "4", "--campaign-id",
            "killed", "--no-red", "--sandbox", "docker", "--workers", "2", "--home", str(home)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmp),
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while len(_recorded(home)) < 3:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the campaign recorded nothing in 300 s"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and every worker, mid-battle
    proc.communicate(timeout=60)
    kept = _recorded(home)
    planned = {battle_id(t, "good", "killed", r) for t in tasks.split(",") for r in range(1, 5)}
    assert 3 <= len(kept) < len(planned) and kept <= planned
    assert verify_ledger(home).ok
    with Ledger.open(home) as led:
        before = {e.battle_id: e.result_sha256 for e in led.entries()}

    resumed = subprocess.run([*LOGOMESH, "campaign", "run", "--resume", "killed",  # no --workers: it keeps 2
                              "--home", str(home), "--json"], capture_output=True, text=True, env=_env(tmp),
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "on 2 local workers (as the campaign started" in resumed.stderr  # --resume keeps --workers 2
    with Ledger.open(home) as led:
        after = {e.battle_id: e.result_sha256 for e in led.entries()}
    assert set(after) == planned and len(after) == len(planned)
    assert all(after[b] == h for b, h in before.items())  # what was acknowledged is untouched
    assert verify_ledger(home).ok
    assert _wait_for_no_containers() == []
    again = subprocess.run([*LOGOMESH, "campaign", "run", "--resume", "killed", "--home", str(home)],
                           capture_output=True, text=True, env=_env(tmp), timeout=300)
    assert again.returncode == 0 and f"{len(planned)}/{len(planned)} battles recorded" in again.stdout
