"""The ``logomesh`` command line: mounts one command module per group.

Exit codes: 0 ok, 1 error, 2 usage, 3 verification failed. Results go to
stdout, progress and logs to stderr.
"""

from __future__ import annotations

import typer

from logomesh.commands import (
    battle,
    campaign,
    console,
    export,
    green,
    keys,
    purple,
    red,
    replay,
    sandbox,
    scoring,
    tasks,
    verify,
)

app = typer.Typer(
    name="logomesh",
    help="Measure Contextual Debt: does code still do what its requirement intended?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(tasks.app, name="tasks")
app.add_typer(battle.app, name="battle")
app.command("score")(scoring.score)
app.command("calibrate")(scoring.calibrate)
app.add_typer(red.app, name="red")
app.add_typer(campaign.app, name="campaign")
app.command("console")(console.console)
app.add_typer(purple.app, name="purple")
app.add_typer(green.app, name="green")
app.add_typer(verify.app, name="verify")
app.add_typer(export.app, name="export")
app.command("replay")(replay.replay)
app.add_typer(keys.app, name="keys")
app.add_typer(sandbox.app, name="sandbox")


def main() -> None:
    """The CLI; a state folder that cannot be used is the one-line error every command shares (exit 1)."""
    import sys

    from logomesh.home import HomeError

    try:
        app()
    except HomeError as exc:
        print(f"logomesh: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
