"""``logomesh score`` and ``logomesh calibrate``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from logomesh.commands.common import (
    EXIT_ERROR,
    EXIT_USAGE,
    RED_BUDGET_HELP,
    JsonOption,
    SandboxOption,
    TasksDirOption,
    check_seconds,
    fail,
)
from logomesh.plural import counted

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox
    from logomesh.scoring.config import LlmConfig, ScoringConfig
    from logomesh.scoring.measure import Measured

RedBudgetOption = Annotated[float, typer.Option("--red-budget", help=RED_BUDGET_HELP)]
NoRedOption = Annotated[bool, typer.Option("--no-red", help="Skip the red agent.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed for the red agent.")]
LlmUrlOption = Annotated[
    str | None, typer.Option("--llm-base-url", help="OpenAI-compatible endpoint for the bounded review (off).")
]
LlmModelOption = Annotated[str | None, typer.Option("--llm-model", help="Model name for --llm-base-url.")]
LlmTimeoutOption = Annotated[
    float, typer.Option("--llm-timeout", help="Seconds to wait for the review's reply (then no adjustment).")
]
LlmMaxTokensOption = Annotated[int | None, typer.Option("--llm-max-tokens", help="Longest review reply to ask for.")]


def _check_red_budget(red_budget: float) -> None:
    check_seconds("--red-budget", red_budget)


def review_llm(llm_base_url: str | None, llm_model: str | None, timeout_s: float = 30.0,
               max_tokens: int | None = None) -> LlmConfig | None:
    """The senior review's endpoint from the ``--llm-*`` options (``None``: off); usage errors exit 2."""
    from logomesh.scoring import LlmConfig

    if (llm_base_url is None) != (llm_model is None):
        fail("give both --llm-base-url and --llm-model, or neither", 2)
    if not 0 < timeout_s <= 3600:
        fail(f"--llm-timeout must be in (0, 3600] seconds, not {timeout_s:g}", 2)
    if max_tokens is not None and max_tokens < 1:
        fail(f"--llm-max-tokens must be at least 1, not {max_tokens}", 2)
    if llm_base_url is None or llm_model is None:
        return None
    if not llm_base_url.startswith(("http://", "https://")):
        fail(f"--llm-base-url must start with http:// or https://, not {llm_base_url!r}", 2)
    return LlmConfig(base_url=llm_base_url, model=llm_model, timeout_s=timeout_s, max_tokens=max_tokens)


def _config(llm_base_url: str | None, llm_model: str | None, timeout_s: float = 30.0,
            max_tokens: int | None = None) -> ScoringConfig:
    from logomesh.scoring import DEFAULT_CONFIG

    return DEFAULT_CONFIG.with_llm(review_llm(llm_base_url, llm_model, timeout_s, max_tokens))


def _read_submission(path: Path) -> Any:
    """The submission file, or the one-line usage error (exit 2): unreadable, too large, not a submission."""
    from logomesh.submission import MAX_SUBMISSION_BYTES, Submission, SubmissionError

    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SUBMISSION_BYTES + 1)
    except OSError as exc:
        fail(f"cannot read submission {path}: {exc.strerror} (give a JSON file with sourceCode, testCode, rationale)",
             EXIT_USAGE)
    if len(raw) > MAX_SUBMISSION_BYTES:
        fail(f"{path} is larger than {MAX_SUBMISSION_BYTES} bytes, the cap on a purple agent's answer: a "
             "submission that large is refused unscored", EXIT_USAGE)
    try:
        return Submission.from_text(raw.decode("utf-8"), raw)
    except UnicodeDecodeError:
        fail(f"{path}: not UTF-8 text (give a JSON file with sourceCode, testCode, rationale)", EXIT_USAGE)
    except SubmissionError as exc:
        fail(f"{path}: {exc}", EXIT_USAGE)


