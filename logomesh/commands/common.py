"""Options and error handling shared by every command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

HomeOption = Annotated[
    Path | None,
    typer.Option("--home", help="State folder (default: $LOGOMESH_HOME, else ~/.local/share/logomesh)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_VERIFY_FAILED = 3


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print one line on stderr and exit: the contract for every bad input."""
    print(f"logomesh: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def not_implemented(what: str) -> NoReturn:
    fail(f"'{what}' is not implemented yet")
