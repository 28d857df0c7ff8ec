"""``logomesh purple serve``: purple agents as A2A servers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, fail

if TYPE_CHECKING:
    from logomesh.purple.endpoints import EndpointMemory

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
    response_format: Annotated[
        str, typer.Option("--response-format", help="With --llm: auto (the endpoint's JSON-schema response format "
                                                   "where it follows it, else fenced code blocks), json-schema or "
                                                   "fenced.")
    ] = "auto",
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
        if base_url or model or prompt_template or max_tokens is not None or response_format != "auto":
            fail("--base-url, --model, --max-tokens, --prompt-template and --response-format go with --llm, not "
                 "--mock", EXIT_USAGE)
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
        from logomesh.purple.llm import (
            PROMPT_TEMPLATE,
            RESPONSE_FORMATS,
            LlmSettings,
            TemplateError,
            check_template,
            llm_app_factory,
        )

        if response_format not in RESPONSE_FORMATS:
            fail(f"--response-format must be one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}",
                 EXIT_USAGE)

        if not 0 <= temperature <= 2:
            fail(f"--temperature must be between 0 and 2, not {temperature:g}", EXIT_USAGE)
        if max_tokens is not None and max_tokens < 1:
            fail(f"--max-tokens must be at least 1, not {max_tokens}", EXIT_USAGE)
        if not 0 < timeout <= 86400:
            fail(f"--timeout must be in (0, 86400] seconds, not {timeout:g}", EXIT_USAGE)
        template = PROMPT_TEMPLATE
        if prompt_template is not None:
            try:
                template = check_template(prompt_template.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                fail(f"--prompt-template {prompt_template}: cannot read it ({exc}); name a UTF-8 text file",
                     EXIT_USAGE)
            except TemplateError as exc:
                fail(f"--prompt-template {prompt_template}: {exc}; add it where the task should go", EXIT_USAGE)
        settings = LlmSettings(base_url, model, os.environ.get("OPENAI_API_KEY") or None, seed, timeout_s=timeout,
                               max_tokens=max_tokens, temperature=temperature, prompt_template=template,
                               response_format=response_format)
        factory, what = llm_app_factory(settings, _endpoint_memory(), learn_first=True), \
            f"the LLM purple agent ({model})"
    try:
        serve_forever(factory, host, port, card_url, what)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)")
    except KeyboardInterrupt:
        pass


def _endpoint_memory() -> EndpointMemory:
    """What ``auto`` learns of endpoints, kept in the state folder (``$LOGOMESH_HOME`` or the default); nothing
    is created until something is learned."""
    from logomesh.home import HomeError, resolve_home
    from logomesh.purple.endpoints import FILE_NAME, EndpointMemory

    try:
        return EndpointMemory(resolve_home(None, create=False) / FILE_NAME)
    except HomeError:  # the agent serves all the same; it only forgets
        return EndpointMemory()
