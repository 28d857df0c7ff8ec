"""The judge's driver survives the code beside it, or the code pays; both backends.

The driver runs under the code's uid (one uid is all a user namespace gives
bubblewrap), non-dumpable, so the code can neither trace nor read it; but
the kernel still lets the code kill or stop it, lower its limits
(``prlimit``), its priority or its CPUs, and send it any signal. Each is
tried here on the rate limiter's reference, which passes every hidden test
by itself (the control): a catchable signal changes nothing (the driver and
the server ignore them), and the rest is seen from the server, outside both,
as tampering, which fails every hidden test and makes a red probe's run a
critical finding. Without that, code that ends the judge's process whenever
it recognises a probe (a large input, a burst of calls) would leave a probe
with no evidence, and so no finding.
"""

from __future__ import annotations

import pytest
from tiers import sampled

from logomesh.red.attacks.complexity import ComplexityFamily
from logomesh.red.context import AttackContext
from logomesh.red.problem import Leaf, RedProblem, sandbox_runner
from logomesh.sandbox import Sandbox
from logomesh.tasks import TaskSpec, load_task
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden

# The judge's processes as the code finds them: every process in /proc but its own and, for the driver alone,
# its parent and PID 1 (the server). Appended to a solution whose method calls ``_act()``: it acts once, after
# the import, so the driver is running its tests.
FIND = '''
import os, resource, signal

def _others():
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in {ONLY}]

def _act():
    global _done
    if _done:
        return
    _done = True
{act}
_done = False
'''
ACTS = {
    "kill": "    for pid in _others():\n        try:\n            os.kill(pid, signal.SIGKILL)\n"
            "        except OSError:\n            pass\n",
    "stop": "    for pid in _others():\n        try:\n            os.kill(pid, signal.SIGSTOP)\n"
            "        except OSError:\n            pass\n",
    "prlimit": "    for pid in _others():\n        try:\n"
               "            resource.prlimit(pid, resource.RLIMIT_NOFILE, (8, 8))\n"
               "        except (OSError, ValueError):\n            pass\n",
    "nice": "    for pid in _others():\n        try:\n            os.setpriority(os.PRIO_PROCESS, pid, 19)\n"
            "        except OSError:\n            pass\n",
}
WHAT = {"kill": "killed the judge's driver", "stop": "stopped the judge's driver",
        "prlimit": "changed the judge's driver's limits", "nice": "changed the judge's driver's limits"}
# Every catchable signal the code might hope ends or confuses a judge's process, to every process it sees.
SIGNALS = ("    for pid in _others():\n        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,"
           " signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGXCPU, signal.SIGPIPE, signal.SIGQUIT):\n"
           "            try:\n                os.kill(pid, sig)\n            except OSError:\n                pass\n")
ALLOW = "    def allow(self, key"
DRIVER = "{os.getpid(), os.getppid(), 1}"  # whom _others() leaves out: the driver alone is acted on
EVERYONE = "{os.getpid()}"  # the server too


@pytest.fixture(scope="module")
def task() -> TaskSpec:
    return load_task("rate-limiter")


def acting(task: TaskSpec, act: str, only: str = DRIVER) -> str:
    """The reference, acting on the judge's processes on its first ``allow``."""
    reference = task.reference
    head, sep, tail = reference.partition(ALLOW)
    assert sep, "the reference has an allow method"
    line_end = tail.index(":\n") + 2
    return head + sep + tail[:line_end] + "        _act()\n" + tail[line_end:] + FIND.format(act=act, ONLY=only)


def test_the_control_passes_untampered(box: Sandbox, task: TaskSpec, cache: ReferenceCache) -> None:
    run = run_hidden(box, task, task.reference, cache=cache).suite
    assert (run.passed, run.tampered) == (run.total, False), run.outcomes


@pytest.mark.parametrize("act", sampled(sorted(ACTS), sorted(ACTS), keep={"kill", "prlimit", "nice"}))
def test_what_the_code_does_to_the_driver_fails_the_suite(box: Sandbox, task: TaskSpec, cache: ReferenceCache,
                                                           act: str) -> None:
    run = run_hidden(box, task, acting(task, ACTS[act]), cache=cache).suite
    assert run.tampered and any(WHAT[act] in r for r in run.tamper_reasons), (run.tamper_reasons, run.outcomes)
    assert run.passed == 0, [o.name for o in run.outcomes if o.status == "passed"]


def test_signals_to_the_judges_processes_change_nothing(box: Sandbox, task: TaskSpec, cache: ReferenceCache) -> None:
    """SIGINT to the server (PID 1, whose Python handler would let it in), SIGTERM and the rest to it and the
    driver: every hidden test still passes, nothing is reported, and the box serves the next run."""
    run = run_hidden(box, task, acting(task, SIGNALS, EVERYONE), cache=cache).suite
    assert (run.passed, run.tampered) == (run.total, False), (run.tamper_reasons, run.outcomes)
    again = run_hidden(box, task, task.reference, cache=cache).suite
    assert again.passed == again.total


@pytest.mark.slow
def test_a_probe_whose_driver_the_code_kills_is_a_finding(box: Sandbox) -> None:
    """The email validator's good solution, which kills every other process when it is given an address of a
    length no hidden test uses (one of the timing probe's): before this, a probe left without evidence had no
    finding. Now the probe's run names what the code did, which the agent reports as a critical finding."""
    task = load_task("email-validator")
    good = task.labelled_submission("good").submission.source
    entry = task.entry_point
    hostile = (good + FIND.format(act=ACTS["kill"], ONLY=DRIVER)
               + f"_plain = {entry}\n\ndef {entry}(s, *rest):\n"
               + "    if isinstance(s, str) and 19000 < len(s) < 22000:\n        _act()\n    return _plain(s, *rest)\n")
    assert run_hidden(box, task, hostile).suite.passed == run_hidden(box, task, good).suite.passed
    for source, killed in ((good, False), (hostile, True)):
        variants = ComplexityFamily().variants(AttackContext.build(task, source), entry)
        runner = sandbox_runner(box, source, task.reference)
        runs = [runner(v.spec, 0) for v in variants]
        seen = [r for run in runs for r in run.introspection]
        assert any("killed the judge's driver" in r for r in seen) is killed, (killed, seen)
        if killed:
            leaf = Leaf(entry, ComplexityFamily(), variants[0])
            hit = [RedProblem.judge(leaf, run, t) for run in runs for t in run.trials if run.introspection]
            assert hit and all(v.hit and "killed the judge's driver" in v.observation for v in hit), hit


@pytest.mark.docker
@pytest.mark.parametrize("act", ["prlimit", "nice"])
def test_a_server_whose_limits_the_code_lowered_judges_nothing_more(act: str) -> None:
    """The server cannot raise its hard limits again: the run that lowered them and every later one in that box
    are tampered; a fresh box judges the reference as before. Docker alone: PID 1 on either backend."""
    from logomesh.sandbox.choose import open_sandbox

    task = load_task("rate-limiter")
    fresh = open_sandbox("docker")
    try:
        hostile = run_hidden(fresh, task, acting(task, ACTS[act], EVERYONE), cache=ReferenceCache(None)).suite
        later = run_hidden(fresh, task, task.reference, cache=ReferenceCache(None)).suite
    finally:
        fresh.close()
    assert any("changed the judge's server's limits" in r for r in hostile.tamper_reasons), hostile.tamper_reasons
    assert hostile.passed == 0 and later.passed == 0 and later.tampered, later.outcomes
