"""A submission that forges the probe server's result line is found out, on both backends, and never crashes us.

The code reads the line's nonce from its own memory (``/proc/self/mem`` holds the probe script's JSON; no
audited event is raised) and prints a result line of its own: after the real one (``atexit``), or instead of
it (then ends the process). Deeply nested, huge, not UTF-8, of the wrong types or with no trials, each is a
failed observation: a look at the judge (a hit of the probe's family and a critical finding), where the same
code without the forgery, the honest control, gives a clean record. ``logomesh score`` on the forging
submission ends normally, with that finding, where the honest one has none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.red.executor import MALFORMED, ProbeRun, ProbeSpec, run_probe
from logomesh.sandbox import Sandbox
from logomesh.tasks import load_task

ROOT = Path(__file__).resolve().parents[2]
SPEC = ProbeSpec("sqli", {"target": "build_select", "args": ["items", [], {"name": "zz' OR '1'='1"}]})
SEED = 20261127
# How code that read our source finds the nonce of the probe server it was imported into, without a look
# the audit hook reports: the probe script's JSON is still in the process's memory.
FIND_NONCE = '''import atexit as _lm_ax, os as _lm_os, re as _lm_re


def _lm_nonce():
    pattern = _lm_re.compile(rb'"nonce": "([0-9a-f]{16})"')
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for row in maps:
            span, perms = row.split()[:2]
            low, high = (int(x, 16) for x in span.split("-"))
            if not perms.startswith("rw") or high - low > 64 << 20:
                continue
            try:
                mem.seek(low)
                found = pattern.search(mem.read(high - low))
            except (OSError, ValueError, OverflowError):
                continue
            if found:
                return found.group(1)
    return None


_lm_n = _lm_nonce()


def _lm_forge(body):
    _lm_os.write(1, b"\\nLMPROBE " + _lm_n + b" " + body + b"\\n")


'''
DEEP = 'b"[" * 100000'
FORGERIES = {  # name -> what the code does with the nonce, once imported into a probe server
    "deep line after the real one": f"_lm_ax.register(lambda: _lm_forge({DEEP}))",
    "deep line instead of the real one": f"_lm_forge({DEEP}); _lm_os._exit(0)",
    "huge line": "_lm_forge(b'{\"trials\": [], \"pad\": \"' + b'x' * (4 << 20) + b'\"}'); _lm_os._exit(0)",
    "not UTF-8": "_lm_forge(b'{\"trials\": \\xff\\xfe, \"elapsed\": 0.0}'); _lm_os._exit(0)",
    "wrong types": "_lm_forge(b'{\"trials\": [{\"status\": \"ok\", \"result\": [], \"cpu_s\": \"0\"}], "
                   "\"elapsed\": \"0\", \"introspection\": []}'); _lm_os._exit(0)",
    "no trials": "_lm_forge(b'{\"trials\": [], \"elapsed\": 0.0, \"introspection\": []}'); _lm_os._exit(0)",
}


def forging(source: str, forgery: str) -> str:
    """``source`` that, in a probe server (where it finds a nonce), forges its result line as ``forgery`` says."""
    return f"{FIND_NONCE}if _lm_n:\n    {forgery}\n\n{source}"


def spliced() -> str:
    """The library's SQL builder that splices values into the text: the sqli probe finds it."""
    return load_task("sql-select").labelled_submission("interpolated-values").submission.source


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


def probe(box: Sandbox, source: str) -> ProbeRun:
    return run_probe(box, source, SPEC, SEED)


def test_the_honest_control_gives_a_clean_record(box: Sandbox) -> None:
    run = probe(box, spliced())
    assert not run.harness_error and not run.introspection
    assert [t.status for t in run.trials] == ["ok"] and run.trials[0].result["rows"] == 3  # the injection works


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_result_line_is_a_look_at_the_judge(box: Sandbox, forgery: str) -> None:
    run = probe(box, forging(spliced(), FORGERIES[forgery]))
    assert not run.harness_error, run.harness_error
    assert [t.status for t in run.trials] == [MALFORMED]
    assert run.introspection and run.introspection[0].startswith("forged the probe server's result"), run


def test_an_unfinished_line_cannot_hide_the_result(box: Sandbox) -> None:
    """Text the code leaves on stdout without a newline once glued itself to the result line, which was then
    not found: a crashed trial, a miss for the families that need no survival. The record starts a line."""
    run = probe(box, "import os\nos.write(1, b'no newline here')\n" + spliced())
    assert not run.introspection and [t.status for t in run.trials] == ["ok"]
    assert run.trials[0].result["rows"] == 3


@pytest.mark.docker
def test_score_of_a_forging_submission_ends_with_a_finding_not_a_traceback(tmp_path: Path) -> None:
    # Only the race probe still runs in a probe server (the others are drivers, with no line to forge): the
    # lockless rate limiter's race is played first.
    task = load_task("rate-limiter")
    good = task.labelled_submission("no-lock").submission
    results = {}
    for name, source in (("honest", good.source), ("forging", forging(good.source, FORGERIES[
            "deep line after the real one"]))):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"sourceCode": source, "testCode": good.tests, "rationale": good.rationale}))
        done = subprocess.run(
            [sys.executable, "-m", "logomesh", "score", "--task", "rate-limiter", "--submission", str(path),
             "--sandbox", "docker", "--red-budget", "2", "--json", "--seed", "0"],
            cwd=ROOT, capture_output=True, timeout=600, env={**os.environ, "LOGOMESH_HOME": str(tmp_path / "home")})
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-600:]
        results[name] = json.loads(done.stdout)["result"]
    families = {name: [v["family"] for v in result["red_analysis"]["vulnerabilities"]]
                for name, result in results.items()}
    assert "judge-introspection" not in families["honest"]
    assert "judge-introspection" in families["forging"], families
    assert results["forging"]["cis_score"] < results["honest"]["cis_score"]
