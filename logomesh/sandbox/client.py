"""The host side of the harness protocol, shared by both backends.

A backend starts the harness server (``harness/server.py``) inside its box,
passes every line the server prints to ``HarnessClient.feed_line`` from a
reader thread, and supplies ``send`` and ``kill``. The client turns runs into
requests, streams output to the caller, and enforces the host-side wall
clock: a box that does not answer in time is killed, never waited on.
"""

from __future__ import annotations

import base64
import binascii
import json
import queue
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from logomesh import untrusted
from logomesh.sandbox.base import (
    DEFAULT_LIMITS,
    Egress,
    Limits,
    Loaded,
    Observed,
    ObservedStatus,
    ObservedSuite,
    OutputSink,
    Reached,
    SandboxBroken,
    SandboxUnavailable,
    ScriptRun,
    SuiteRun,
    TestOutcome,
    TestStatus,
    Watch,
    Written,
    WrittenKind,
)
from logomesh.sandbox.discover import SuiteSourceError, discover
from logomesh.sandbox.image import LIBRARY
from logomesh.sandbox.seccomp import watch_filter, watched_calls
from logomesh.sandbox.setting import ROOTS, Setting

HARNESS_DIR = Path(__file__).with_name("harness")
HOST_GRACE_S = 10.0  # beyond a run's own timeout, before the host kills the box
START_TIMEOUT_S = 30.0
# The harness server's lines: a suite's result holds up to 1 MiB of observations per test (its RESULT_CAP) and
# the capped output; no honest line comes near this.
MAX_EVENT_BYTES = 256 << 20
_EOF = object()
NO_TESTS = "no tests found in the test files (unittest TestCase methods, or pytest-style test_* functions)"


def harness_source(name: str) -> str:
    return (HARNESS_DIR / name).read_text(encoding="utf-8")


def server_argv(python: str, work: str, limits: Limits, extra: Mapping[str, Any] | None = None,
                library: tuple[str, ...] = LIBRARY) -> list[str]:
    """The command that starts the harness server inside a box; ``library``: the folders whose opens it records
    (none where the box has no folders of its own to watch)."""
    config: dict[str, Any] = {"limits": asdict(limits), "work": work, "roots": list(ROOTS), "library": list(library)}
    for name in ("runner", "driver", "answerer", "wire", "observe", "title", "egress"):
        config[name] = harness_source(f"{name}.py")
    config["limits"].update(extra or {})
    return [python, "-I", "-S", "-c", harness_source("server.py"), json.dumps(config)]


