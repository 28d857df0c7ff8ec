"""``logomesh console``: refuses a non-interactive terminal cleanly and loads the UI only when run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from logomesh.cli import app


def test_console_without_a_terminal_fails_with_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["console", "--home", str(tmp_path / "home")])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines == ["logomesh: error: the console needs an interactive terminal; use 'logomesh battle run' in scripts"]
    assert "Traceback" not in result.output


def test_the_cli_imports_no_ui_until_the_console_runs() -> None:
    code = (
        "import json, sys\n"
        "import logomesh.cli, logomesh.commands.console\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
