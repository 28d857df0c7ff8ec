"""Code that rewrites, blinds or recognises the red agent's measurement keeps its flaw found; both backends.

Every hostile submission is a lockless submission of the library (its honest
control, whose race the probe finds) plus one trick a submission that read our
source would try: rewrite the task's race check or the fork server's trial
routine through ``sys.modules``, rewrite the builtins the old in-box check
summed with, the JSON encoder the old record went through or the threads the
answerer serves with, die whenever a trace function is set, switch the trace
off for its own body (directly or through ``ctypes``), reconcile the totals the
old check read, or behave only while the probe's files are in view. The race
scenario now runs in the driver, so what the code rewrites in its own process
reaches none of it: each must still show the race, or the schedule it lifted.
"""

from __future__ import annotations

import pytest
from tiers import sampled

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.red.problem import INTROSPECTION
from logomesh.sandbox import Sandbox
from logomesh.sandbox.choose import open_sandbox
from logomesh.tasks import load_task

from .tricks import ALLOW, RACE_TRIALS, race_violations, reconciled

AT_IMPORT = {
    "task check rewritten": "import sys\n_t = sys.modules.get('_lm_task')\nif _t: _t.race = lambda *a, **k: []\n",
    "trial routine rewritten": "import sys\n_r = sys.modules.get('_lm_runtime')\n"
                               "if _r: _r._child = lambda *a, **k: None\n",
    "builtins rewritten": "import builtins\nbuiltins.sum = lambda *a, **k: 10\nbuiltins.any = lambda *a, **k: False\n",
    "records rewritten": "import json\n_d = json.dumps\n"
                         "json.dumps = lambda o, *a, **k: _d({'final': {'status': 'ok', 'result': {'observed': "
                         "{'answers': [], 'errors': []}}}} if isinstance(o, dict) and 'final' in o else o, *a, **k)\n",
    "threads run one at a time": "import threading\n_s = threading.Thread.start\n"
                                 "def _serial(self):\n    _s(self)\n    self.join()\n"
                                 "threading.Thread.start = _serial\n",
}
SLOW_TRICKS = {"threads run one at a time"}  # ~50 s of serialised race trials: the full tier only
IN_METHOD = {
    "dies when traced": "import sys, os\n        if sys.gettrace() is not None: os._exit(0)",
    "trace off, then on": "import sys\n        _saved = sys.gettrace(); sys.settrace(None)",
    "trace off through ctypes": "_c = __import__('ct' + 'ypes')\n"
                                "        _c.pythonapi.PyEval_SetTrace(None, None)",
    "lock only beside probe files": "import os\n        if os.path.exists('_lm_runtime.py') or "
                                    "os.path.exists('_lm_probes.py'): return self._locked(key)",
}


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


def at_import(source: str, code: str) -> str:
    future = "from __future__ import annotations\n"
    return source.replace(future, future + code, 1) if future in source else code + source


@pytest.mark.parametrize("trick", sampled(sorted(AT_IMPORT), sorted(AT_IMPORT),
                                          keep={"records rewritten"}))
def test_rewriting_the_check_at_import_changes_nothing(box: Sandbox, trick: str) -> None:
    task = load_task("rate-limiter")
    plain = task.labelled_submission("no-lock").submission.source
    assert race_violations(box, task, plain).violations  # the control: the race is found
    trials = 4 if trick in SLOW_TRICKS else RACE_TRIALS  # serialised trials each wait out their timeout
    seen = race_violations(box, task, at_import(plain, AT_IMPORT[trick]), trials)
    assert seen.violations, (trick, seen.harness_errors)


def test_closing_every_descriptor_at_import_ends_the_run_as_the_codes_own_failure(box: Sandbox) -> None:
    """Code that closes what its process holds cuts only its own answers: every run says the code's process
    failed while importing, at once, rather than waiting out the probe's time."""
    task = load_task("rate-limiter")
    plain = task.labelled_submission("no-lock").submission.source
    seen = race_violations(box, task, at_import(plain, "import os\nos.closerange(1, 256)\n"), trials=8)
    assert not seen.violations
    assert seen.harness_errors and all("the code's process failed while importing" in e
                                       for e in seen.harness_errors), seen.harness_errors


@pytest.mark.parametrize("trick", sampled(sorted(IN_METHOD), sorted(IN_METHOD),
                                          keep={"dies when traced", "trace off through ctypes"}))
def test_blinding_or_recognising_the_race_probe_is_found(box: Sandbox, trick: str) -> None:
    task = load_task("rate-limiter")
    plain = task.labelled_submission("no-lock").submission.source
    body = plain.replace(ALLOW, ALLOW.replace("allow", "_locked"), 1)  # the same body, reachable as _locked
    sneaky = body.replace(ALLOW.replace("allow", "_locked"),
                          ALLOW + f"        {IN_METHOD[trick]}\n        return self._locked(key)\n\n"
                          + ALLOW.replace("allow", "_locked"), 1)
    assert sneaky != plain
    seen = race_violations(box, task, sneaky)
    assert seen.violations, (trick, seen.harness_errors)
    if trick.startswith("trace off"):  # lifting the schedule is itself a hit, whether or not it hid the race
        assert any("lifted the probe's schedule" in v for v in seen.violations), seen.violations


def test_reconciled_totals_do_not_hide_lost_updates(box: Sandbox) -> None:
    """A lockless bank that reports the last account as whatever keeps the total at 400 and nothing negative."""
    task = load_task("bank-ledger")
    plain = task.labelled_submission("no-lock").submission.source
    hits = race_violations(box, task, reconciled(plain)).violations
    assert any("transfers that went through" in h for h in hits), hits


@pytest.mark.docker
def test_the_agent_reports_a_look_at_the_judge_as_critical_and_keeps_the_race() -> None:
    task = load_task("rate-limiter")
    plain = task.labelled_submission("no-lock").submission.source
    sneaky = plain.replace(ALLOW, ALLOW + "        import sys\n        sys.settrace(None)\n", 1)
    with open_sandbox("docker") as sandbox:
        control = attack(task, plain, sandbox, BattleContext(seed=0), budget_s=3.0)
        report = attack(task, sneaky, sandbox, BattleContext(seed=0), budget_s=3.0)
    families = {f.family: f.severity for f in report.findings}
    assert families.get(INTROSPECTION) == "critical"
    assert {f.family for f in control.findings} <= set(families)
