"""Options and error handling shared by every command."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from logomesh.sandbox.choose import kinds

HomeOption = Annotated[
    Path | None,
    typer.Option("--home", help="State folder (default: $LOGOMESH_HOME, else ~/.local/share/logomesh)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]

EXIT_OK = 0
RED_BUDGET_HELP = "Red agent budget in seconds, spent as 4 leaf plays a second (the same on a loaded host)."
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_VERIFY_FAILED = 3


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print one line on stderr and exit: the contract for every bad input."""
    print(f"logomesh: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def check_seconds(option: str, value: float, hint: str = "") -> None:
    """A finite, positive number of seconds, or the one-line usage error naming ``option`` (exit 2)."""
    if not math.isfinite(value) or value <= 0:
        fail(f"{option} must be a finite, positive number of seconds, not {value!r}{hint}", EXIT_USAGE)


def check_battle_id(value: str | None) -> None:
    """The ledger's one rule for battle ids (characters and length), applied before anything runs (exit 2)."""
    from ledger import LedgerError
    from ledger.dbom import check_battle_id as ledger_rule

    if value is not None:
        try:
            ledger_rule(value)
        except LedgerError as exc:
            fail(f"--battle-id: {exc}", EXIT_USAGE)


class OneOf:
    """A choice among words as a typer ``parser``: anything else is the one-line usage error (exit 2).
    ``choices`` is the words, or a function giving them when a value is parsed (a registry's names)."""

    def __init__(self, option: str, choices: Sequence[str] | Callable[[], Sequence[str]]) -> None:
        self.option = option
        self._choices = choices
        self.metavar = "[" + "|".join(self.choices) + "]"

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._choices() if callable(self._choices) else self._choices)

    def __call__(self, value: str) -> str:
        choices = self.choices
        if value in choices:
            return value
        fail(f"{self.option} must be one of {', '.join(choices)}, not {value!r}", EXIT_USAGE)


SANDBOX_CHOICE = OneOf("--sandbox", kinds)
SandboxOption = Annotated[
    str, typer.Option("--sandbox", parser=SANDBOX_CHOICE, metavar=SANDBOX_CHOICE.metavar,
                      help="auto (Docker, else bubblewrap), docker or bwrap.")
]


def use_tasks_dir(value: Path | None) -> Path | None:
    """Select the task library for this process: ``--tasks-dir`` becomes ``$LOGOMESH_TASKS``.

    Through the environment every reader of the library sees it (the loader's default, the console's
    picker, the mock purple agent) and so do campaign workers, local processes and Ray tasks alike.
    """
    if value is None:
        return None
    folder = value.expanduser().resolve()
    if not folder.is_dir():
        fail(f"--tasks-dir {value}: no such folder (give a folder of task folders; see docs/tasks.md)", EXIT_USAGE)
    if not any((p / "task.toml").is_file() for p in folder.iterdir()):
        fail(f"--tasks-dir {value}: holds no task folder with a task.toml (see docs/tasks.md; "
             "'logomesh tasks new ID' makes one)", EXIT_USAGE)
    os.environ["LOGOMESH_TASKS"] = str(folder)
    return folder


TasksDirOption = Annotated[
    Path | None,
    typer.Option("--tasks-dir", callback=use_tasks_dir, is_eager=True, show_default=False,
                 help="Task library folder (default: $LOGOMESH_TASKS, else the built-in tasks/)."),
]
