"""The host side of the harness protocol, against a fake box (the real ones are in the backend tests)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from logomesh.sandbox import client as client_module
from logomesh.sandbox.client import HarnessClient, observed_from_result, script_from_result, suite_from_result

from .suites import ADD_NAMES, ADD_TESTS, GOOD_ADD


class SilentBox:
    """Accepts requests and never answers: what a wedged box looks like from the host."""

    def __init__(self) -> None:
        self.sent: list[dict[str, object]] = []
        self.killed = 0

    def send(self, data: bytes) -> None:
        self.sent.append(json.loads(data))

    def kill(self) -> None:
        self.killed += 1


def test_host_wall_clock_kills_a_box_that_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "HOST_GRACE_S", 0.2)
    box = SilentBox()
    harness = HarnessClient(box.send, box.kill)
    run = harness.run_suite(GOOD_ADD, ADD_TESTS, timeout_s=0.1)
    assert box.killed == 1
    assert run.passed == 0 and run.total == 4
    assert run.error is not None and "did not answer" in run.error
    assert box.sent[0]["op"] == "suite" and box.sent[0]["names"] == list(ADD_NAMES)
    again = harness.run_script({}, "print(1)")  # a broken box refuses further work at once
    assert again.timed_out and "did not answer" in again.stderr and len(box.sent) == 1


def test_a_dead_harness_fails_the_run_with_its_reason() -> None:
    box = SilentBox()
    harness = HarnessClient(box.send, box.kill)
    threading.Timer(0.05, harness.feed_eof).start()
    run = harness.run_suite(GOOD_ADD, ADD_TESTS, timeout_s=5)
    assert all(o.status == "crashed" for o in run.outcomes)
    assert run.error is not None and "harness died" in run.error


def test_output_events_stream_and_foreign_ids_are_ignored() -> None:
    seen: list[tuple[str, str, str]] = []
    box = SilentBox()
    harness = HarnessClient(box.send, box.kill)

    def answer() -> None:
        run_id = box.sent[0]["id"]
        for event in (
            {"ev": "out", "id": 999, "origin": "x", "stream": "stdout", "text": "stale"},
            {"ev": "out", "id": run_id, "origin": "test_add.TestAdd.test_zero", "stream": "stdout", "text": "hi\n"},
            {"ev": "done", "id": run_id, "result": {"exit_code": 0, "stdout": "hi\n", "duration_s": 0.01}},
        ):
            harness.feed_line(json.dumps(event).encode())

    threading.Timer(0.05, answer).start()
    result = harness._request({"op": "script"}, 5.0, lambda *item: seen.append(item))
    assert seen == [("test_add.TestAdd.test_zero", "stdout", "hi\n")]
    assert result["stdout"] == "hi\n"


def server_result(outcomes: list[dict[str, Any]], tamper: list[str] | None = None) -> dict[str, Any]:
    """A suite's result as the harness server writes it."""
    return {"outcomes": outcomes, "tampered": bool(tamper), "tamper": tamper or [], "error": None, "stdout": "",
            "stderr": "", "truncated": False, "duration_s": 0.5, "restarts": 1}


def test_results_only_count_names_the_host_discovered() -> None:
    names = list(ADD_NAMES)
    result = server_result([
        {"name": names[0], "status": "passed", "reason": "", "duration_s": 0.1},
        {"name": "test_add.TestAdd.test_invented", "status": "passed", "reason": "", "duration_s": 0.1},
        {"name": names[1], "status": "bogus", "reason": "", "duration_s": 0.1},
    ])
    run = suite_from_result(names, result)
    assert [o.status for o in run.outcomes] == ["passed", "error", "error", "error"]
    assert run.outcomes[2].reason == "no verdict from the harness"
    assert (run.passed, run.failed, run.total) == (1, 3, 4)


def test_any_tampering_turns_every_pass_into_a_failure() -> None:
    names = list(ADD_NAMES)
    result = server_result([{"name": n, "status": "passed", "reason": "", "duration_s": 0.1} for n in names],
                           ["TestCase.run was replaced"])
    run = suite_from_result(names, result)
    assert run.tampered and run.passed == 0
    assert all(o.reason == "tampered: TestCase.run was replaced" for o in run.outcomes)


def test_unparseable_tests_are_a_suite_error_without_a_run() -> None:
    box = SilentBox()
    harness = HarnessClient(box.send, box.kill)
    run = harness.run_suite(GOOD_ADD, {"test_bad.py": "class (:\n"})
    assert run.total == 0 and run.error is not None and "does not parse" in run.error
    assert box.sent == []
    empty = harness.run_suite(GOOD_ADD, {"test_none.py": "x = 1\n"})
    assert empty.error is not None and empty.error.startswith("no tests found in the test files")


def test_a_dying_harness_says_what_it_printed_last() -> None:
    box = SilentBox()
    harness = HarnessClient(box.send, box.kill)
    harness.feed_stderr(b"Traceback (most recent call last):\n  File ...\nValueError: boom\n")
    threading.Timer(0.05, harness.feed_eof).start()
    run = harness.run_suite(GOOD_ADD, ADD_TESTS, timeout_s=5)
    assert run.error is not None and run.error.endswith("harness died (killed by a limit or by the submission): "
                                                        "ValueError: boom")


def test_bwrap_that_cannot_start_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from logomesh.sandbox import SandboxUnavailable
    from logomesh.sandbox.bwrap import BwrapSandbox

    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    with pytest.raises(SandboxUnavailable) as info:
        BwrapSandbox()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("bubblewrap: the sandbox harness exited at start")
    assert "No permissions to create new namespace" in message


