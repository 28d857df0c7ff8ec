"""Out of the box: `logomesh green serve` judges `logomesh purple serve --mock` from a default request.

Both servers run as the processes a user starts, on loopback; the assessment is
sent with the a2a-sdk client and names nothing but the purple URL and the task.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part
from a2a.types import TaskState
from green_sdk import sdk_send

from ledger import Ledger

pytestmark = pytest.mark.docker


@contextmanager
def serving(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``logomesh ARGS --port 0`` running; yields the URL it announced and the process."""
    proc = subprocess.Popen([sys.executable, "-m", "logomesh", *args, "--port", "0"], stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r" at (http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        yield found.group(1), proc
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.mark.slow
def test_a_default_assessment_of_the_mock_purple_agent_is_scored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with serving("purple", "serve", "--mock") as (purple_url, purple), \
            serving("green", "serve", "--home", str(home)) as (green_url, _):
        request = {"participants": {"purple": purple_url}, "config": {"task_id": "rate-limiter"}}
        events = sdk_send(green_url, "1.0", [new_data_part(request)], timeout_s=400)
    assert purple.stderr is not None
    said = purple.stderr.read()  # the server has stopped: this cannot block
    last = events[-1]
    final = last.status_update.status.state if last.HasField("status_update") else last.task.status.state
    assert final == TaskState.TASK_STATE_COMPLETED
    (artifact,) = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    (result,) = get_data_parts(artifact.parts)
    assert result["status"] == "scored", result.get("reason")
    assert result["battle_id"].startswith("rate-limiter-")  # the green's own id, which names no mock variant
    assert result["tests"]["hidden"]["passed"] == result["tests"]["hidden"]["total"] > 0  # the good submission
    assert f"battle {result['battle_id']}" in " ".join(get_text_parts(artifact.parts))
    note = f"battle_id {result['battle_id']!r} names no variant (TASK:VARIANT): served the 'good' submission"
    assert note in said
    with Ledger.open(home) as led:
        stored = led.get(result["battle_id"])
    assert stored is not None and stored.result["cis_score"] == pytest.approx(result["cis_score"])
    assert note.encode() in stored.inputs["purple_response"]  # the ledger keeps what the mock said
