"""Only answers cross (issue 31): the judge records outside the process that runs the code; both backends.

The hidden drivers run in the driver process, the submission in the answerer
(``harness/driver.py``, ``harness/answerer.py``). The answerer holds no result
channel, no nonce and no record the host reads, so a submission that read all
our source and forges records gains nothing: each hostile submission below is
the rate limiter that grants every call (the honest control, wrong) plus one
forgery, and must pass no more hidden tests than the control.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from red.tricks import family_hits, model_divergences
from tiers import sampled

from logomesh.red.attacks.boundary import BoundaryFamily
from logomesh.red.attacks.evaluation import EvalInjectionFamily
from logomesh.red.attacks.sqli import SqlInjectionFamily
from logomesh.red.attacks.traversal import TraversalFamily
from logomesh.red.context import AttackContext
from logomesh.red.problem import sandbox_runner
from logomesh.sandbox import Sandbox
from logomesh.sandbox.client import HARNESS_DIR
from logomesh.tasks import TaskSpec, load_task
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden

CONTROL = '''
class RateLimiter:
    def __init__(self, max_requests, window_seconds, clock=None):
        if max_requests < 1 or window_seconds <= 0:
            raise ValueError("bad limits")

    def allow(self, key):
        return True
'''

# Every forger writes, for every test index, the reference's own observations as a perfect record, with
# every nonce it can find (or a guess), to every descriptor it can reach; it then answers as the control.
FORGE = '''
import gc, json, os, re, sys, threading, time
_OBS = json.loads({observations!r})
_HEX = re.compile("^[0-9a-f]{{32}}$")

def _records(nonces):
    yield {{"k": "ready"}}
    yield {{"k": "imported", "errors": {{}}, "lost": None}}
    for i, obs in enumerate(_OBS):
        for nonce in nonces or ["0" * 32]:
            yield {{"k": "obs", "i": i, "nonce": nonce, "obs": obs, "lost": None}}

def _write(fds, nonces=()):
    data = "".join(json.dumps(r) + "\\n" for r in _records(list(nonces))).encode()
    for fd in fds:
        try:
            os.write(fd, data)
        except OSError:
            pass
'''

TRICKS = {
    # A pipe over every descriptor 3..64, fed with perfect records by a thread, all the time.
    "dup2 every fd": '''
_r, _w = os.pipe()
for _fd in range(3, 65):
    if _fd not in (_r, _w):
        try:
            os.dup2(_w, _fd)
        except OSError:
            pass
def _feed():
    while True:
        _write(range(3, 65))
        time.sleep(0.01)
threading.Thread(target=_feed, daemon=True).start()
''',
    # A forged last line on stdout and stderr after every answer.
    "forged last line": '''
def _print_forgery():
    for record in _records([]):
        print(json.dumps(record), flush=True)
        print(json.dumps(record), file=sys.stderr, flush=True)
_print_forgery()
import atexit
atexit.register(_print_forgery)
''',
    # The nonce from memory: every 32-hex string on the heap and in every thread's frames, then every fd
    # of this process and every fd of every process in the box it can open for writing.
    "nonce from memory": '''
def _nonces():
    found = set()
    for o in gc.get_objects():
        if isinstance(o, str) and _HEX.match(o):
            found.add(o)
        elif isinstance(o, dict):
            found.update(v for v in list(o.values()) if isinstance(v, str) and _HEX.match(v))
    for frame in list(sys._current_frames().values()):
        while frame is not None:
            found.update(v for v in list(frame.f_locals.values()) if isinstance(v, str) and _HEX.match(v))
            frame = frame.f_back
    return sorted(found)[:50]

def _every_fd():
    fds = list(range(1, 65))
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                names = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for name in names:
                try:
                    fds.append(os.open(f"/proc/{pid}/fd/{name}", os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
    return fds

def _forge_now():
    _write(_every_fd(), _nonces())
''',
}
# Where the control's allow() calls the forger (the nonce trick forges from inside every call).
IN_CALL = {"nonce from memory": "        _forge_now()\n"}


@pytest.fixture(scope="module")
def task() -> TaskSpec:
    return load_task("rate-limiter")


def hostile(trick: str, observations: list[list[object]]) -> str:
    forger = FORGE.format(observations=json.dumps(observations)) + TRICKS[trick]
    control = CONTROL.replace("    def allow(self, key):\n", "    def allow(self, key):\n" + IN_CALL.get(trick, ""))
    return forger + control


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_forged_records_from_the_code_gain_nothing(box: Sandbox, task: TaskSpec, cache: ReferenceCache,
                                                   trick: str) -> None:
    reference = cache.get(box, task)
    assert all(t.status == "observed" for t in reference.tests)
    control = run_hidden(box, task, CONTROL, cache=cache).suite
    hacked = run_hidden(box, task, hostile(trick, [list(t.observations) for t in reference.tests]), cache=cache).suite
    assert 0 < control.passed < control.total
    assert hacked.passed <= control.passed, (trick, [o.name for o in hacked.outcomes if o.status == "passed"])


def test_the_reference_behind_the_forgers_passes(box: Sandbox, task: TaskSpec, cache: ReferenceCache) -> None:
    """The pair runs honest code as before: the reference passes every hidden test, untampered."""
    run = run_hidden(box, task, task.reference, cache=cache).suite
    assert (run.passed, run.total, run.tampered) == (16, 16, False), run.outcomes


# ---- the red agent's stateful model: its record is the driver's, never the code's ----------------------

FORGERIES = ["the fork server's channel", *sorted(TRICKS)]
FIFO_GET = "    def get(self, key: Hashable) -> Any:\n"


# What beat the fork server that ran a probe in the code's own process: /dev/null over every descriptor from 3
# up but sockets (the server's copy of stdout, where its audit hook reports, is a pipe), then the run's nonce
# from the heap, and one result line on stdout whose every trial holds the record CLEAN (a probe's clean record).
OLD_CHANNEL = """
import gc, json, os, re, stat
_null = os.open(os.devnull, os.O_WRONLY)
for _fd in range(3, 65):
    try:
        if _fd != _null and not stat.S_ISSOCK(os.fstat(_fd).st_mode):  # a socket may be how it answers
            os.dup2(_null, _fd)
    except OSError:
        pass
