"""R: windowed embeddings of the code (prose stripped) against the task's intent."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from logomesh.scoring.config import DEFAULT_CONFIG
from logomesh.scoring.minilm import MiniLM
from logomesh.scoring.rationale import code_text, embed, load_model, rationale_score, spread, token_windows
from logomesh.tasks import TaskSpec, load_task


def test_windows_cover_every_token_overlap_and_respect_the_size() -> None:
    ids = list(range(450))
    parts = token_windows(ids, 200, 100)
    assert [len(p) for p in parts] == [200, 200, 200, 150]
    assert sorted({i for p in parts for i in p}) == ids
    assert parts[0][100:] == parts[1][:100]
    assert token_windows(list(range(5)), 200, 100) == [list(range(5))]
    with pytest.raises(ValueError, match="stride"):
        token_windows(ids, 100, 0)


def test_spread_samples_evenly_with_both_ends() -> None:
    assert spread(5, 32) == [0, 1, 2, 3, 4]
    assert spread(100, 5) == [0, 25, 50, 74, 99]
    assert spread(7, 1) == [0]


def test_a_huge_source_is_sampled_not_truncated_and_says_so(model: MiniLM, rate_limiter: TaskSpec) -> None:
    config = dataclasses.replace(DEFAULT_CONFIG, max_windows=3)
    blob = "x = " + " + ".join(f"value_{i}" for i in range(1500)) + "\n"
    result = rationale_score(rate_limiter, blob, config)
    assert result.windows > 3 and result.embedded == 3


def test_the_model_is_loaded_once(model: MiniLM) -> None:
    assert load_model() is model


@pytest.mark.slow  # loads sentence-transformers beside the model, about 14 s: the full tier's
def test_encoder_graph_matches_sentence_transformers(model: MiniLM) -> None:
    """The encoder graph built from the weights gives the library's embedding (the reason it may replace it)."""
    from sentence_transformers import SentenceTransformer

    from logomesh.scoring.minilm import model_root

    reference = SentenceTransformer(str(model_root()), device="cpu")
    texts = ["Thread-safe LRU cache with O(1) get and put.", "def f(x):\n    return x * 2\n"]
    expected = reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    for text, vector in zip(texts, expected, strict=True):
        ours = model.embed_ids(model.token_ids(text))
        assert np.abs(ours - vector).max() < 1e-4


def test_long_code_is_embedded_in_windows_with_nothing_dropped(model: MiniLM) -> None:
    body = "".join(f"def helper_{i}(value):\n    return value * {i} + len(str(value))\n\n" for i in range(60))
    vector, count, embedded = embed(body, DEFAULT_CONFIG)
    assert count >= 3 and embedded == count
    tail_changed, _, _ = embed(body + "class Zebra:\n    stripes = 'black and white savanna'\n" * 3, DEFAULT_CONFIG)
    assert float(np.dot(vector, tail_changed)) < 0.9999  # the end of a long text still moves the vector
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-9


def test_code_text_removes_docstrings_and_comments() -> None:
    source = (
        '"""Module doc."""\n# a comment\nclass A:\n    """Class doc."""\n'
        '    def f(self):\n        "x"\n        return 1\n'
    )
    stripped = code_text(source)
    assert "doc" not in stripped and "comment" not in stripped
    assert "return 1" in stripped
    assert code_text("def broken(:\n") == "def broken ( :"


def test_pasting_the_task_description_into_a_docstring_does_not_raise_r(model: MiniLM, rate_limiter: TaskSpec) -> None:
    wrong = "def add(a, b):\n    return a + b\n"
    pasted = f'"""\n{rate_limiter.description}\n"""\n{wrong}'
    plain = rationale_score(rate_limiter, wrong, DEFAULT_CONFIG)
    assert rationale_score(rate_limiter, pasted, DEFAULT_CONFIG).score == plain.score


def test_the_task_own_good_code_beats_another_task_code(model: MiniLM, rate_limiter: TaskSpec) -> None:
    own = rate_limiter.labelled_submission("good").submission.source
    other = load_task("lru-cache").labelled_submission("good").submission.source
    r_own = rationale_score(rate_limiter, own, DEFAULT_CONFIG)
    r_other = rationale_score(rate_limiter, other, DEFAULT_CONFIG)
    assert r_own.score > r_other.score + 0.2
    assert 0.0 <= r_other.score <= r_own.score <= 1.0
    assert len(r_own.intent_vector) == 384
    assert r_own.intent_vector == r_other.intent_vector


def test_concurrent_embeddings_are_byte_identical_to_sequential_ones(model: MiniLM, rate_limiter: TaskSpec) -> None:
    """Concurrent battles share one model: their embeddings must not depend on each other."""
    from concurrent.futures import ThreadPoolExecutor

    texts = [code_text(rate_limiter.labelled_submission(name).submission.source)
             for name in rate_limiter.submission_names()] * 3
    sequential = [embed(text, DEFAULT_CONFIG)[0].tobytes() for text in texts]
    with ThreadPoolExecutor(4) as pool:
        concurrent = [vector.tobytes() for vector, _, _ in pool.map(lambda t: embed(t, DEFAULT_CONFIG), texts)]
    assert concurrent == sequential


def test_the_thread_count_changes_no_byte_of_an_embedding(model: MiniLM, rate_limiter: TaskSpec) -> None:
    """Scoring uses the cores it is given; a one-core CI runner and a 4-core laptop must record the same R."""
    from logomesh.scoring.minilm import model_root

    texts = [code_text(rate_limiter.labelled_submission(name).submission.source)
             for name in rate_limiter.submission_names()]
    windows = [ids[:254] for ids in (model.token_ids(text) for text in texts)]
    windows.append(model.token_ids("x = 1"))
    one_thread = MiniLM(model_root(), threads=1)
    baseline = [one_thread.embed_ids(ids).tobytes() for ids in windows]
    for threads in (2, 3, 4):
        other = MiniLM(model_root(), threads=threads)
        assert other.threads == threads
        assert [other.embed_ids(ids).tobytes() for ids in windows] == baseline, f"{threads} threads"


def test_loading_the_encoder_leaves_no_file_behind(tmp_path: Path) -> None:
    """ONNX Runtime's telemetry client writes a session-id file into $TMPDIR unless it is switched off."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"} | {"TMPDIR": str(tmp_path)}
    script = "from logomesh.scoring.rationale import load_model; print(len(load_model().embed_ids([100, 200])))"
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "384", run.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []
