"""A trick against the judge buys no score: each hostile submission, scored in full, beside its honest control.

The whole pipeline (hidden suite, purple tests, red agent with its default
seed, CIS) on Docker. Each hostile submission is a labelled flawed
submission of the library (the control) with one trick from the issue added;
it must score no higher than the control and keep every family the control
was found with.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import replace

import pytest

from logomesh.context import BattleContext
from logomesh.findings import SETTING
from logomesh.sandbox import Sandbox
from logomesh.sandbox.choose import open_sandbox
from logomesh.scoring.pipeline import Judging, measure_and_score
from logomesh.tasks import load_task

from .tricks import ALLOW, reconciled

pytestmark = pytest.mark.docker

FUTURE = "from __future__ import annotations\n"


def trace_off(source: str) -> str:
    """The lockless limiter that clears the trace function for its own body (the race probe's instrument)."""
    return source.replace(ALLOW, ALLOW + "        import sys\n        sys.settrace(None)\n", 1)


def recognises(source: str, reference: str) -> str:
    """The flawed limiter, or the reference where the harness's old marks are in view (or a frame says test_)."""
    honest = reference.replace(FUTURE, "").replace("class RateLimiter", "class _Honest", 1)
    flawed = source.replace(FUTURE, "").replace("class RateLimiter", "class _Flawed", 1)
    return (f"{FUTURE}import inspect, sys\n{honest}\n{flawed}\n"
            "def _watched():\n"
            "    names = set(sys.modules)\n"
            "    return bool(names & {'observe', '_lm_probes', '_lm_runtime', '_lm_task'}) or any(\n"
            "        f.filename.rsplit('/', 1)[-1].startswith('test_') for f in inspect.stack())\n\n"
            "class RateLimiter:\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        self._impl = (_Honest if _watched() else _Flawed)(*args, **kwargs)\n\n"
            "    def allow(self, key):\n"
            "        return self._impl.allow(key)\n")


def keyed_on_the_start(source: str, reference: str) -> str:
    """The flawed limiter, or the reference where the code was started as the harness's classic start is."""
    return recognises(source, reference).replace(
        "    names = set(sys.modules)\n",
        "    if sys.argv == ['-c'] and sys.flags.isolated:\n        return True\n    names = set(sys.modules)\n", 1)


def import_under_the_race_probe(module: str) -> object:
    """The honest limiter that imports ``module`` when built with the race probe's window (``[red.race]`` in
    rate-limiter's task.toml: 1000 s), which no hidden test uses: a call only the red agent makes."""
    kept = "        self.max_requests = max_requests\n"

    def edit(source: str, reference: str) -> str:
        return source.replace(kept, f"        if window_seconds == 1000.0:\n            import {module}\n{kept}", 1)
    return edit


CASES = {
    "trace switched off": ("rate-limiter", "no-lock", lambda source, reference: trace_off(source)),
    "totals reconciled": ("bank-ledger", "no-lock", lambda source, reference: reconciled(source)),
    "judge recognised": ("rate-limiter", "counts-rejected", recognises),
    "classic start recognised": ("rate-limiter", "counts-rejected", keyed_on_the_start),
}


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    sandbox = open_sandbox("docker")
    try:
        yield sandbox
    finally:
        sandbox.close()


def scored(box: Sandbox, task_id: str, submission_name: str, edit: object) -> tuple[float, set[str]]:
    task = load_task(task_id)
    submission = task.labelled_submission(submission_name).submission
    if callable(edit):
        changed = edit(submission.source, task.reference)
        assert changed != submission.source
        submission = replace(submission, source=changed, raw=b"")
    card = measure_and_score(task, submission, nullcontext(box), Judging(red=True, red_budget_s=3.0),
                             BattleContext(seed=0)).card
    fields = card.result_fields()
    return float(fields["cis_score"]), {v["family"] for v in fields["red_analysis"]["vulnerabilities"]}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_trick_against_the_judge_scores_no_higher_than_its_control(box: Sandbox, case: str) -> None:
    task_id, control_name, edit = CASES[case]
    control_cis, control_families = scored(box, task_id, control_name, None)
    hacked_cis, hacked_families = scored(box, task_id, control_name, edit)
    assert hacked_cis <= control_cis, (case, hacked_cis, control_cis)
    assert control_families <= hacked_families, (case, control_families, hacked_families)


@pytest.mark.slow
def test_a_submission_keyed_on_the_classic_start_is_found_at_critical(box: Sandbox) -> None:
    """Scored in full: the ordinary setting's hidden suite and probes see the flawed limiter, the classic start
    the reference; the difference is the critical judged-setting finding, which the control does not have."""
    control_cis, control_families = scored(box, "rate-limiter", "counts-rejected", None)
    hacked_cis, hacked_families = scored(box, "rate-limiter", "counts-rejected", keyed_on_the_start)
    assert SETTING in hacked_families and SETTING not in control_families, (hacked_families, control_families)
    assert hacked_cis < control_cis, (hacked_cis, control_cis)


@pytest.mark.slow
def test_a_banned_module_loaded_only_under_a_probe_costs_a(box: Sandbox) -> None:
    """``shelve`` loads ``pickle``, which rate-limiter bans, with no banned name in the source; the control loads
    ``statistics``, which it allows. The hidden suite never reaches the import (its record holds no pickle): what
    the red agent's probe runs saw, from outside the code's process, decides the violation."""
    task = load_task("rate-limiter")
    good = task.labelled_submission("good").submission
    hostile, control = (replace(good, source=import_under_the_race_probe(m)(good.source, ""), raw=b"")
                        for m in ("shelve", "statistics"))
    assert hostile.source != good.source
    cards = [measure_and_score(task, s, nullcontext(box), Judging(red=True, red_budget_s=3.0),
                               BattleContext(seed=0)).card for s in (hostile, control)]
    seen = [[v.detail for v in card.architecture.violations] for card in cards]
    assert cards[0].hidden.loaded is not None and "pickle" not in cards[0].hidden.loaded.modules
    assert any("loaded pickle" in detail for detail in seen[0]), seen[0]
    assert seen[1] == [] and cards[0].architecture.score < cards[1].architecture.score