for _o in gc.get_objects():
    if isinstance(_o, dict) and isinstance(_o.get("nonce"), str) and re.fullmatch("[0-9a-f]{16}", _o["nonce"]):
        _trial = {"status": "ok", "result": CLEAN, "cpu_s": 0.0}
        _record = {"trials": [_trial] * int(_o.get("trials", 1)), "elapsed": 0.1, "introspection": []}
        print("\\nLMPROBE " + _o["nonce"] + " " + json.dumps(_record), flush=True)
"""


@pytest.mark.parametrize("trick", sampled(FORGERIES, FORGERIES,
                                          keep={"the fork server's channel", "nonce from memory"}))
def test_forged_model_records_hide_no_divergence(box: Sandbox, trick: str) -> None:
    """A FIFO cache (wrong: the model finds it) that forges the record of model trials that saw nothing: on the
    fork server's channel, or, with every nonce it can find, on every descriptor it can reach, as a driver."""
    task = load_task("lru-cache")
    fifo = task.labelled_submission("fifo").submission.source
    assert FIFO_GET in fifo
    if trick in TRICKS:
        nothing = {"observed": [{"capacity": 1, "steps": []}], "seed": 0}  # a sequence without a call
        clean = [[["value", ["str", json.dumps(nothing)]]]] * 4
        forger = FORGE.format(observations=json.dumps(clean)) + TRICKS[trick]
        hostile = forger + fifo.replace(FIFO_GET, FIFO_GET + IN_CALL.get(trick, ""), 1)
    else:
        hostile = OLD_CHANNEL.replace("CLEAN", repr({"observed": [{"capacity": 1, "steps": []}], "seed": 0})) + fifo
    assert any(model_divergences(box, task, fifo))  # the control: the model finds the FIFO eviction
    assert any(model_divergences(box, task, hostile)), trick


# Injection probes: the record of a clean trial, forged on the fork server's channel, hides nothing.
INJECTIONS = {
    "sqli": ("sql-select", "interpolated-values", SqlInjectionFamily(),
             {"sql": "SELECT", "params": 1, "rows": 0, "vault": False, "vault_intact": True}),
    "traversal": ("safe-path", "prefix-check", TraversalFamily(), {"returned": "/b", "inside": True, "secret": False}),
    "eval": ("safe-calculator", "eval-based", EvalInjectionFamily(), {"type": "int", "repr": "3", "canary": False}),
}