class HarnessClient:
    def __init__(self, send: Callable[[bytes], None], kill: Callable[[], None], limits: Limits = DEFAULT_LIMITS):
        self._send = send
        self._kill = kill
        self._limits = limits
        self._events: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 0
        self.broken: str | None = None
        self._stderr_tail = b""
        self.python_version = ""

    # -- fed by the backend's reader thread --------------------------------------------------------
    def feed_line(self, line: bytes) -> None:
        try:
            event = untrusted.parse_object(line, MAX_EVENT_BYTES)
        except untrusted.Malformed:
            return  # not ours (the server only prints JSON objects, nested no deeper than it checks)
        self._events.put(event)

    def feed_eof(self) -> None:
        self._events.put(_EOF)

    def feed_stderr(self, data: bytes) -> None:
        """The harness server's own stderr (never the submission's): kept short, for diagnosis."""
        self._stderr_tail = (self._stderr_tail + data)[-2048:]

    def diagnosis(self) -> str:
        """The last line the harness server wrote on its stderr, if any."""
        lines = self._stderr_tail.decode(errors="replace").strip().splitlines()
        return lines[-1][:200] if lines else ""

    # -- lifecycle ---------------------------------------------------------------------------------
    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            event = self._next_event(deadline)
            if event is None:
                self._kill()
                raise SandboxUnavailable(f"the sandbox harness did not start within {timeout_s:.0f} s")
            if event is _EOF:
                detail = self.diagnosis()
                raise SandboxUnavailable(
                    "the sandbox harness exited at start" + (f": {detail}" if detail else "")
                    + " (see `logomesh sandbox doctor`)"
                )
            if event.get("ev") == "ready":
                self.python_version = str(event.get("python", ""))
                return

    def _next_event(self, deadline: float) -> Any:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        try:
            return self._events.get(timeout=remaining)
        except queue.Empty:
            return None

    def _request(self, payload: dict[str, Any], timeout_s: float, on_output: OutputSink | None) -> dict[str, Any]:
        """Send one request and wait for its result; raise SandboxBroken if the box fails or overruns."""
        with self._lock:
            if self.broken:
                raise SandboxBroken(self.broken)
            self._next_id += 1
            run_id = self._next_id
            payload = {**payload, "id": run_id}
            try:
                self._send((json.dumps(payload) + "\n").encode())
            except OSError as exc:
                self._break(f"the sandbox stopped accepting work: {exc}")
            deadline = time.monotonic() + timeout_s + HOST_GRACE_S
            while True:
                event = self._next_event(deadline)
                if event is None:
                    self._kill()
                    self._break(f"the sandbox did not answer within {timeout_s + HOST_GRACE_S:.0f} s and was killed")
                if event is _EOF:
                    detail = self.diagnosis()
                    self._break(
                        "the sandbox harness died (killed by a limit or by the submission)"
                        + (f": {detail}" if detail else "")
                    )
                if event.get("id") != run_id:
                    continue
                if event.get("ev") == "out" and on_output is not None:
                    on_output(str(event.get("origin", "")), str(event.get("stream", "stdout")), str(event.get("text")))
                elif event.get("ev") == "done":
                    if "error" in event:
                        raise SandboxBroken(f"the harness rejected the run: {str(event['error'])[:500]}")
                    try:
                        return untrusted.mapping(event, "result")
                    except untrusted.Malformed as exc:
                        raise SandboxBroken(f"the harness's answer is malformed ({exc})") from None

    def _break(self, reason: str) -> None:
        self.broken = reason
        raise SandboxBroken(reason)

    # -- runs --------------------------------------------------------------------------------------
    def run_suite(
        self,
        solution: str,
        tests: Mapping[str, str],
        timeout_s: float = 30.0,
        on_output: OutputSink | None = None,
        interface: Collection[str] | None = None,
        setting: Setting | None = None,
    ) -> SuiteRun:
        """The purple agent's own tests (its own claims), in a process of their own that reaches the code's only
        over the wire; ``interface``: the only names of the module they may read; ``setting``: how the code's
        process starts (``setting.py``; None: the classic start)."""
        names, problem = self._discover(tests)
        if problem is not None:
            return SuiteRun(outcomes=(), error=problem)
        started = time.monotonic()
        try:
            request = self._suite_request("suite", solution, tests, names, timeout_s, setting)
            if interface is not None:
                request["interface"] = sorted(interface)
            result = self._request(request, timeout_s, on_output)
        except SandboxBroken as exc:
            reason = str(exc)
            outcomes = tuple(TestOutcome(n, "crashed", reason, 0.0) for n in names)
            return SuiteRun(outcomes=outcomes, error=reason, duration_s=time.monotonic() - started)
        return suite_from_result(names, result)

    def observe_suite(
        self,
        solution: str,
        drivers: Mapping[str, str],
        timeout_s: float = 60.0,
        on_output: OutputSink | None = None,
        seed: int = 0,
        only: Collection[str] | None = None,
        setting: Setting | None = None,
        watch: Watch | None = None,
    ) -> ObservedSuite:
        """Run hidden-test drivers against ``solution`` and bring back their observations, unjudged.

        The drivers run in a process of their own, the submission in another (``harness/driver.py``,
        ``harness/answerer.py``). ``seed`` seeds their drawn inputs; ``only``: just these tests; ``setting``:
        how the submission's process starts."""
        names, problem = self._discover(drivers)
        if problem is not None:
            return ObservedSuite(tests=(), error=problem)
        if only is not None:
            names = [n for n in names if n in only]
        started = time.monotonic()
        try:
            request = {**self._suite_request("observe", solution, drivers, names, timeout_s, setting), "seed": seed}
            if watch is not None:
                request["watch"] = {"env": dict(watch.env), "filter": watch_filter().hex(), "calls": watched_calls()}
            result = self._request(request, timeout_s, on_output)
        except SandboxBroken as exc:
            reason = str(exc)
            broken = tuple(Observed(n, "crashed", (), reason, 0.0) for n in names)
            return ObservedSuite(tests=broken, error=reason, duration_s=time.monotonic() - started,
                                 loaded=Loaded((), complete=False))  # the box's record went with it
        return observed_from_result(names, result)

    @staticmethod
    def _discover(tests: Mapping[str, str]) -> tuple[list[str], str | None]:
        try:
            names = discover(tests)
        except SuiteSourceError as exc:
            return [], str(exc)
        return names, (None if names else NO_TESTS)

    def _suite_request(
        self, op: str, solution: str, tests: Mapping[str, str], names: list[str], timeout_s: float,
        setting: Setting | None,
    ) -> dict[str, Any]:
        request = {
            "op": op,
            "solution": solution,
            "tests": dict(tests),
            "names": names,
            "timeout": timeout_s,
            "test_timeout": min(self._limits.test_timeout_s, timeout_s),
        }
        return request if setting is None else {**request, "setting": setting.to_json()}

    def run_script(self, files: Mapping[str, str], script: str, timeout_s: float = 10.0) -> ScriptRun:
        started = time.monotonic()
        try:
            result = self._request({"op": "script", "files": dict(files), "script": script, "timeout": timeout_s},
                                   timeout_s, None)
            return script_from_result(result)
        except SandboxBroken as exc:
            return ScriptRun(None, "", str(exc), True, time.monotonic() - started)