# -- what the host reads back is bounded, and malformed is a failure, never a pass or a traceback ------------
@pytest.mark.parametrize("line", [b"[" * 100_000 + b"]" * 100_000, b'{"ev": "done", "id": 1, "result": {"a": \xff}}',
                                  b"\xff\xfe", b"[1, 2]", b'{"ev": ' * 50_000, b"x" * 1000])
def test_a_line_that_is_not_a_bounded_object_is_ignored(line: bytes) -> None:
    box = SilentBox()
    harness = HarnessClient(box.send, box.kill)
    harness.feed_line(line)
    harness.feed_eof()
    assert harness._next_event(float("inf")) is client_module._EOF  # nothing queued before the end


def passing(names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, "status": "passed", "reason": "", "duration_s": 0.1} for n in names]


@pytest.mark.parametrize("change", [
    {"tamper": None}, {"tamper": "x"}, {"tamper": 3}, {"outcomes": None}, {"outcomes": [1]}, {"stdout": 5},
    {"duration_s": "1"}, {"error": 7},
])
def test_a_malformed_suite_result_fails_every_test(change: dict[str, Any]) -> None:
    names = list(ADD_NAMES)
    result = {**server_result(passing(names)), **change}
    if change.get("tamper") is None and "tamper" in change:
        del result["tamper"]  # missing: never "no tampering"
    run = suite_from_result(names, result)
    assert run.passed == 0 and run.total == len(names)
    assert run.error is not None and "malformed" in run.error
    observed = observed_from_result(names, {**result, "outcomes": result["outcomes"]})
    assert all(t.status == "error" for t in observed.tests) and observed.error is not None


@pytest.mark.parametrize("outcome", [
    {"status": "passed", "reason": "", "duration_s": "0.1"}, {"status": ["passed"], "reason": "", "duration_s": 0.1},
    {"status": "passed", "reason": 5, "duration_s": 0.1}, {"status": "passed", "reason": ""},
])
def test_a_malformed_outcome_is_an_error_not_a_pass(outcome: dict[str, Any]) -> None:
    names = list(ADD_NAMES)
    run = suite_from_result(names, server_result([{**outcome, "name": names[0]}, *passing(names[1:])]))
    assert run.outcomes[0].status == "error" and "malformed" in run.outcomes[0].reason
    assert [o.status for o in run.outcomes[1:]] == ["passed"] * (len(names) - 1)


@pytest.mark.parametrize("obs", [None, "text", {"a": 1}, [["str", "x" * (1 << 20)]]])
def test_observations_that_are_not_a_bounded_list_are_an_error(obs: Any) -> None:
    names = list(ADD_NAMES)
    fine = {"name": names[1], "status": "observed", "reason": "", "duration_s": 0.1, "obs": [["int", 1]]}
    bad = {"name": names[0], "status": "observed", "reason": "", "duration_s": 0.1, "obs": obs}
    suite = observed_from_result(names, server_result([bad, fine]))
    assert suite.tests[0].status == "error" and suite.tests[0].observations == ()
    assert suite.tests[1].status == "observed" and suite.tests[1].observations == (["int", 1],)


def test_a_script_result_with_wrong_types_breaks_the_run_instead_of_the_host() -> None:
    from logomesh.sandbox.base import SandboxBroken

    good = {"exit_code": 0, "signal": None, "stdout": "hi", "stderr": "", "timed_out": False, "truncated": False,
            "duration_s": 0.1}
    assert script_from_result(good).stdout == "hi"
    for change in ({"duration_s": "fast"}, {"timed_out": "no"}, {"exit_code": "0"}, {"stdout": None}):
        with pytest.raises(SandboxBroken, match="malformed"):
            script_from_result({**good, **change})


def test_the_box_server_takes_a_malformed_tamper_list_for_tampering() -> None:
    """Inside the box the harness server reads the runners' records (stdlib only): a tamper list that is not a
    list of strings was written by the code, and is never read as "no tampering"."""
    from logomesh.sandbox.harness import server

    assert server.tamper_in({"tamper": []}) == [] and server.tamper_in({"tamper": ["x"]}) == ["x"]
    for bad in ({}, {"tamper": None}, {"tamper": ""}, {"tamper": "x"}, {"tamper": 5}, {"tamper": [1]},
                {"tamper": {"a": "b"}}):
        assert server.tamper_in(bad) == ["malformed tamper list in a result record"], bad
    assert server.parse_record(b"[" * 100_000) is None and server.parse_record(b"\xff") is None


def test_the_box_reads_proc_stat_past_a_process_name_that_is_not_text() -> None:
    """A process names itself (``/proc/self/comm``): spaces, parentheses, bytes that are not text. The server's
    and the driver's ``/proc/<pid>/stat`` readers (stdlib only, in the box) still read its state, parent and CPU."""
    import subprocess
    import sys

    from logomesh.sandbox.harness import observe, server

    rename = "import sys\nopen('/proc/self/comm', 'wb').write(b'\\xff) 9 (x')\nprint(flush=True)\nsys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", rename], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"\n"
        with open(f"/proc/{child.pid}/stat", "rb") as handle:
            assert b"(\xff) 9 (x)" in handle.read()
        for read in (observe.stat_fields, server.stat_fields):
            fields = read(child.pid)
            assert fields is not None and fields[0] in ("R", "S") and fields[1] == str(os.getpid())
        assert server.proc_state(child.pid) in ("R", "S") and server.cpu_seconds(child.pid) is not None
    finally:
        child.kill()
        child.wait()
