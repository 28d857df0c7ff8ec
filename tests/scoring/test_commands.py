"""``logomesh score`` and ``logomesh calibrate`` as a user runs them (real sandbox where marked)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import sampled

from logomesh.tasks import all_tasks

ROOT = Path(__file__).resolve().parents[2]


def logomesh(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logomesh", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def submission_file(task_id: str, name: str) -> str:
    return str(ROOT / "tasks" / task_id / "submissions" / f"{name}.json")


BAD_INPUTS = [
    (["--task", "no-such-task", "--submission", "x.json"], "unknown task 'no-such-task'"),
    (["--task", "rate-limiter", "--submission", "/nonexistent.json"], "cannot read submission"),
    (["--task", "rate-limiter", "--submission", "pyproject.toml"], "submission is not valid JSON"),
    (["--task", "rate-limiter", "--submission", "x.json", "--sandbox", "vm"], "--sandbox must be one of"),
    (["--task", "rate-limiter", "--submission", "x.json", "--llm-model", "m"], "give both --llm-base-url"),
    (["--task", "rate-limiter", "--submission", "x.json", "--red-budget", "nan"],
     "--red-budget must be a finite, positive number of seconds, not nan"),
]
BAD_INPUT_IDS = [f"args{i}-{message}" for i, (_, message) in enumerate(BAD_INPUTS)]  # the ids pytest gave them


# The fast tier: a submission that is not JSON, and a bad number.
@pytest.mark.parametrize(("args", "message"),
                         sampled(BAD_INPUTS, BAD_INPUT_IDS, keep=[BAD_INPUT_IDS[2], BAD_INPUT_IDS[5]], several=True))
def test_bad_input_gives_one_line_and_no_traceback(args: list[str], message: str) -> None:
    run = logomesh("score", *args)
    assert run.returncode == 2  # every one is the caller's input: a usage error
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr
    assert "Traceback" not in run.stderr


def test_a_submission_over_the_purple_cap_is_refused_with_the_reason(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"sourceCode": "x = 1\n" * 400_000, "testCode": "", "rationale": ""}))
    run = logomesh("score", "--task", "rate-limiter", "--submission", str(big))
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "larger than 2097152 bytes" in lines[0], run.stderr
    assert "cap on a purple agent's answer" in lines[0] and run.stdout == ""


def test_calibrate_with_an_unknown_task_is_a_usage_error_in_one_line() -> None:
    run = logomesh("calibrate", "--task", "no-such-task")
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "unknown task 'no-such-task'" in lines[0], run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_no_docker_is_one_line_naming_the_problem(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    run = subprocess.run([sys.executable, "-m", "logomesh", "score", "--task", "rate-limiter", "--submission",
                          submission_file("rate-limiter", "good"), "--sandbox", "docker", "--no-red"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "docker" in lines[0].lower(), run.stderr
    assert run.stdout == ""


@pytest.fixture(scope="module")
def good_runs() -> dict[str, tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]]:
    """The good submission scored twice, in two processes (test_cis checks every task without the sandbox)."""
    runs = {}
    for task in [t for t in all_tasks() if t.id == "rate-limiter"]:
        args = ("score", "--task", task.id, "--submission", submission_file(task.id, "good"), "--no-red",
                "--sandbox", "docker", "--json")
        runs[task.id] = (logomesh(*args), logomesh(*args))
    return runs


@pytest.mark.docker
def test_score_is_byte_identical_across_processes(
    good_runs: dict[str, tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]],
) -> None:
    for first, second in good_runs.values():
        assert first.returncode == 0, first.stderr
        assert first.stdout == second.stdout
        out = json.loads(first.stdout)
        assert out["result"]["tests"]["hidden"]["failed"] == 0
        assert out["result"]["testing_score"] == 0.85
        assert len(out["result_sha256"]) == 64
        progress = first.stderr.splitlines()  # what it is doing, on stderr, before the result
        assert progress[0].startswith("score: ") and "in the docker sandbox" in progress[0], first.stderr
        assert any(line.startswith("score: hidden ") and "passed; scoring" in line for line in progress)


@pytest.mark.docker
def test_score_separates_a_flawed_submission_and_reports_its_purple_tests(
    good_runs: dict[str, tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]],
) -> None:
    good = json.loads(good_runs["rate-limiter"][0].stdout)["result"]
    flawed_run = logomesh("score", "--task", "rate-limiter", "--submission",
                          submission_file("rate-limiter", "fixed-window"), "--no-red", "--json")
    flawed = json.loads(flawed_run.stdout)["result"]
    assert flawed["tests"]["hidden"]["failed"] > 0
    assert flawed["cis_score"] < good["cis_score"]
    assert flawed["cis_score"] < 0.5 <= good["cis_score"]  # the correctness band: good passed every hidden test
    assert (flawed["band"]["all_hidden_passed"], good["band"]["all_hidden_passed"]) == (False, True)
    purple = good["tests"]["purple"]
    assert purple["total"] > 0 and purple["flawed_total"] >= 1
    assert 0 <= purple["flawed_caught"] <= purple["flawed_total"]


@pytest.mark.slow
@pytest.mark.docker
def test_calibrate_prints_a_table_a_person_can_read() -> None:
    """The text table (the whole library's ordering, red agent on, is asserted in test_calibration_library)."""
    run = logomesh("calibrate", "--no-red", "--task", "rate-limiter")
    assert run.returncode in (0, 1), run.stderr
    assert "calibrating rate-limiter" in run.stderr  # progress, on stderr
    assert "skipping the intent check on HumanEval's 164 canonical solutions" in run.stderr  # one task: that only
    assert "HumanEval" not in run.stdout
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["task", "submission", "R", "A", "T", "L", "red", "int", "beh", "CIS", "ok"]
    names = {line.split()[1] for line in lines[2:] if line.startswith("rate-limiter ")}
    assert names >= {"good", "off-intent", "pasted-docstring", "unparsable", "never-ran", "cross:lru-cache"}
    never_ran = next(line.split() for line in lines if line.startswith("rate-limiter ") and " never-ran " in line)
    assert float(never_ran[8]) == 0.3  # beh: it reproduced none of the judge's observations


@pytest.mark.slow
@pytest.mark.docker
def test_calibrate_of_a_whole_library_checks_the_intent_on_humaneval(tmp_path: Path) -> None:
    """Without ``--task`` the command also runs the intent check on HumanEval's 164 canonical solutions, and the
    check's verdict is the command's. A library of one task (the 164 prompts are each other's distractors: the
    figures are those of the checkout's library, asserted in ``test_intent.py``); the library's own rows, red
    agent on, are asserted shard by shard in ``test_calibration_library_*.py``."""
    library = tmp_path / "tasks"
    shutil.copytree(ROOT / "tasks" / "rate-limiter", library / "rate-limiter")
    run = subprocess.run([sys.executable, "-m", "logomesh", "calibrate", "--no-red", "--sandbox", "docker", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "LOGOMESH_TASKS": str(library)})
    assert run.returncode in (0, 1), run.stderr
    assert "checking the intent on HumanEval's 164 canonical solutions" in run.stderr
    printed = json.loads(run.stdout)
    assert {row["task_id"] for row in printed["rows"]} == {"rate-limiter"}
    humaneval = printed["humaneval"]
    assert humaneval["solutions"] == 164 and humaneval["own_penalised"] == []
    assert humaneval["cross_total"] == 164 * 163
    assert humaneval["cross_penalised"] >= 0.99 * humaneval["cross_total"]
    assert humaneval["ok"] is True
    rows_ok = all(check["ok"] for row in printed["rows"] for check in row["checks"])
    assert printed["ok"] is rows_ok and run.returncode == (0 if rows_ok else 1)


@pytest.mark.docker
def test_purple_tests_that_fail_to_import_catch_no_flawed_variant() -> None:
    """A suite that never ran measured nothing: before, its import error counted as catching every variant."""
    from logomesh.sandbox import open_sandbox
    from logomesh.scoring.testing import run_mutants
    from logomesh.tasks import load_task

    task = load_task("rate-limiter")
    broken = "import unittest\nfrom solution import NoSuchName\n\nclass T(unittest.TestCase):\n" \
             "    def test_x(self):\n        self.assertTrue(NoSuchName)\n"
    real = task.labelled_submission("good").submission.tests
    with open_sandbox("docker") as box:
        nothing = run_mutants(box, task, broken)
        something = run_mutants(box, task, real)
    assert nothing.caught == () and nothing.total == len(task.flawed_variants()) > 0
    assert len(something.caught) >= 1  # the same variants are catchable by tests that run


@pytest.mark.docker
def test_score_text_says_which_band_the_cis_is_in() -> None:
    run = logomesh("score", "--task", "rate-limiter", "--submission", submission_file("rate-limiter", "fixed-window"),
                   "--no-red")
    assert run.returncode == 0, run.stderr
    band = next(line for line in run.stdout.splitlines() if line.startswith("x "))
    assert band.endswith("then the band: not every hidden test passed: CIS = 0.5·x, in [0, 0.5]"), band
    x = float(band.split()[1].rstrip(","))
    cis = float(run.stdout.split()[1])  # "CIS 0.1234  (R ...": the first line
    assert cis == pytest.approx(0.5 * x, abs=1e-4)
