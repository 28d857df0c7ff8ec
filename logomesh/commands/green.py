"""``logomesh green serve``: the judge as an A2A server."""

from __future__ import annotations

from typing import Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, HomeOption, TasksDirOption, fail

app = typer.Typer(help="Serve the green (judge) agent over A2A.", no_args_is_help=True)

DEFAULT_PORT = 9000


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    card_url: Annotated[
        str | None, typer.Option("--card-url", help="URL to advertise in the agent card (default: http://HOST:PORT/).")
    ] = None,
    tasks_dir: TasksDirOption = None,
    home: HomeOption = None,
) -> None:
    """Serve the green agent (AgentBeats assessment protocol, A2A 1.0 and 0.3)."""
    from logomesh.green.app import green_app_factory
    from logomesh.green.executor import GreenSettings
    from logomesh.home import resolve_home
    from logomesh.purple.server import serve_forever

    if not 0 <= port <= 65535:
        fail(f"--port must be between 0 and 65535, not {port}", EXIT_USAGE)
    settings = GreenSettings(home=resolve_home(home), tasks_dir=tasks_dir)
    try:
        serve_forever(green_app_factory(settings), host, port, card_url, f"the green agent (ledger in {settings.home})")
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)")
    except KeyboardInterrupt:
        pass
