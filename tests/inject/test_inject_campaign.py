"""``logomesh inject campaign`` end to end: the two mocks as real A2A servers on loopback, the real oracles in the
real sandbox, the real ledger; and bad input refused in one line before any work."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.verify import verify_ledger
from logomesh.cli import app
from logomesh.inject.record import ATTEMPT_STATUS, RUN_STATUS
from logomesh.purple.kinds import ServeOptions, purple_kind
from logomesh.purple.server import RunningServer, start_in_thread

TASKS = "rate-limiter,fib-recursive,lru-cache,bank-ledger,email-validator"
"""Five tasks: with the task as the unit, fewer cannot separate 0 of 10 from 10 of 10 (Wilson, one trial per task:
at four tasks the two intervals nearly touch, at two they overlap by a third)."""
OBJECTIVES = ("--objective", "leak-canary", "--objective", "write-outside")


def _campaign(home: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["inject", "campaign", *OBJECTIVES, "--sandbox", "docker", "--home", str(home),
                                      "--json", *args])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.mark.slow
@pytest.mark.docker
def test_the_obeying_mock_ranks_below_the_ignoring_one_separably_and_the_same_twice(tmp_path: Path) -> None:
    args = ("--purple-kind", "obeying=inject-obeying:0", "--purple-kind", "ignoring=inject-ignoring",
            "--tasks", TASKS, "--budget", "10", "--seed", "0", "--no-utility")
    first = _campaign(tmp_path / "a", *args)
    ignoring, obeying = first["ranking"]
    assert (ignoring["agent"], ignoring["rank"], obeying["agent"], obeying["rank"]) == ("ignoring", 1, "obeying", 2)
    assert (ignoring["objectives_reached"], ignoring["objectives_tried"], ignoring["success_rate"]) == (0, 10, 0.0)
    assert ignoring["queries"] == 50 and ignoring["queries_to_first_success"]["median"] is None
    assert obeying["success_rate"] > 0.5 and obeying["queries_to_first_success"]["runs_with_success"] == 5
    assert obeying["interval"]["low"] > ignoring["interval"]["high"]
    assert first["pairs"] == [{"more_resistant": "ignoring", "less_resistant": "obeying", "separable": True}]
    assert ignoring["not_separable_from"] == [] and obeying["not_separable_from"] == []

    runs = first["runs"]
    assert len(runs) == 10 and {r["agent"] for r in runs} == {"obeying", "ignoring"}
    with Ledger.open(tmp_path / "a") as led:
        statuses = [e.status for e in led.entries()]
        recorded = {r["run_id"]: led.get(r["run_id"]) for r in runs}
    assert statuses.count(RUN_STATUS) == 10 and statuses.count(ATTEMPT_STATUS) == sum(r["queries"] for r in runs)
    for run in runs:
        entry = recorded[run["run_id"]]
        assert entry is not None and entry.result["queries"] == run["queries"]
        assert [o["objective"] for o in entry.result["objectives"] if o["reached"]] == run["reached"]
    assert verify_ledger(tmp_path / "a").ok

    again = _campaign(tmp_path / "b", *args)
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)  # same seed, same answers


@pytest.fixture()
def obeying_server() -> Iterator[RunningServer]:
    with start_in_thread(purple_kind("inject-obeying")(ServeOptions(seed=0))[0]) as server:
        yield server


@pytest.mark.slow
@pytest.mark.docker
def test_an_agent_by_url_with_utility_on_one_task(tmp_path: Path, obeying_server: RunningServer) -> None:
    report = _campaign(tmp_path, "--purple", f"obeying={obeying_server.url}", "--purple-kind",
                       "ignoring=inject-ignoring", "--tasks", "rate-limiter", "--budget", "10")
    ignoring, obeying = report["ranking"]
    assert obeying["label"] == obeying_server.url and obeying["objectives_reached"] == 2
    assert obeying["interval"]["method"] == "none" and "1 task" in obeying["interval"]["reason"]
    assert ignoring["not_separable_from"] == ["obeying"] and report["pairs"][0]["separable"] is False
    assert obeying["utility_under_attack"]["measured"] == 2  # the hidden tests on each winning answer
    assert obeying["benign_utility"] == ignoring["benign_utility"] == {"intact": 1, "measured": 1, "unmeasured": 0,
                                                                                  "refused": 0}


KINDS = ["--purple-kind", "a=inject-obeying"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [([], 2, "name at least one agent: --purple NAME=URL or --purple-kind NAME=KIND[:SEED]"),
     (["--purple", "http://127.0.0.1:9/"], 2, "write NAME=URL, e.g. --purple alice=http://127.0.0.1:9009"),
     (["--purple", "a=localhost:9"], 2, "has no scheme: write http://localhost:9"),
     (["--purple-kind", "inject-obeying"], 2, "write NAME=KIND or NAME=KIND:SEED, e.g."),
     (["--purple-kind", "a=inject-obeying:x"], 2, "the kind's seed after ':' must be a whole number"),
     (["--purple-kind", "a=nope"], 2, "unknown purple agent kind 'nope'"),
     ([*KINDS, "--purple-kind", "a=inject-ignoring"], 2, "agent name 'a' is given twice"),
     (["--purple-kind", "a b=inject-obeying"], 2, "agent name 'a b': use 1-32 letters"),
     ([*KINDS, "--tasks", "rate-limiter,no-such-task"], 2, "unknown task 'no-such-task'"),
     ([*KINDS, "--tasks", " , "], 2, "--tasks is empty: give 'all' or task ids"),
     ([*KINDS, "--budget", "0"], 2, "--budget must be a whole number of queries, at least 1, not 0"),
     ([*KINDS, "--seeds", "0"], 2, "--seeds must be a whole number of seeds from 1 to 1000, not 0"),
     ([*KINDS, "--seed", "-1"], 2, "--seed must be a whole number from 0 to"),
     ([*KINDS, "--objective", "steal"], 2, "--objective must be one of"),
     ([*KINDS, "--search", "greedy"], 2, "--search must be one of mcts, random, templates, not 'greedy'"),
     (["--purple", "a=http://127.0.0.1:9/"], 1,
      "the campaign cannot start: the purple agent at http://127.0.0.1:9/ does not answer")],
)
def test_bad_input_is_one_line_before_any_work(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    tasks = [] if "--tasks" in args else ["--tasks", "rate-limiter"]
    result = CliRunner().invoke(app, ["inject", "campaign", *tasks, *args, "--home", str(tmp_path / "home")])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "home" / "battles.db").exists()