def script_from_result(result: Mapping[str, Any]) -> ScriptRun:
    """A script's run as the harness server reports it; ``SandboxBroken`` when a field has the wrong type."""
    try:
        return ScriptRun(
            exit_code=untrusted.optional_integer(result, "exit_code"),
            stdout=untrusted.text(result, "stdout", limit=MAX_EVENT_BYTES),
            stderr=untrusted.text(result, "stderr", limit=MAX_EVENT_BYTES),
            timed_out=untrusted.flag(result, "timed_out"),
            duration_s=untrusted.number(result, "duration_s"),
            signal=untrusted.optional_integer(result, "signal"),
            truncated=untrusted.flag(result, "truncated"),
        )
    except untrusted.Malformed as exc:
        raise SandboxBroken(f"the harness's answer is malformed ({exc})") from None


_STATUSES: tuple[TestStatus, ...] = ("passed", "failed", "error", "timeout", "crashed")


def suite_from_result(names: list[str], result: Mapping[str, Any]) -> SuiteRun:
    """Build the SuiteRun, trusting only the names the host discovered; a malformed result fails every test."""
    try:
        by_name = {o.name: o for o in (_outcome(raw) for raw in _named(names, result)) if o is not None}
        tamper, head = untrusted.texts(result, "tamper"), _suite_head(result)
    except untrusted.Malformed as exc:
        reason = f"the harness's record is malformed ({exc})"
        return SuiteRun(outcomes=tuple(TestOutcome(n, "error", reason, 0.0) for n in names), error=reason)
    outcomes = tuple(by_name.get(n, TestOutcome(n, "error", "no verdict from the harness", 0.0)) for n in names)
    if tamper:
        outcomes = tuple(
            o if o.status != "passed" else TestOutcome(o.name, "failed", "tampered: " + tamper[0], o.duration_s)
            for o in outcomes
        )
    return SuiteRun(outcomes=outcomes, tampered=bool(tamper), tamper_reasons=tamper, **head)


