"""The ``logomesh`` command line: mounts one command module per group.

Exit codes: 0 ok, 1 error, 2 usage, 3 verification failed. Results go to
stdout, progress and logs to stderr.
"""

from __future__ import annotations

from typing import Any

import typer

from logomesh.commands import (
    battle,
    campaign,
    console,
    export,
    green,
    inject,
    inject_campaign,
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
inject.app.command("campaign")(inject_campaign.campaign)
app.add_typer(inject.app, name="inject")
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
    """The CLI. What the parser refuses (an unknown command or option, a value of the wrong type) and a state
    folder that cannot be used are one line on stderr naming the fix (exit 2 and 1), like every command's own
    errors; the parser alone would draw a box of several lines."""
    import sys

    from logomesh.home import HomeError

    try:
        code = app(prog_name="logomesh", standalone_mode=False)
    except HomeError as exc:
        print(f"logomesh: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except PARSER_ERROR as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # no arguments: the help itself, as for --help
            exc.show()
        else:
            print(f"logomesh: error: {parser_error(exc)}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    raise SystemExit(code if isinstance(code, int) else 0)


def _parser_error_class() -> type[Exception]:
    """The parser's error base (click's ``ClickException``), found from Typer's public ``BadParameter``: Typer
    0.29 ships click inside itself, earlier versions use click, and both keep this base."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


PARSER_ERROR: Any = _parser_error_class()


def parser_error(exc: Any) -> str:
    """One line: the parser's message and where the help is."""
    message = " ".join(str(exc.format_message()).split())
    ctx = getattr(exc, "ctx", None)
    return f"{message} (see '{ctx.command_path} --help')" if ctx is not None else message
