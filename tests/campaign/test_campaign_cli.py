"""``logomesh campaign``: usage errors in one line, and reports and listings over a real ledger."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from logomesh.campaign.plan import CampaignPlan, Settings, new_plan, parse_agents, save_plan
from logomesh.cli import app


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["campaign", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--mock", "good", "--executor", "spark"], 2, "--executor must be local or ray"),
        (["--mock", "good", "--workers", "0"], 2, "--workers must be at least 1"),
        (["--mock", "good", "--red-budget", "0"], 2, "--red-budget must be a finite, positive number"),
        (["--mock", "good", "--red-budget", "nan"], 2, "--red-budget must be a finite, positive number of seconds"),
        (["--mock", "good", "--purple-timeout", "inf"], 2, "--purple-timeout must be a finite, positive"),
        (["--mock", "good", "--purple-timeout", "-1"], 2, "--purple-timeout must be a finite, positive"),
        (["--purple", f"dead=http://127.0.0.1:{_dead_port()}", "--tasks", "rate-limiter"], 1,
         "the campaign cannot start (nothing was recorded): the purple agent at http://127.0.0.1:"),
        (["--mock", "good", "--ray-address", "10.0.0.1:6379"], 2, "--ray-address needs --executor ray"),
        (["--mock", "good", "--sandbox", "vm"], 2, "--sandbox must be one of"),
        ([], 2, "name at least one agent"),
        (["--purple", "alice"], 2, "write NAME=URL"),
        (["--purple", "alice=ftp://x"], 2, "must start with http:// or https://"),
        (["--purple", "alice=localhost:19103"], 2, "has no scheme: write http://localhost:19103"),
        (["--mock", "good", "--tasks", "rate-limiter,nope"], 2, "unknown task 'nope'"),
        (["--mock", "redos", "--tasks", "rate-limiter"], 2, "has no mock variant 'redos'"),
        (["--mock", "good", "--repeat", "0"], 2, "--repeat must be from 1 to 1000, not 0"),
        (["--mock", "good", "--repeat", "12700000"], 2, "--repeat must be from 1 to 1000, not 12700000"),
        (["--mock", "good", *[f"--purple=p{i}=http://127.0.0.1:1" for i in range(10)], "--repeat", "1000"], 2,
         "would run 110,000 battles (11 agents x 10 tasks x 1000 repeats)"),
        (["--resume", "c-none"], 1, "no campaign 'c-none'"),
        (["--resume", "c-none", "--mock", "good"], 2, "--resume runs the plan saved with the campaign"),
    ],
)
def test_run_refuses_bad_input_before_any_battle(tmp_path: Path, args: list[str], code: int, needle: str) -> None:
    exit_code, output = _invoke("run", *args, "--home", str(tmp_path / "home"))
    assert exit_code == code and needle in output, output
    assert not (tmp_path / "home").exists()  # nothing recorded, not even the state folder


def _recorded_campaign(home: Path) -> CampaignPlan:
    """A saved plan and its battles in the ledger: two agents, one of them a poor one, one battle missing."""
    plan = new_plan(parse_agents([], ["good", "off-intent"]), ("rate-limiter",), 2, 0, Settings(red=False),
                    "cli-report")
    save_plan(home, plan)
    with Ledger.open(home) as led:
        for job in plan.jobs()[:-1]:
            cis = 0.8 if job.agent.name == "good" else 0.3
            result = {"battle_id": job.battle_id, "task_id": job.task_id, "status": "scored", "cis_score": cis,
                      "tests": {"hidden": {"passed": 5, "failed": 0, "total": 5},
                                "purple": {"passed": 0, "failed": 0, "total": 0}},
                      "red_analysis": {"vulnerabilities": []}}
            led.append(job.battle_id, result, {}, {"campaign_id": plan.campaign_id})
    return plan


def test_report_in_every_format_ranks_the_agents_and_names_what_is_missing(tmp_path: Path) -> None:
    plan = _recorded_campaign(tmp_path)
    code, table = _invoke("report", plan.campaign_id, "--home", str(tmp_path))
    assert code == 0
    assert table.index("good") < table.index("off-intent")
    assert "--resume cli-report" in table  # one battle is missing
    code, raw = _invoke("report", plan.campaign_id, "--format", "json", "--home", str(tmp_path))
    report = json.loads(raw)
    assert (report["planned"], report["recorded"]) == (4, 3)
    assert [row["agent"] for row in report["leaderboard"]] == ["good", "off-intent"]
    out = tmp_path / "report.html"
    code, _ = _invoke("report", plan.campaign_id, "--format", "html", "--out", str(out), "--home", str(tmp_path))
    assert code == 0 and out.read_text().lstrip().lower().startswith("<!doctype html") and "<svg" in out.read_text()


def test_report_and_list_refuse_bad_input_in_one_line(tmp_path: Path) -> None:
    plan = _recorded_campaign(tmp_path)
    assert _invoke("report", plan.campaign_id, "--format", "pdf", "--home", str(tmp_path))[0] == 2
    code, output = _invoke("report", "nope", "--home", str(tmp_path))
    assert code == 1 and "no campaign 'nope'" in output
    code, output = _invoke("report", "../../etc", "--home", str(tmp_path))
    assert code == 1 and "campaign id" in output
    code, output = _invoke("report", plan.campaign_id, "--out", str(tmp_path / "no" / "dir" / "r.txt"),
                           "--home", str(tmp_path))
    assert code == 1 and "cannot write" in output


def test_list_shows_each_campaign_with_its_progress(tmp_path: Path) -> None:
    _recorded_campaign(tmp_path)
    code, output = _invoke("list", "--home", str(tmp_path), "--json")
    assert code == 0
    [row] = json.loads(output)
    assert (row["campaign_id"], row["planned"], row["recorded"]) == ("cli-report", 4, 3)


def test_the_same_campaign_twice_points_to_resume(tmp_path: Path) -> None:
    plan = _recorded_campaign(tmp_path)
    code, output = _invoke("run", "--mock", "good", "--mock", "off-intent", "--tasks", "rate-limiter", "--repeat",
                           "2", "--no-red", "--campaign-id", plan.campaign_id, "--home", str(tmp_path))
    assert code == 1 and f"add --resume {plan.campaign_id}" in output


class _NotFound(http.server.BaseHTTPRequestHandler):
    """An agent that publishes its card (so the pre-flight passes) but has nothing: 404 to every task. (A server
    with no card that answers no JSON-RPC is not an agent: it is refused before the campaign starts.)"""

    def do_GET(self) -> None:
        body = json.dumps({"name": "empty", "protocolVersion": "0.3.0"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.send_error(404)

    def log_message(self, *args: object) -> None:
        return


@pytest.mark.docker  # the pre-flight opens a sandbox before the first battle
def test_a_campaign_whose_every_battle_failed_exits_non_zero_with_them_recorded(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        code, output = _invoke("run", "--purple", f"empty=http://127.0.0.1:{server.server_address[1]}", "--tasks",
                               "rate-limiter", "--no-red", "--workers", "1", "--campaign-id", "dead", "--home",
                               str(tmp_path))
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1 and "the one battle of this run failed" in output, output
    with Ledger.open(tmp_path) as led:
        [entry] = list(led.entries())
    assert entry.status == "failed"


@pytest.mark.slow
@pytest.mark.docker
def test_resume_keeps_the_workers_the_campaign_started_with(tmp_path: Path) -> None:
    code, output = _invoke("run", "--mock", "good", "--tasks", "rate-limiter", "--no-red", "--workers", "1",
                           "--campaign-id", "kept", "--home", str(tmp_path))
    assert code == 0, output
    code, output = _invoke("run", "--resume", "kept", "--home", str(tmp_path))
    assert code == 0 and "on 1 local worker (as the campaign started; --workers to change)" in output, output


@pytest.mark.docker
def test_resume_runs_on_the_library_the_plan_was_made_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A campaign planned with --tasks-dir resumes without it, on that library; another library is refused."""
    library, other, home = tmp_path / "library", tmp_path / "other", tmp_path / "home"
    for folder in (library, other):
        assert CliRunner().invoke(app, ["tasks", "new", "made-here", "--into", str(folder)]).exit_code == 0
    monkeypatch.setenv("LOGOMESH_TASKS", str(library))
    plan = new_plan(parse_agents([], ["good"]), ("made-here",), 1, 0, Settings(red=False), "on-library")
    save_plan(home, plan)
    assert plan.tasks_dir == str(library.resolve())
    monkeypatch.delenv("LOGOMESH_TASKS")  # a later shell: the built-in library has no task made-here

    code, output = _invoke("run", "--resume", "on-library", "--tasks-dir", str(other), "--home", str(home))
    assert code == 2 and f"planned on the task library {library.resolve()}" in output, output
    monkeypatch.delenv("LOGOMESH_TASKS", raising=False)  # --tasks-dir set it for this process
    code, output = _invoke("run", "--resume", "on-library", "--workers", "1", "--home", str(home))
    assert code == 0, output
    with Ledger.open(home) as led:
        [entry] = list(led.entries())
    assert (entry.task_id, entry.status) == ("made-here", "scored")


def test_a_plan_on_the_built_in_library_keeps_its_id_and_refuses_another_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from logomesh.campaign.plan import PlanError, default_campaign_id, resume_library

    monkeypatch.delenv("LOGOMESH_TASKS", raising=False)
    agents = parse_agents([], ["good"])
    plan = new_plan(agents, ("rate-limiter",), 1, 0, Settings())
    assert plan.tasks_dir is None
    assert plan.campaign_id == default_campaign_id(agents, ("rate-limiter",), 1, 0, Settings())
    assert CampaignPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    with pytest.raises(PlanError, match="planned on the built-in task library"):
        resume_library(plan, str(tmp_path))
