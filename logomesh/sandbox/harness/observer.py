"""The observing runner: drives a hidden suite and reports observations, never verdicts. Stdlib only.

Runs INSIDE the sandbox, started by ``server.py`` as ``python3 -I -S -u -c
<this source> <config json>``; it is the process that imports the
submission. Hidden tests here are *drivers*: they call the submission and
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


def _load_observe(source: str) -> types.ModuleType:
    module = types.ModuleType("observe")
    module.__file__ = "<observe>"
    sys.modules["observe"] = module
    exec(compile(source, "<observe>", "exec", dont_inherit=True), module.__dict__)
    return module


def main() -> None:
    config = json.loads(sys.argv[1])
    observe = _load_observe(config["observe"])
    # Bound before the first untrusted import: whatever the submission later patches,
    # the channel keeps its format and the checks below keep their meaning.
    write, read, exit_now, getpid = os.write, os.read, os._exit, os.getpid
    dumps = json.dumps
    gettrace, getprofile = sys.gettrace, sys.getprofile
    modules_table = sys.modules
    recorder = observe.RECORDER
    reset, exception_name = recorder.reset, observe.exception_name
    observe_api = {name: getattr(observe, name) for name in ("see", "call", "raised", "within", "RECORDER")}
    base_exc = BaseException
    runner_pid = getpid()
    ctl_fd, res_fd = int(config["ctl"]), int(config["res"])

    def emit(record: dict[str, Any]) -> None:
        if getpid() != runner_pid:  # a fork made by the code under test: only the runner reports
            exit_now(0)
        data = (dumps(record) + "\n").encode()
        while data:
            data = data[write(res_fd, data):]

    def meddling() -> list[str]:
        problems = []
        if gettrace() is not None or getattr(threading, "_trace_hook", None) is not None:
            problems.append("a trace hook was installed (sys.settrace)")
        if getprofile() is not None or getattr(threading, "_profile_hook", None) is not None:
            problems.append("a profile hook was installed (sys.setprofile)")
        if modules_table.get("observe") is not observe:
            problems.append("the observe module was replaced")
        for name, value in observe_api.items():
            if observe.__dict__.get(name) is not value:
                problems.append(f"observe.{name} was replaced")
        return problems

    sys.path.insert(0, config["tests_dir"])
    sys.path.append(config["sol_dir"])  # last, so nothing the submission writes shadows what the driver imports
    sys.dont_write_bytecode = True
    drivers: dict[str, types.ModuleType] = {}
    import_errors: dict[str, str] = {}
    for file_name in config["files"]:
        name = file_name[:-3]
        try:
            drivers[name] = __import__(name)
        except base_exc as exc:
            import_errors[name] = exception_name(exc)
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
                instance = owner(func_name) if _is_unittest_case(owner) else owner()
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


def _is_unittest_case(owner: Any) -> bool:
    return any(getattr(cls, "__name__", "") == "TestCase" for cls in getattr(owner, "__mro__", ()))


if __name__ == "__main__":
    main()
