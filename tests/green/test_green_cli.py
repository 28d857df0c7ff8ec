"""``logomesh green serve`` as a user runs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
from typer.testing import CliRunner

from logomesh.cli import app


def test_bad_port_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["green", "serve", "--port", "-1"])
    assert result.exit_code == 2
    assert "--port must be between 0 and 65535" in result.output


def test_green_process_serves_a_card_with_the_assessment_skill(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "logomesh", "green", "serve", "--port", "0",
                             "--home", str(tmp_path / "home")], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        assert str(tmp_path / "home") in line
        for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
            card = httpx.get(found.group(1).rstrip("/") + path, timeout=10).json()
            assert card["skills"][0]["id"] == "logomesh-contextual-debt-assessment"
            versions = {i["protocolVersion"] for i in card["supportedInterfaces"]}
            assert versions == {"1.0", "0.3"}
            assert card["capabilities"]["streaming"] is True
    finally:
        proc.terminate()
        proc.wait(timeout=10)
