"""A submission that reads the probes' source and switches their measurement off is still found out.

The race probe's calls come from the driver's threads, and the answerer's
thread serving each one yields at seeded opcodes through a trace function.
Code can turn the trace function off from inside its own methods. Each race
hack is run beside the same code without it; whether or not it still blinds
the perturbation, the probe must report what was done as a hit, so the
attack still ends in a confirmed finding of the same family. A longer switch
interval blinds nothing: the yields are sleeps, which let another thread run
whatever the interval. The growth probe reads retained memory from the
kernel, outside the code's process: restarting tracemalloc there changes
nothing (``test_measured_outside.py``, both backends).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.red.attacks.growth import GrowthFamily
from logomesh.red.context import AttackContext
from logomesh.red.problem import sandbox_runner
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.tasks import load_task

from .tricks import ALLOW, RaceSeen, race_violations

pytestmark = pytest.mark.docker

PUT = "    def put(self, key: Hashable, value: Any) -> None:\n"


def hacked(source: str, method_line: str, hack: str) -> str:
    """``source`` with ``hack`` as the first statement of the method that ``method_line`` opens."""
    assert method_line in source
    return source.replace(method_line, method_line + f"        {hack}\n", 1)


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


@pytest.mark.parametrize(("hack", "lifts"), [
    ("import sys; sys.settrace(None)", True),
    ("import sys; sys.settrace(None); sys.setswitchinterval(5.0)", True),
    ("import sys; sys.setswitchinterval(5.0)", False),
])
@pytest.mark.slow
def test_lifting_the_race_perturbation_is_itself_reported(box: Sandbox, hack: str, lifts: bool) -> None:
    task = load_task("rate-limiter")
    plain = task.labelled_submission("no-lock").submission.source
    sneaky = hacked(plain, ALLOW, hack)

    def seen(found: RaceSeen) -> tuple[list[str], list[str]]:
        return ([v for v in found.violations if "cannot be measured" not in v],
                [v for v in found.violations if "cannot be measured" in v] + found.introspection)

    real, tamper = seen(race_violations(box, task, plain))
    assert real and not tamper  # the lockless limiter breaks its invariant under the perturbation
    # Whether lifting the schedule still hides the race varies: either way the probe says what was done, and
    # that alone is a hit. A switch interval is no setting of the judge's: the race is found as before.
    real, tamper = seen(race_violations(box, task, sneaky))
    if lifts:
        assert tamper and all("sys.settrace" in v for v in tamper)
    else:
        assert real and not tamper
    report = attack(task, sneaky, box, BattleContext(seed=0), budget_s=3.0)
    assert "race" in {f.family for f in report.findings}


@pytest.mark.slow
def test_resetting_memory_tracing_changes_nothing(box: Sandbox) -> None:
    task = load_task("lru-cache")
    plain = task.labelled_submission("lazy-queue").submission.source
    sneaky = hacked(plain, PUT, "import tracemalloc; tracemalloc.stop(); tracemalloc.start()")
    family = GrowthFamily()
    [variant] = family.variants(AttackContext.build(task, plain), task.entry_point)
    run = sandbox_runner(box, plain, task.reference)
    plain_trial = run(variant.spec, 0).trials[0]
    sneaky_trial = sandbox_runner(box, sneaky, task.reference)(variant.spec, 0).trials[0]
    assert family.judge(variant, plain_trial).hit and "tampered" not in plain_trial.result
    assert family.judge(variant, sneaky_trial).hit and "tampered" not in sneaky_trial.result
    report = attack(task, sneaky, box, BattleContext(seed=0), budget_s=3.0)
    assert "resource-growth" in {f.family for f in report.findings}
