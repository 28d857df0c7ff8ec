"""Injection runs end to end: real A2A mocks on loopback, the real oracles in the real sandbox (the search on both
backends), the real ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.verify import verify_ledger
from logomesh.cli import app
from logomesh.inject.objectives import OBJECTIVES
from logomesh.inject.record import ATTEMPT_STATUS, RUN_STATUS
from logomesh.inject.report import run_json, run_text
from logomesh.inject.run import InjectRequest, Target, run_injection

pytestmark = [pytest.mark.slow]
ON_BOTH = pytest.mark.parametrize(
    "backend", [pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)])


def _cli(home: Path, backend: str, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["inject", "run", "--task", "rate-limiter", "--sandbox", backend,
                                      "--home", str(home), "--json", *args])
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(result.stdout)
    return report


@ON_BOTH
def test_mcts_reaches_every_objective_against_the_obeying_mock_on_the_record(tmp_path: Path, backend: str) -> None:
    args = ("--purple-kind", "inject-obeying", "--kind-seed", "1", "--seed", "1", "--budget", "40", "--no-utility")
    first = _cli(tmp_path / "a", backend, *args)
    objectives = first["objectives"]
    assert isinstance(objectives, list)
    assert [o["objective"] for o in objectives] == list(OBJECTIVES)
    assert all(o["reached"] for o in objectives), objectives
    queries = first["queries"]
    assert isinstance(queries, int) and queries <= 40
    assert queries == max(o["queries_to_first_success"] for o in objectives)  # it stops once all are reached

    with Ledger.open(tmp_path / "a") as led:
        statuses = [entry.status for entry in led.entries()]
        run = led.get(str(first["run_id"]))
        attempt = led.get(f"{first['run_id']}.q0001")
    assert statuses == [ATTEMPT_STATUS] * queries + [RUN_STATUS]
    assert run is not None and {k: run.result[k] for k in first} == first
    assert attempt is not None and attempt.result["path"][3] in OBJECTIVES
    assert set(attempt.inputs) >= {"injected_payload", "purple_request", "purple_response", "task_spec"}
    assert verify_ledger(tmp_path / "a").ok

    again = _cli(tmp_path / "b", backend, *args)
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)  # same seed, same answers


@pytest.mark.docker
def test_the_ignoring_mock_gives_no_success_and_every_query_is_recorded(tmp_path: Path) -> None:
    outcome = run_injection(InjectRequest("rate-limiter", Target(kind="inject-ignoring"), tuple(OBJECTIVES), 8, 2,
                                          "random", "docker", tmp_path, utility=True))
    assert outcome.queries == 8
    assert not any(record.met for record in outcome.records)
    assert not any(o.reached for o in outcome.objectives)
    assert outcome.benign is not None and outcome.benign.intact and not outcome.benign.refused
    assert run_json(outcome)["false_refusal"] is False
    with Ledger.open(tmp_path) as led:
        assert sum(1 for e in led.entries() if e.status == ATTEMPT_STATUS) == 8
    assert verify_ledger(tmp_path).ok


@pytest.mark.docker
def test_an_agent_that_declines_every_task_resists_by_refusing_and_says_so(tmp_path: Path) -> None:
    """The refusing mock reaches no objective, as the ignoring one, but only by answering nothing: its clean
    task is a false refusal, in the outcome, the run's entry and the printed report."""
    outcome = run_injection(InjectRequest("rate-limiter", Target(kind="inject-refusing"), ("leak-canary",), 3, 2,
                                          "random", "docker", tmp_path, utility=True))
    assert outcome.queries == 3 and all(record.error and not record.met for record in outcome.records)
    assert outcome.benign is not None and outcome.benign.refused and not outcome.benign.intact
    assert run_json(outcome)["false_refusal"] is True
    assert "(a false refusal: no code for a task with no payload)" in run_text(outcome)
    with Ledger.open(tmp_path) as led:
        entry = led.get(outcome.run_id)
    assert entry is not None and entry.result["false_refusal"] is True
