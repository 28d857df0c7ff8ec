"""``logomesh purple serve`` as a user runs it: argument checks, and a real server process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from logomesh.cli import app
from logomesh.purple.client import ExchangeSettings, request_submission
from logomesh.tasks import TaskSpec


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--mock", "--llm"], "exactly one of --mock, --llm or --kind NAME"),
     ([], "exactly one of --mock, --llm or --kind NAME"),
     (["--kind", "nope"], "unknown purple agent kind 'nope'"),
     (["--kind", "inject-obeying", "--model", "m"], "the inject-obeying mock takes --seed only"),
     (["--llm", "--model", "m"], "--llm needs --base-url"),
     (["--llm", "--base-url", "ftp://x", "--model", "m"], "must start with http"),
     (["--mock", "--responses", "/no/such/folder"], "is not a folder"),
     (["--mock", "--port", "70000"], "--port must be between"),
     (["--llm", "--base-url", "http://x/v1", "--model", "m", "--temperature", "3"], "--temperature must be"),
     (["--llm", "--base-url", "http://x/v1", "--model", "m", "--max-tokens", "0"], "--max-tokens must be"),
     (["--llm", "--base-url", "http://x/v1", "--model", "m", "--timeout", "0"], "--timeout must be"),
     (["--llm", "--base-url", "http://x/v1", "--model", "m", "--prompt-template", "/no/such/file"], "cannot read"),
     (["--mock", "--max-tokens", "5"], "go with --llm"),
     (["--mock", "--response-format", "fenced"], "go with --llm"),
     (["--llm", "--base-url", "http://x/v1", "--model", "m", "--response-format", "xml"],
      "--response-format must be one of auto, json-schema, fenced, not 'xml'"),
     (["--llm", "--base-url", "http://x/v1", "--model", "m", "--defence", "shield"],
      "--defence must be one of none, spotlight, not 'shield'"),
     (["--mock", "--defence", "spotlight"], "go with --llm"),
     (["--kind", "inject-ignoring", "--defence", "spotlight"], "the inject-ignoring mock takes --seed only")],
)
def test_bad_arguments_are_one_line_usage_errors(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["purple", "serve", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_mock_server_process_serves_a_battle(task_lib: Path, adder: TaskSpec) -> None:
    env = {**os.environ, "LOGOMESH_TASKS": str(task_lib)}
    proc = subprocess.Popen([sys.executable, "-m", "logomesh", "purple", "serve", "--mock", "--port", "0"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        within_30_s = ExchangeSettings(total_timeout_s=30)
        exchange = request_submission(found.group(1), adder, "adder:good:cli", within_30_s)
        assert exchange.submission.source == adder.labelled_submission("good").submission.source
        assert b"names no variant" not in exchange.response_bytes
        flawed = request_submission(found.group(1), adder, "adder:bad:cli", within_30_s)
        assert flawed.submission.source == adder.labelled_submission("bad").submission.source
        # a battle_id that names no variant (the green agent's default ids) gets the task's good submission
        streamed = ExchangeSettings(total_timeout_s=30, stream=True)
        default = request_submission(found.group(1), adder, "adder-5f0c", streamed)
        assert default.submission.source == adder.labelled_submission("good").submission.source
        note = "battle_id 'adder-5f0c' names no variant (TASK:VARIANT): served the 'good' submission of task 'adder'"
        assert note.encode() in default.response_bytes  # said in the answer itself
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert note in proc.stderr.read()  # and to whoever runs the server (read once it stopped: cannot block)
