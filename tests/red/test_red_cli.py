"""``logomesh red`` usage errors: one line naming the problem, a non-zero exit, no traceback, no sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from logomesh.cli import app


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--budget", "0"], 2, "--budget must be a finite, positive number"),
        (["--strategy", "greedy"], 2, "--strategy must be one of mcts, random, round-robin"),
        (["--sandbox", "vm"], 2, "--sandbox must be one of"),
    ],
)
def test_attack_rejects_bad_options(tmp_path: Path, args: list[str], code: int, needle: str) -> None:
    source = tmp_path / "solution.py"
    source.write_text("def build_select(t, c, w):\n    return 'SELECT 1', ()\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["red", "attack", "--task", "sql-select", "--code", str(source), *args])
    assert result.exit_code == code
    assert needle in result.output
    assert "Traceback" not in result.output


def test_attack_names_unknown_task_and_missing_code(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["red", "attack", "--task", "no-such-task", "--code", str(tmp_path / "x.py")])
    assert result.exit_code == 2 and "unknown task 'no-such-task'" in result.output
    result = CliRunner().invoke(app, ["red", "attack", "--task", "sql-select", "--code", str(tmp_path / "x.py")])
    assert result.exit_code == 1 and "cannot read --code" in result.output


def test_bench_rejects_bad_runs() -> None:
    result = CliRunner().invoke(app, ["red", "bench", "--runs", "0"])
    assert result.exit_code == 2 and "--runs must be at least 1" in result.output
