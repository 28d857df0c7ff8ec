"""``logomesh purple serve``: purple agents as A2A servers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, fail

app = typer.Typer(help="Serve a purple (code generating) agent over A2A.", no_args_is_help=True)

DEFAULT_PORT = 9009

ResponseFormatOption = Annotated[
    str, typer.Option("--response-format", help="With --llm: auto (the endpoint's JSON-schema response format where "
                                               "it follows it, else fenced code blocks), json-schema or fenced.")
]
DefenceOption = Annotated[
    str, typer.Option("--defence", help="With --llm: none, or spotlight (every part that is not the task's own text, "
                                       "such as attachments and later messages, goes to the model delimited and "
                                       "marked as data, never instructions).")
]


@app.command("serve")
def serve(
    mock: Annotated[bool, typer.Option("--mock", help="Serve static answers keyed on battle_id.")] = False,
    llm: Annotated[bool, typer.Option("--llm", help="Serve answers from an OpenAI-compatible model.")] = False,
    kind: Annotated[str | None, typer.Option("--kind", help="Serve a registered kind, e.g. inject-obeying.")] = None,
    responses: Annotated[
        Path | None, typer.Option("--responses", help="With --mock: folder of <battle_id>.json answers.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="With --llm: chat-completions base URL, e.g. http://host/v1.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="With --llm: model name.")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", help="With --llm: the sampling seed sent to the model; with --kind: the kind's seed.")] = 0,
    temperature: Annotated[
        float, typer.Option("--temperature", help="With --llm: the sampling temperature sent to the model.")
    ] = 0.0,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="With --llm: the longest answer to ask for, in tokens "
                                 "(default: 2048, or what the model's context leaves after the prompt).")
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="With --llm: seconds to wait for each model reply.")
    ] = 300.0,
    prompt_template: Annotated[
        Path | None,
        typer.Option("--prompt-template", help="With --llm: a file whose text replaces the prompt; {task} is "
                                               "replaced by the task text, {entry_point} by its entry point."),
    ] = None,
    response_format: ResponseFormatOption = "auto",
    defence: DefenceOption = "none",
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = DEFAULT_PORT,
    card_url: Annotated[
        str | None, typer.Option("--card-url", help="URL to advertise in the agent card (default: http://HOST:PORT/).")
    ] = None,
) -> None:
    """Serve the mock or the LLM purple agent (A2A protocol 1.0 and 0.3 on one endpoint)."""
    from logomesh.purple.kinds import KindRefused, ServeOptions, purple_kind
    from logomesh.purple.server import serve_forever

    if mock + llm + (kind is not None) != 1:
        fail("choose exactly one of --mock, --llm or --kind NAME", EXIT_USAGE)
    if not 0 <= port <= 65535:
        fail(f"--port must be between 0 and 65535, not {port}", EXIT_USAGE)
    options = ServeOptions(responses, base_url, model, seed, temperature, max_tokens, timeout, prompt_template,
                           response_format, defence)
    try:
        factory, what = purple_kind(kind or ("mock" if mock else "llm"))(options)
    except KindRefused as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        serve_forever(factory, host, port, card_url, what)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)")
    except KeyboardInterrupt:
        pass

