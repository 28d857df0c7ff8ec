"""``logomesh inject run``: bad input is one line and a non-zero exit, before any query or record."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from logomesh.cli import app


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [([], 2, "name exactly one purple agent: --purple URL or --purple-kind NAME"),
     (["--purple", "http://127.0.0.1:9/", "--purple-kind", "inject-obeying"], 2, "name exactly one purple agent"),
     (["--purple", "ftp://127.0.0.1/"], 2, "--purple "),
     (["--purple-kind", "nope"], 2, "unknown purple agent kind 'nope'"),
     (["--purple-kind", "inject-obeying", "--objective", "steal"], 2,
      "--objective must be one of leak-canary, write-outside, backdoor, drop-behaviour, not 'steal'"),
     (["--purple-kind", "inject-obeying", "--budget", "0"], 2, "--budget must be a whole number of queries"),
     (["--purple-kind", "inject-obeying", "--search", "greedy"], 2,
      "--search must be one of mcts, random, templates, not 'greedy'"),
     (["--purple-kind", "inject-obeying", "--purple-timeout", "0"], 2, "--purple-timeout must be a finite"),
     (["--purple-kind", "inject-obeying", "--task", "no-such-task"], 2, "no-such-task"),
     (["--purple", "http://127.0.0.1:9/"], 1, "the run cannot start: the purple agent at http://127.0.0.1:9/ does not "
                                              "answer")],
)
def test_bad_input_is_one_line_before_any_work(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    task = [] if "--task" in args else ["--task", "rate-limiter"]
    result = CliRunner().invoke(app, ["inject", "run", *task, *args, "--home", str(tmp_path / "home")])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "home" / "battles.db").exists()