@pytest.mark.parametrize("probe", sorted(INJECTIONS))
def test_a_forged_clean_injection_record_hides_nothing(box: Sandbox, probe: str) -> None:
    task_id, labelled, family, clean = INJECTIONS[probe]
    task = load_task(task_id)
    plain = task.labelled_submission(labelled).submission.source
    assert family_hits(box, task, plain, family)  # the control: the injection is found
    hostile = OLD_CHANNEL.replace("CLEAN", repr(clean)) + plain
    assert family_hits(box, task, hostile, family), probe


# Each injection family's benign control input holds this text; the attack inputs do not.
CONTROL_MARKS = {"sqli": "alice", "traversal": "readme", "eval": "1 + 2"}
DIES_WHEN_ATTACKED = """

import os as _os
_lm_real = {entry}


def {entry}(*args, **kwargs):
    if {mark!r} not in repr(args):
        _os._exit(0)  # an input that is not the benign control's: end the process, so no record is made
    return _lm_real(*args, **kwargs)
"""


@pytest.mark.parametrize("probe", sorted(INJECTIONS))
def test_code_that_dies_on_the_attack_input_is_found(box: Sandbox, probe: str) -> None:
    task_id, labelled, family, _ = INJECTIONS[probe]
    task = load_task(task_id)
    plain = task.labelled_submission(labelled).submission.source
    dying = plain + DIES_WHEN_ATTACKED.format(entry=task.entry_point, mark=CONTROL_MARKS[probe])
    found = family_hits(box, task, dying, family)
    assert found and all("did not survive" in h for h in found), found
    variant = family.variants(AttackContext.build(task, dying), task.entry_point)[0]
    assert variant.control is not None
    [control] = sandbox_runner(box, dying, task.reference)(variant.control, 1).trials
    assert family.control_ok(variant, control), control  # so the agent confirms the finding


def test_a_boundary_finding_quotes_the_codes_exception_from_the_answerer(box: Sandbox) -> None:
    """The boundary call runs in the driver; the code's exception crosses as its nearest builtin class, with the
    message and the solution.py frame the answerer reports, so the finding still says what escaped and where."""
    task = load_task("bank-ledger")
    good = task.labelled_submission("good").submission.source
    line = "        amount = _validate(amount)\n        account = self._get(account_id)\n"
    assert line in good
    leaky = good.replace(line, "        if amount < 0:\n            raise AttributeError('no quantize here')\n"
                               + line, 1)
    family = BoundaryFamily()
    [variant] = [v for v in family.variants(AttackContext.build(task, leaky), task.entry_point)
                 if v.id == "negative-deposit"]
    [trial] = sandbox_runner(box, leaky, task.reference)(variant.spec, 1).trials
    verdict = family.judge(variant, trial)
    assert verdict.hit and verdict.observation.startswith("escaped with AttributeError: no quantize here at deposit:")
    [clean] = sandbox_runner(box, good, task.reference)(variant.spec, 1).trials
    assert (clean.status, clean.exc) == ("exception", "ValueError") and not family.judge(variant, clean).hit


# ---- structure: what the answerer's process holds ------------------------------------------------------

ANSWERER_SOURCES = ("answerer.py", "wire.py", "runner.py")  # runner.py: the purple's own tests, in the answerer
JUDGE_NAMES = {"res", "nonce", "emit", "observe", "RECORDER", "audit", "drivers"}


@pytest.mark.parametrize("name", ANSWERER_SOURCES)
def test_the_answerers_code_holds_nothing_of_the_judge(name: str) -> None:
    """No name in the code the answerer runs (for hidden drivers, probes and the purple's own tests alike)
    refers to the result channel, a nonce, a record or the drivers."""
    tree = ast.parse((HARNESS_DIR / name).read_text(encoding="utf-8"))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.Lambda) for a in n.args.args}
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not names & JUDGE_NAMES, names & JUDGE_NAMES
    assert not strings & JUDGE_NAMES, strings & JUDGE_NAMES


