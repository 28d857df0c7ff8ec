"""``logomesh console``: the Textual battle console (imported lazily)."""

from __future__ import annotations

import sys

from logomesh.commands.common import HomeOption, TasksDirOption, fail


def console(home: HomeOption = None, tasks_dir: TasksDirOption = None) -> None:
    """Open the Textual battle console: run battles live, browse, verify and export the ledger."""
    from logomesh.home import resolve_home

    resolve_home(home, create=False)  # a file given as --home is named before the terminal is
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        fail("the console needs an interactive terminal; use 'logomesh battle run' in scripts")
    from tui.app import run_console

    run_console(resolve_home(home))