def _named(names: list[str], result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The result's outcome records whose name the host discovered (others are not ours to judge)."""
    return [raw for raw in untrusted.objects(result, "outcomes") if raw.get("name") in names]


def _suite_head(result: Mapping[str, Any]) -> dict[str, Any]:
    """A suite result's fields besides its outcomes: error, output, duration."""
    return {"error": untrusted.optional_text(result, "error") or None,
            "stdout": untrusted.text(result, "stdout", limit=MAX_EVENT_BYTES),
            "stderr": untrusted.text(result, "stderr", limit=MAX_EVENT_BYTES),
            "duration_s": untrusted.number(result, "duration_s")}


def _outcome(raw: dict[str, Any]) -> TestOutcome | None:
    """One verdict of the purple agent's own tests; a malformed record is an error, never a pass."""
    name = str(raw["name"])
    try:
        status = untrusted.text(raw, "status", limit=40)
        checked: TestStatus = status if status in _STATUSES else "error"
        return TestOutcome(name, checked, untrusted.text(raw, "reason", ""), untrusted.number(raw, "duration_s"))
    except untrusted.Malformed as exc:
        return TestOutcome(name, "error", f"the harness's record of this test is malformed ({exc})", 0.0)


_OBSERVED: tuple[ObservedStatus, ...] = ("observed", "error", "timeout", "crashed")
MAX_OBSERVATION_BYTES = 1 << 20


def observed_from_result(names: list[str], result: Mapping[str, Any]) -> ObservedSuite:
    """Build the ObservedSuite, trusting only the names the host discovered and plain JSON lists; a malformed
    result is an error for every test, never an observation."""
    try:
        by_name = {o.name: o for o in (_observed(raw) for raw in _named(names, result))}
        tamper, head = untrusted.texts(result, "tamper"), _suite_head(result)
    except untrusted.Malformed as exc:
        reason = f"the harness's record is malformed ({exc})"
        return ObservedSuite(tests=tuple(Observed(n, "error", (), reason, 0.0) for n in names), error=reason)
    tests = tuple(by_name.get(n, Observed(n, "error", (), "no observations from the harness", 0.0)) for n in names)
    return ObservedSuite(tests=tests, tamper_reasons=tamper, loaded=loaded_from_result(result),
                         egress=egress_from_result(result), **head)


MAX_LOADED = 2000  # module names a record may hold (the server's cap)


def loaded_from_result(result: Mapping[str, Any]) -> Loaded | None:
    """The modules the code loaded, as the server recorded them (``loaded``); None where the result has no
    record (a server that could not watch). A malformed record is an incomplete one, never a clean one."""
    if "loaded" not in result:
        return None
    try:
        record = untrusted.mapping(result, "loaded")
        modules = untrusted.texts(record, "modules", limit=200)
        complete = untrusted.flag(record, "complete")
    except untrusted.Malformed:
        return Loaded((), complete=False)
    if len(modules) > MAX_LOADED:
        return Loaded(tuple(sorted(set(modules))[:MAX_LOADED]), complete=False)
    return Loaded(tuple(sorted(set(modules))), complete)


def egress_from_result(result: Mapping[str, Any]) -> Egress | None:
    """What the code sent out, as the server recorded it (``harness/egress.py``); None where the run was not
    watched. A malformed record is an incomplete one, never a clean one."""
    if "egress" not in result:
        return None
    try:
        record = untrusted.mapping(result, "egress")
        writes, sockets = untrusted.mapping(record, "writes"), untrusted.mapping(record, "sockets")
        written = tuple(Written(untrusted.text(f, "path", limit=4096), _kind(untrusted.text(f, "kind", limit=10)),
                                _bytes(f, "head"), _bytes(f, "tail"))
                        for f in untrusted.objects(writes, "files"))
        reached = tuple(Reached(untrusted.text(e, "call", limit=40), untrusted.optional_text(e, "address", 300),
                                untrusted.flag(e, "hidden", False), _bytes(e, "data") + _bytes(e, "received"))
                        for e in untrusted.objects(sockets, "events"))
        complete = untrusted.flag(writes, "complete") and untrusted.flag(sockets, "complete")
        return Egress(untrusted.text(record, "folder", limit=4096), written, reached, complete,
                      untrusted.text(record, "why", "", limit=200))
    except (untrusted.Malformed, binascii.Error) as exc:
        return Egress("", (), (), complete=False, problem=f"the record is malformed ({exc})"[:200])


def _kind(kind: str) -> WrittenKind:
    if kind not in ("file", "dir", "device", "other", "gone"):
        raise untrusted.Malformed(f"unknown kind of written path {kind!r}")
    return cast(WrittenKind, kind)


def _bytes(record: Mapping[str, Any], key: str) -> bytes:
    """A base64 field of the server's record (absent: none)."""
    return base64.b64decode(untrusted.text(record, key, "", limit=1 << 20), validate=True)


def _observed(raw: dict[str, Any]) -> Observed:
    """One test's observations; malformed, too big or too deep is an error, never an observation."""
    name = str(raw["name"])
    try:
        status = untrusted.text(raw, "status", limit=40)
        duration, reason = untrusted.number(raw, "duration_s"), untrusted.text(raw, "reason", "")
        cpu = untrusted.optional_number(raw, "cpu_s")
        if status != "observed":
            return Observed(name, status if status in _OBSERVED else "error", (), reason, duration, cpu)
        obs = untrusted.items(raw, "obs")
        if len(json.dumps(obs)) > MAX_OBSERVATION_BYTES:  # its depth was bounded when the line was parsed
            raise untrusted.Malformed(f"observations over {MAX_OBSERVATION_BYTES} bytes")
    except untrusted.Malformed as exc:
        return Observed(name, "error", (), f"the harness's record of this test is malformed ({exc})", 0.0)
    return Observed(name, "observed", tuple(obs), reason, duration, cpu)


class HarnessRuns:
    """The runs every backend offers, handed to its ``HarnessClient`` (a backend only starts and stops boxes)."""

    _harness: HarnessClient

    def run_suite(
        self,
        solution: str,
        tests: Mapping[str, str],
        timeout_s: float = 30.0,
        on_output: OutputSink | None = None,
        interface: Collection[str] | None = None,
        setting: Setting | None = None,
    ) -> SuiteRun:
        return self._harness.run_suite(solution, tests, timeout_s, on_output, interface, setting)

    def observe_suite(
        self,
        solution: str,
        drivers: Mapping[str, str],
        timeout_s: float = 60.0,
        on_output: OutputSink | None = None,
        seed: int = 0,
        only: Collection[str] | None = None,
        setting: Setting | None = None,
        watch: Watch | None = None,
    ) -> ObservedSuite:
        return self._harness.observe_suite(solution, drivers, timeout_s, on_output, seed, only, setting, watch)

    def run_script(self, files: Mapping[str, str], script: str, timeout_s: float = 10.0) -> ScriptRun:
        return self._harness.run_script(files, script, timeout_s)
