"""Scoring speed: model load, and score_submission per submission with the model loaded.

Usage: python benchmarks/scoring_bench.py [--repeat N] [--json]

Figures:
  model_load     a fresh process: import logomesh.scoring and load the model (median of --repeat processes)
  score_cold     score_submission for each task's first submission (embeds the task's intent once)
  score_warm     score_submission over every labelled submission of every task, --repeat passes
                 (median, mean, p95, max, and the process CPU time); sandbox and red agent excluded
  window         one full 254-token window through the encoder on 1 thread and on the default
                 thread count, interleaved in the same run (the thread count never changes the bytes)
  reference      the intent check's reference set (library + 164 HumanEval prompts) in a fresh process:
                 built from the disk cache, and the intent check alone per submission (part of score_warm)
Targets from the issue: model load < 3 s; scoring < 150 ms per submission once the model is loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LOAD_SCRIPT = (
    "import time; t = time.perf_counter(); "
    "from logomesh.scoring.rationale import load_model; load_model(); "
    "print(time.perf_counter() - t)"
)


def model_load(repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        run = subprocess.run([sys.executable, "-c", LOAD_SCRIPT], capture_output=True, text=True, check=True, cwd=ROOT)
        out.append(float(run.stdout.strip()))
    return out


def _tasks() -> list[Any]:
    """Every task folder that loads; a half-written one is skipped with a note on stderr."""
    from logomesh.tasks import TaskError, default_tasks_dir, load_task_dir

    out = []
    for folder in sorted(p for p in default_tasks_dir().iterdir() if p.is_dir()):
        try:
            out.append(load_task_dir(folder))
        except TaskError as exc:
            print(f"skipped: {exc}", file=sys.stderr)
    return out


def scoring(repeat: int) -> tuple[list[float], list[float], list[float], int]:
    from logomesh.sandbox import SuiteRun, TestOutcome
    from logomesh.scoring import score_submission
    from logomesh.scoring.measure import Measured
    from logomesh.scoring.rationale import load_model
    load_model()
    cases = []
    for task in _tasks():
        hidden = SuiteRun(tuple(TestOutcome(f"t.T.test_{i}", "passed") for i in range(12)))
        purple = SuiteRun(tuple(TestOutcome(f"p.T.test_{i}", "passed") for i in range(5)))
        measured = Measured(hidden, purple, None, ())
        cases += [(task, task.labelled_submission(n).submission, measured) for n in task.submission_names()]
    cold: list[float] = []
    seen: set[str] = set()
    for task, submission, measured in cases:
        if task.id in seen:
            continue
        seen.add(task.id)
        start = time.perf_counter()
        score_submission(task, submission, measured).result_fields()
        cold.append(time.perf_counter() - start)
    warm: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        for task, submission, measured in cases:
            start, start_cpu = time.perf_counter(), time.process_time()
            score_submission(task, submission, measured).result_fields()
            warm.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    return cold, warm, cpu, len(cases)


REFERENCE_SCRIPT = (
    "import time; from logomesh.scoring.rationale import load_model; load_model(); "
    "from logomesh.scoring import DEFAULT_CONFIG; from logomesh.scoring.reference import reference_for; "
    "from logomesh.tasks import load_task; task = load_task('rate-limiter'); "
    "reference_for(task, DEFAULT_CONFIG); "  # fills the disk cache if it is empty
    "from logomesh.scoring import reference; reference._SETS.clear(); t = time.perf_counter(); "
    "reference_for(task, DEFAULT_CONFIG); print(time.perf_counter() - t)"
)


def reference_load(repeat: int) -> list[float]:
    """Seconds to build the reference set from the disk cache, in fresh processes (first use in a process)."""
    out = []
    for _ in range(repeat):
        run = subprocess.run([sys.executable, "-c", REFERENCE_SCRIPT], capture_output=True, text=True, check=True,
                             cwd=ROOT)
        out.append(float(run.stdout.strip()))
    return out


def intent_times(repeat: int) -> list[float]:
    """Seconds for the intent check alone (one product with the reference matrix), per labelled submission."""
    from logomesh.scoring import DEFAULT_CONFIG
    from logomesh.scoring.intent import intent_check
    from logomesh.scoring.rationale import rationale_score

    scored = [(task, rationale_score(task, task.labelled_submission(n).submission.source, DEFAULT_CONFIG))
              for task in _tasks() for n in task.submission_names()]
    out = []
    for _ in range(repeat):
        for task, r in scored:
            start = time.perf_counter()
            intent_check(task, r, DEFAULT_CONFIG)
            out.append(time.perf_counter() - start)
    return out


def window_times(repeat: int) -> tuple[list[float], list[float], int]:
    """Seconds per full window on one thread and on the default count, alternating so both see the same host."""
    from logomesh.scoring.minilm import MiniLM, model_root
    from logomesh.scoring.rationale import load_model

    default = load_model()
    single = MiniLM(model_root(), threads=1)
    ids = (default.token_ids(" ".join(f"value_{i} = compute(value_{i - 1})" for i in range(1, 200))))[:254]
    one: list[float] = []
    many: list[float] = []
    for _ in range(max(5, 3 * repeat)):
        for model, out in ((single, one), (default, many)):
            start = time.perf_counter()
            model.embed_ids(ids)
            out.append(time.perf_counter() - start)
    return one, many, default.threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    loads = model_load(args.repeat)
    cold, warm, cpu, n = scoring(args.repeat)
    one, many, threads = window_times(args.repeat)
    references = reference_load(args.repeat)
    checks = intent_times(args.repeat)
    warm_sorted = sorted(warm)
    figures: dict[str, Any] = {
        "model_load_s": statistics.median(loads),
        "score_cold_ms_max": 1000 * max(cold),
        "score_warm_ms_median": 1000 * statistics.median(warm),
        "score_warm_ms_mean": 1000 * statistics.fmean(warm),
        "score_warm_ms_p95": 1000 * warm_sorted[int(0.95 * (len(warm_sorted) - 1))],
        "score_warm_ms_max": 1000 * max(warm),
        "score_warm_cpu_ms_median": 1000 * statistics.median(cpu),
        "window_ms_1_thread": 1000 * statistics.median(one),
        "window_ms_default_threads": 1000 * statistics.median(many),
        "encoder_threads": threads,
        "reference_load_ms_median": 1000 * statistics.median(references),
        "intent_check_ms_median": 1000 * statistics.median(checks),
        "intent_check_ms_max": 1000 * max(checks),
        "load_average_1min": os.getloadavg()[0],
        "submissions": n,
    }
    figures["load_vs_target"] = figures["model_load_s"] / 3.0
    figures["warm_median_vs_target"] = figures["score_warm_ms_median"] / 150.0
    figures["warm_p95_vs_target"] = figures["score_warm_ms_p95"] / 150.0
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
        return
    f = figures
    print(f"model load          {f['model_load_s']:.3f} s   (target < 3 s, ratio {f['load_vs_target']:.2f})")
    print(f"score, cold intent  {f['score_cold_ms_max']:.1f} ms max over {len(cold)} tasks")
    print(f"score, warm         median {f['score_warm_ms_median']:.1f} ms  mean {f['score_warm_ms_mean']:.1f} ms"
          f"  p95 {f['score_warm_ms_p95']:.1f} ms  max {f['score_warm_ms_max']:.1f} ms"
          f" over {len(warm)} scorings of {n} submissions")
    print(f"                    target < 150 ms: median ratio {f['warm_median_vs_target']:.2f},"
          f" p95 ratio {f['warm_p95_vs_target']:.2f}")
    print(f"score, warm CPU     median {f['score_warm_cpu_ms_median']:.1f} ms (process CPU, all threads)")
    print(f"encoder window      {f['window_ms_1_thread']:.1f} ms on 1 thread,"
          f" {f['window_ms_default_threads']:.1f} ms on {threads} (254 tokens, median, side by side)")
    print(f"intent check        {f['intent_check_ms_median']:.2f} ms median, {f['intent_check_ms_max']:.2f} ms max"
          f" (included in score, warm); reference set from the disk cache {f['reference_load_ms_median']:.0f} ms"
          f" once per process")
    print(f"host load average   {f['load_average_1min']:.1f} (figures above are wall clock; compare with care)")


if __name__ == "__main__":
    main()
