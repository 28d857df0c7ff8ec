"""``logomesh purple serve``: purple agents as A2A servers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, fail

app = typer.Typer(help="Serve a purple (code generating) agent over A2A.", no_args_is_help=True)

DEFAULT_PORT = 9009


@app.command("serve")
def serve(
    mock: Annotated[bool, typer.Option("--mock", help="Serve static answers keyed on battle_id.")] = False,
    llm: Annotated[bool, typer.Option("--llm", help="Serve answers from an OpenAI-compatible model.")] = False,
    responses: Annotated[
        Path | None, typer.Option("--responses", help="With --mock: folder of <battle_id>.json answers.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="With --llm: chat-completions base URL, e.g. http://host/v1.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="With --llm: model name.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="With --llm: the sampling seed sent to the model.")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    card_url: Annotated[
        str | None, typer.Option("--card-url", help="URL to advertise in the agent card (default: http://HOST:PORT/).")
    ] = None,
) -> None:
    """Serve the mock or the LLM purple agent (A2A protocol 1.0 and 0.3 on one endpoint)."""
    from logomesh.purple.server import AppFactory, serve_forever

    if mock == llm:
        fail("choose exactly one of --mock or --llm", EXIT_USAGE)
    if not 0 <= port <= 65535:
        fail(f"--port must be between 0 and 65535, not {port}", EXIT_USAGE)
    factory: AppFactory
    if mock:
        if base_url or model:
            fail("--base-url and --model go with --llm, not --mock", EXIT_USAGE)
        if responses is not None and not responses.is_dir():
            fail(f"--responses {responses} is not a folder", EXIT_USAGE)
        from logomesh.purple.mock import MockResponses, mock_app_factory

        factory, what = mock_app_factory(MockResponses(responses)), "the mock purple agent"
    else:
        if not base_url or not model:
            fail("--llm needs --base-url URL and --model NAME", EXIT_USAGE)
        if responses is not None:
            fail("--responses goes with --mock, not --llm", EXIT_USAGE)
        if not base_url.startswith(("http://", "https://")):
            fail(f"--base-url must start with http:// or https://, not {base_url!r}", EXIT_USAGE)
        from logomesh.purple.llm import LlmSettings, llm_app_factory

        settings = LlmSettings(base_url, model, os.environ.get("OPENAI_API_KEY") or None, seed)
        factory, what = llm_app_factory(settings), f"the LLM purple agent ({model})"
    try:
        serve_forever(factory, host, port, card_url, what)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)")
    except KeyboardInterrupt:
        pass