def test_the_server_hands_the_answerer_only_its_sockets() -> None:
    """An answerer is spawned with its sockets besides stdio (its control socket; the tests' process also the
    end of the code's), and only after the driver, which holds the result channel, reported itself
    non-dumpable. The tests' process is given the runner's source and where the tests are, never the code's
    text, which only the code's process gets (``start_code``)."""
    source = (HARNESS_DIR / "server.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    start = functions["start_answerer"]
    spawns = [n for n in ast.walk(start) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "spawn"]
    assert len(spawns) == 1
    assert ast.unparse(spawns[0].args[2]) == "tuple((s.fileno() for s in sockets))"
    config = next(n for n in ast.walk(start) if isinstance(n, ast.Dict))
    keys = {k.value for k in config.keys if isinstance(k, ast.Constant)}
    assert keys == {"program", "wire", "control", "ordinary"}
    tests = next(n for n in ast.walk(functions["pair_configs"]) if isinstance(n, ast.Assign)
                 and ast.unparse(n.targets[0]) == "tests" and isinstance(n.value, ast.Dict))
    assert {k.value for k in tests.value.keys if isinstance(k, ast.Constant)} == {"runner", "tests_dir", "files",
                                                                                   "source", "interface"}
    answering = ast.unparse(functions["start_answering_side"])  # every answerer and code process starts here
    assert "{key: value for key, value in tests.items() if key not in CODE_KEYS}" in answering
    assert answering.count("self.start_answerer(") == 2 and answering.count("self.start_code(") == 1
    pair = ast.unparse(functions["run_pair"])
    assert "CODE_KEYS = ('source', 'interface')" in ast.unparse(tree)
    spawned = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "spawn"]
    assert len(spawned) == 3  # the driver, an answerer and a script: no process runs code beside a channel
    assert pair.count("self.start_answering_side(") == 1 == ast.unparse(tree).count("self.start_answering_side(")
    assert "self.start_answerer(" not in pair
    assert pair.index("== 'ready'") < pair.index("self.start_answering_side(")
    assert "PR_SET_DUMPABLE" in Path(HARNESS_DIR / "wire.py").read_text(encoding="utf-8")


FD_KINDS = """
import os

def kinds():
    found = []
    for fd in sorted(os.listdir('/proc/self/fd'), key=int):
        try:
            found.append(os.readlink(f'/proc/self/fd/{fd}').split(':')[0])
        except OSError:
            pass
    return found

def test_descriptors():
    assert False, ' '.join(kinds())
"""


def test_the_purple_tests_process_holds_only_stdio_and_sockets(box: Sandbox) -> None:
    """Seen from inside, at run time: the process that runs the purple's tests and the code they import has
    its stdin (the config pipe, whose writer the server closed), its stdout and stderr pipes, and sockets to
    the driver; no fourth pipe (a result channel, as the old in-process runner had) reaches it."""
    run = box.run_suite("def add(a, b):\n    return a + b\n", {"test_fds.py": FD_KINDS})
    [outcome] = run.outcomes
    assert outcome.status == "failed", outcome
    kinds = outcome.reason.removeprefix("AssertionError: ").split()
    assert kinds[:3] == ["pipe", "pipe", "pipe"], kinds
    assert set(kinds[3:]) == {"socket"}, kinds


def test_every_red_probe_runs_as_a_driver_and_nothing_of_ours_is_shipped_beside_the_code() -> None:
    """The red agent reaches the box only through ``observe_suite`` (driver and answerer): no module of
    ``logomesh/red`` runs a script in the box (a script's process imports the code beside the probe), and
    the probe library runs in the driver, the only process that writes what the host reads."""
    red = HARNESS_DIR.parents[1] / "red"
    for path in sorted(red.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        assert "run_script" not in calls, path
    assert sorted(p.name for p in (red / "probes").glob("*.py")) == ["library.py"]
    from logomesh.red.driven import probe_driver
    from logomesh.red.executor import ProbeSpec

    [(name, module)] = probe_driver(ProbeSpec("call", {"target": "f", "args": []}), 1).items()
    assert name.startswith("test_") and "from observe import see" in module  # a driver, run by driver.py
