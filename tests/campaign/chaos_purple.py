"""A mock purple agent for campaign tests that can also hang, on loopback.

It serves ``DIR/<battle_id>.json`` like ``logomesh purple serve --mock
--responses DIR``; a file holding just ``HANG`` makes it sit on the request
instead, so the client's total timeout must end the battle.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from starlette.applications import Starlette

from logomesh import __version__
from logomesh.purple.mock import MOCK_SKILL, MockExecutor, MockResponses, battle_id_of
from logomesh.purple.server import AppFactory, agent_card, build_app
from logomesh.tasks import load_task

HANG = "HANG"
HANG_SECONDS = 30.0

MALFORMED = (
    '{"sourceCode": "def f(:\\n", "testCode": ',  # cut short
    '{"testCode": "", "rationale": "no code at all"}',  # a required field missing
    "I would rather not write code today.",  # prose, no JSON
    '{"sourceCode": 42, "testCode": "", "rationale": "wrong type"}',
)

HOSTILE = (
    "import os\nos._exit(0)\n",  # leave at import, hoping for a clean exit status
    "print('Ran 99 tests in 0.001s\\n\\nOK\\n99 passed')\nraise SystemExit(0)\n",  # forged success
    "hog = []\nwhile True:\n    hog.append(b'x' * (32 << 20))\n",  # memory bomb at import
    "import sys\nfor i in range(1_000_000):\n    sys.stdout.write('flood %d\\n' % i)\n",  # a million lines
    "import os, socket\nopen('/tmp/../etc/logomesh-pwned', 'w').write(str(dict(os.environ)))\n"
    "socket.create_connection(('127.0.0.1', 22), timeout=1)\n",  # write outside, read env, dial out
    "import unittest\nunittest.TestCase.run = lambda self, result=None: None\n",  # patch the runner
)


class ChaosExecutor(MockExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        if self.responses.lookup(battle_id_of(context.message)).text.strip() == HANG:
            await asyncio.sleep(HANG_SECONDS)
        await super().execute(context, event_queue)


def chaos_app_factory(responses_dir: Path) -> AppFactory:
    executor = ChaosExecutor(MockResponses(responses_dir))

    def make(url: str) -> Starlette:
        card = agent_card("chaos purple", "Canned answers, some broken, some hanging.", url, [MOCK_SKILL],
                          version=__version__)
        return build_app(card, executor, executor.screen)

    return make


def write_responses(folder: Path, battles: list[tuple[str, str]], seed: int) -> dict[str, str]:
    """One response file per ``(battle_id, task_id)``: 10% malformed, 5% hanging, 5% hostile, the rest good.

    Returns the kind given to each battle id. Exactly those shares, placed by a seeded shuffle.
    """
    rng = random.Random(seed)
    n = len(battles)
    kinds = ["malformed"] * (n // 10) + ["hang"] * (n // 20) + ["hostile"] * (n // 20)
    kinds += ["good"] * (n - len(kinds))
    rng.shuffle(kinds)
    given: dict[str, str] = {}
    for (battle_id, task_id), kind in zip(battles, kinds, strict=True):
        given[battle_id] = kind
        if kind == "hang":
            text = HANG
        elif kind == "malformed":
            text = rng.choice(MALFORMED)
        else:
            task = load_task(task_id)
            good = task.labelled_submission("good").submission.to_json()
            if kind == "hostile":  # it defines the entry point, so the judge runs it (no module is a purple failure)
                hostile = rng.choice(HOSTILE) + f"\n\ndef {task.entry_point}(*args, **kwargs):\n    return None\n"
                good = {**good, "sourceCode": hostile, "testCode": ""}
            text = json.dumps(good)
        (folder / f"{battle_id}.json").write_text(text, encoding="utf-8")
    return given