def _check_module(path: Path, source: str, entry_point: str) -> None:
    """The check a battle makes of a purple answer before judging: a module without the entry point is
    not scored there (a failure at stage purple), so it is refused here too (exit 2)."""
    from logomesh.tasks.module_check import module_problem

    problem = module_problem(source, entry_point)
    if problem is not None:
        fail(f"{path}: not scored: {problem.replace('the agent returned', 'sourceCode holds', 1)} (a battle "
             "records this as a failure at stage purple): give the module that defines it", EXIT_USAGE)


@contextlib.contextmanager
def _announced_sandbox(kind: str, code_bytes: int, red_note: str) -> Iterator[Sandbox]:
    """The sandbox ``score`` measures in, announced on stderr once it is open."""
    from logomesh.sandbox import open_sandbox

    with open_sandbox(kind) as box:
        print(f"score: {code_bytes} bytes of code in the {box.backend} sandbox: hidden suite, purple tests, "
              f"{red_note}", file=sys.stderr, flush=True)
        yield box


def score(
    task: Annotated[str, typer.Option("--task", help="Task id (see 'logomesh tasks list').")],
    submission: Annotated[Path, typer.Option("--submission", help="JSON file {sourceCode, testCode, rationale}.")],
    sandbox: SandboxOption = "auto",
    red_budget: RedBudgetOption = 10.0,
    no_red: NoRedOption = False,
    seed: SeedOption = 0,
    llm_base_url: LlmUrlOption = None,
    llm_model: LlmModelOption = None,
    llm_timeout: LlmTimeoutOption = 30.0,
    llm_max_tokens: LlmMaxTokensOption = None,
    tasks_dir: TasksDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Score one submission file against a task (sandbox and red agent included), without a purple agent."""
    from ledger.canonical import canonical_sha256
    from logomesh.context import BattleContext
    from logomesh.progress import ProgressPrinter
    from logomesh.sandbox import SandboxUnavailable
    from logomesh.scoring.pipeline import Judging, measure_and_score
    from logomesh.tasks import TaskError, load_task

    _check_red_budget(red_budget)
    config = _config(llm_base_url, llm_model, llm_timeout, llm_max_tokens)
    try:
        spec = load_task(task)
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)
    sub = _read_submission(submission)
    _check_module(submission, sub.source, spec.entry_point)
    progress = ProgressPrinter()  # stages, failed tests, findings and components on stderr as they happen
    red_note = f"then the red agent for {red_budget:g} s" if not no_red else "no red agent"

    def measured_note(measured: Measured) -> None:
        print(f"score: hidden {measured.hidden.passed}/{measured.hidden.total} passed; scoring", file=sys.stderr,
              flush=True)

    judging = Judging(red=not no_red, red_budget_s=red_budget, config=config)
    try:
        card = measure_and_score(spec, sub, _announced_sandbox(sandbox, len(sub.source.encode()), red_note),
                                 judging, BattleContext(seed=seed, emit=progress), on_measured=measured_note).card
    except SandboxUnavailable as exc:
        fail(str(exc))
    result: dict[str, Any] = {"task_id": spec.id, **card.result_fields(), "status": "scored",
                              "red_enabled": not no_red}
    digest = canonical_sha256(result)
    if as_json:
        print(json.dumps({"result": result, "result_sha256": digest}, indent=2, sort_keys=True, ensure_ascii=False))
        return
    print(f"CIS {result['cis_score']:.4f}  (R {result['rationale_score']:.4f}  A {result['architecture_score']:.4f}"
          f"  T {result['testing_score']:.4f}  L {result['logic_score']:.4f})")
    print(f"red penalty {result['red_penalty_applied']:.4f}  intent penalty {result['intent_penalty']:.4f}"
          f"  behaviour penalty {result['behaviour_penalty']:.4f}"
          f"  hidden {result['tests']['hidden']['passed']}/{result['tests']['hidden']['total']}")
    print(f"x {result['cis_within_band']:.4f}, then the band: {result['components']['rests_on']['band']}")
    purple = result["tests"]["purple"]
    caught = ""
    if "flawed_total" in purple:
        caught = f", flawed variants caught {purple['flawed_caught']}/{purple['flawed_total']}"
    wrong = purple.get("wrong_claims", [])
    if wrong:
        caught += f"; {counted(len(wrong), 'test')} failed on the reference (wrong claims): {', '.join(wrong)}"
    print(f"purple tests {purple['passed']}/{purple['total']}{caught}")
    parts = "  ".join(f"{k} {v:.4f}" for k, v in result["components"]["logic"]["parts"].items())
    print(f"L parts: {parts}")
    for vuln in result["red_analysis"]["vulnerabilities"]:
        print(f"finding: {vuln['severity']} {vuln['family']} ({vuln['cwe']}): {vuln['summary']}")
    for violation in result["components"]["architecture"]["violations"]:
        print(f"violation: line {violation['line']}: {violation['kind']} ({violation['constraint']}):"
              f" {violation['detail']}")
    print(f"H(result) {digest}")


def _calibration_config(intent_threshold: float | None) -> ScoringConfig:
    """The scoring config, with ``--intent-threshold`` tried in place of its own (bad input: one line, exit 2)."""
    from logomesh.scoring import DEFAULT_CONFIG

    if intent_threshold is None:
        return DEFAULT_CONFIG
    if not 0.0 < intent_threshold <= 1.0:
        fail("--intent-threshold must be in (0, 1]", 2)
    return dataclasses.replace(DEFAULT_CONFIG, intent_threshold=intent_threshold)


def calibrate(
    sandbox: SandboxOption = "auto",
    red_budget: RedBudgetOption = 3.0,
    no_red: NoRedOption = False,
    seed: SeedOption = 0,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids (repeatable).")] = None,
    intent_threshold: Annotated[
        float | None, typer.Option("--intent-threshold", help="Try another intent threshold (default: the config's).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """CIS over every task's labelled submissions; exit 1 if the ordering the labels demand fails."""
    from logomesh.sandbox import SandboxUnavailable, open_sandbox
    from logomesh.scoring.calibration import calibrate as run_calibration
    from logomesh.scoring.calibration import sandbox_scorer, table
    from logomesh.scoring.humaneval_intent import evaluate, summary
    from logomesh.tasks import TaskError, all_tasks, load_task

    _check_red_budget(red_budget)
    config = _calibration_config(intent_threshold)
    try:
        library = all_tasks()
    except TaskError as exc:  # the library itself is broken
        fail(str(exc))
    try:
        specs = [load_task(t) for t in task] if task else library
    except TaskError as exc:  # a --task the caller misnamed, as for score
        fail(str(exc), EXIT_USAGE)
    if not specs:
        fail("the task library is empty (set LOGOMESH_TASKS to a folder of tasks)")
    try:
        with open_sandbox(sandbox) as box:
            scorer = sandbox_scorer(box, red=not no_red, red_budget_s=red_budget, seed=seed, config=config)
            report = run_calibration(specs, scorer, lambda t: print(f"calibrating {t}", file=sys.stderr), library)
    except SandboxUnavailable as exc:
        fail(str(exc))
    humaneval = None
    if task:  # the HumanEval check is the whole library's (164 problems, about a minute): not one task's
        print("skipping the intent check on HumanEval's 164 canonical solutions (it checks the whole library: "
              "run calibrate without --task)", file=sys.stderr)
    else:
        print("checking the intent on HumanEval's 164 canonical solutions", file=sys.stderr)
        humaneval = evaluate(library, config)
    ok = report.ok and (humaneval is None or humaneval.ok)
    if as_json:
        print(json.dumps({"ok": ok, "rows": [row.to_json() for row in report.rows],
                          "humaneval": None if humaneval is None else humaneval.to_json()}, indent=2,
                         sort_keys=True))
    else:
        print(table(report))
        if humaneval is not None:
            print()
            print(summary(humaneval))
    if not ok:
        raise typer.Exit(EXIT_ERROR)
