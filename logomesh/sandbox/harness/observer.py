"""The observing runner: drives a hidden suite and reports observations, never verdicts. Stdlib only.

Runs INSIDE the sandbox; it is the process that imports the submission. The
server starts it as ``python3 -I -S -u -c <BOOT>``, a few neutral lines that
read a config line on stdin and exec this source in a namespace of its own, so
that ``__main__`` holds only a ``main`` function, ``sys.argv`` is ``["-c"]``,
no module of the judge stays in ``sys.modules``, the drivers are not files in
the box, and the box's only other file is ``solution.py``. An audit hook
(``audit.py``) installed before the submission is imported reports any look at
or into the judge; with ``"plain": true`` the same program runs without it,
so that the host can compare a run that is instrumented with one that is not.

Hidden tests here are *drivers*: they call the submission and
record what it did through the ``observe`` module (built from the source the
server passes, before anything untrusted is imported). Whether a test passed
is decided on the host, by comparing these observations with the reference
solution's (``logomesh/sandbox/verdict.py``); expected values never enter
this process, so there is no verdict here to forge.

What this process reports can still be rewritten by the code under test; the
only thing such a rewrite can achieve is to report the reference's values,
which it must compute to know. Signs of meddling that are cheap to see (a
trace or profile hook, the ``observe`` module replaced) are reported as
tampering, which fails the suite; their absence proves nothing.

Protocol as for ``runner.py``: ``run <index> <nonce>`` lines on the control
fd; JSON lines on the result fd: ``{"k": "imported", "errors": {...},
"tamper": [...]}`` once, then per test ``{"k": "obs", "i": index, "nonce":
nonce, "obs": [...], "tamper": [...]}``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import types
from typing import Any

CONTROL_FD = 0  # stdin: the config line (read by the server's BOOT), then ``run <index> <nonce>`` lines


def _load_module(name: str, source: str, filename: str) -> types.ModuleType:
    """``source`` run as module ``name``, registered in ``sys.modules`` only while it runs."""
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def run(config: dict[str, Any]) -> None:
    plain = bool(config.get("plain"))
    # Bound before the first untrusted import: whatever the submission later patches,
    # the channel keeps its format and the checks below keep their meaning.
    write, read, exit_now, getpid = os.write, os.read, os._exit, os.getpid
    dumps = json.dumps
    gettrace, getprofile = sys.gettrace, sys.getprofile
    is_unittest_case = _is_unittest_case
    ctl_fd, res_fd = CONTROL_FD, int(config["res"])
    judge_ids: set[int] = {id(globals()), id(sys.modules["__main__"].__dict__)}
    audit_reasons = _no_reasons
    if not plain:
        audit: dict[str, Any] = {"__name__": "audit"}
        exec(compile(config["audit"], "audit", "exec", dont_inherit=True), audit)
        judge_ids.add(id(audit))
        audit_reasons = audit["install"](res_fd, judge_ids)
    observe = _load_module("observe", config["observe"], "observe.py")
    judge_ids.add(id(observe.__dict__))
    recorder = observe.RECORDER
    reset, exception_name = recorder.reset, observe.exception_name
    observe_api = {name: getattr(observe, name) for name in ("see", "call", "raised", "within", "RECORDER")}
    base_exc = BaseException
    runner_pid = getpid()

    def emit(record: dict[str, Any]) -> None:
        if getpid() != runner_pid:  # a fork made by the code under test: only the runner reports
            exit_now(0)
        data = (dumps(record) + "\n").encode()
        while data:
            data = data[write(res_fd, data):]

    def meddling() -> list[str]:
        if plain:
            return []
        problems = list(audit_reasons())
        if gettrace() is not None or getattr(threading, "_trace_hook", None) is not None:
            problems.append("a trace hook was installed (sys.settrace)")
        if getprofile() is not None or getattr(threading, "_profile_hook", None) is not None:
            problems.append("a profile hook was installed (sys.setprofile)")
        for name, value in observe_api.items():
            if observe.__dict__.get(name) is not value:
                problems.append(f"observe.{name} was replaced")
        return problems

    # The submission's folder is on the path, last, so nothing it writes shadows what a driver imports.
    # It is imported first, on its own: while its module code runs, no module of the judge is in
    # sys.modules, and none is afterwards either (each driver is registered only while it loads).
    sys.path.append(config["sol_dir"])
    sys.dont_write_bytecode = True
    try:  # noqa: SIM105 - contextlib would be one more module in the submission's view
        __import__("solution")
    except base_exc:
        pass  # each driver's own import of it fails again, and says how
    drivers: dict[str, types.ModuleType] = {}
    import_errors: dict[str, str] = {}
    sys.modules["observe"] = observe
    try:
        for file_name, source in sorted(config["drivers"].items()):
            name = file_name[:-3]
            try:
                drivers[name] = _load_module(name, source, file_name)
                judge_ids.add(id(drivers[name].__dict__))
            except base_exc as exc:
                import_errors[name] = exception_name(exc)
    finally:
        sys.modules.pop("observe", None)
    emit({"k": "imported", "errors": import_errors, "tamper": meddling()})

    def run_test(test_id: str) -> list[Any]:
        mod_name, _, rest = test_id.partition(".")
        cls_name, _, func_name = rest.rpartition(".")
        reset()
        if mod_name in import_errors:
            return [["import-failed", import_errors[mod_name]]]
        module = drivers.get(mod_name)
        try:
            if cls_name:
                owner = getattr(module, cls_name)
                instance = owner(func_name) if is_unittest_case(owner) else owner()
                getattr(instance, func_name)()
            else:
                getattr(module, func_name)()
        except base_exc as exc:
            recorder.records.append(["ended-by", exception_name(exc)])
        records: list[Any] = reset()
        return records

    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = read(ctl_fd, 4096)
            if not chunk:
                exit_now(0)
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        parts = line.decode().split()
        if len(parts) != 3 or parts[0] != "run":
            exit_now(3)
        index, nonce = int(parts[1]), parts[2]
        tamper = meddling()
        observations = run_test(config["names"][index])
        tamper += [p for p in meddling() if p not in tamper]
        try:
            emit({"k": "obs", "i": index, "nonce": nonce, "obs": observations, "tamper": tamper})
        except (TypeError, ValueError, RecursionError):
            emit({"k": "obs", "i": index, "nonce": nonce, "obs": [["unencodable"]], "tamper": tamper})


def _no_reasons() -> list[str]:
    return []


def _is_unittest_case(owner: Any) -> bool:
    return any(getattr(cls, "__name__", "") == "TestCase" for cls in getattr(owner, "__mro__", ()))
