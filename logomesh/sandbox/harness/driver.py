"""The driver: the judge's process of a hidden suite, which records observations, never verdicts. Stdlib only.

Runs INSIDE the sandbox, started by the server as ``python3 -I -S -u -c
<BOOT>`` with a config on stdin. The submission is NOT in this process: it
runs in the *answerer* (``answerer.py``), which the server starts only once
this process has made itself non-dumpable (so the code, same uid, can neither
ptrace it nor open its ``/proc`` fds). Only this process holds the result
channel and sees the nonces. It never runs the submission's code: what the
answerer sends is plain typed data or a reference (``wire.py``).

Here ``from solution import X`` gives proxies (a finder on ``sys.meta_path``
asks the answerer to import, or reload, the submission); calling them,
reading their attributes and the common special methods are requests to the
answerer, and what the drivers pass that is not plain data (a fake clock, a
callback) crosses as a reference the code calls back through. So the
drivers run unchanged, ``observe`` records exactly what it recorded when the
code shared this process (an object by first-seen order, an exception by its
nearest builtin class), and the host judges as before. A code process that
lies, breaks the protocol or dies only changes its own answers: a broken
protocol or a lost answerer ends the test (``lost``), which the server
reports as crashed and restarts both processes for the next test.

Protocol with the server: on stdin, after the config line, ``code <pid>``
once (the answerer's pid, written as soon as the server has started it, before
any test; the answerer itself is never told) and ``run <index> <nonce>``
lines; JSON lines on the result fd: ``{"k": "ready"}`` once non-dumpable,
``{"k": "imported", "errors": {...}, "lost": ...}`` once, then per test
``{"k": "obs", "i": index, "nonce": nonce, "obs": [...], "lost": null or
why, "stopped": bool}``. ``stopped``: the test killed the code's process on
purpose (``observe.CODE.stop()``, a call over its CPU cap): what it recorded
stands, and the server starts a fresh pair for the next test, as after a
loss.

The purple agent's own tests (``"suite": true`` in the config) run in the
answerer, beside the code they import (``runner.py``): this process loads no
driver, asks ``imported`` once and ``test <name>`` per ``run`` line, and
writes ``{"k": "verdict", "i", "nonce", "status", "reason", "tamper",
"lost"}`` with what the code's process answered, checked for shape here.

The answerer's pid is ``observe.CODE.pid``, for drivers that measure the code
from outside through the kernel (``/proc/<pid>``: the red agent's growth and
timing probes), so that nothing the code does to its own interpreter moves
the measurement.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import socket
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

CONTROL_FD = 0  # stdin: the config line (read by the server's BOOT), ``code <pid>``, then ``run <index> <nonce>``


def run(config: dict[str, Any]) -> None:
    write, exit_now = os.write, os._exit
    res_fd = int(config["res"])

    def emit(record: dict[str, Any]) -> None:
        data = (json.dumps(record) + "\n").encode()
        while data:
            data = data[write(res_fd, data):]

    wire: dict[str, Any] = {"__name__": "wire"}
    exec(marshal.loads(bytes.fromhex(config["wire"])), wire)  # compiled once by the server (server.compiled)
    title: dict[str, Any] = {"__name__": "title"}
    memory = None
    if config.get("title"):  # the setting's sibling of the code's process (sandbox/setting.py)
        exec(compile(config["title_code"], "title", "exec", dont_inherit=True), title)
        memory = title["own_memory"]()  # opened now: we turn non-dumpable next
    if not wire["non_dumpable"]():
        exit_now(3)  # the code could read our fds; the server reports the suite as crashed
    if memory is not None:
        title["retitle"](str(config["title"]).encode(), memory)
        memory.close()
    if not config.get("suite"):
        _preload([config["observe"], *config["drivers"].values()])
    emit({"k": "ready"})  # the server starts the answerer now, while this process loads the rest
    peer = wire["Peer"]("d", socket.socket(fileno=int(config["control"])), wire["public"])
    with contextlib.suppress(wire["Lost"]):  # peer.lost says so below
        peer.hand_over(b"main")

    def serve_callbacks() -> None:  # connections the code opens to call a driver's object from its own threads
        while (handed := peer.accept()) is not None:
            peer.serve_in_thread(handed[1])

    threading.Thread(target=serve_callbacks, daemon=True).start()
    (_ask_tests if config.get("suite") else _run_drivers)(config, peer, wire, emit)
    exit_now(0)


def _ask_tests(config: dict[str, Any], peer: Any, wire: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> None:
    """The purple's own tests: ask the answerer for each and write what it answered (``TestsAnswered``)."""
    tests = TestsAnswered(peer, wire["Message"], wire["Lost"])
    emit({"k": "imported", **tests.imported(), "lost": peer.lost})
    if peer.lost:
        return
    for index, nonce in _runs(os.read, config["names"], os._exit):
        emit({"k": "verdict", "i": index, "nonce": nonce, **tests.run(config["names"][index]), "lost": peer.lost})
        if peer.lost:
            return  # the server starts a fresh pair for the next test


def _run_drivers(config: dict[str, Any], peer: Any, wire: dict[str, Any],
                 emit: Callable[[dict[str, Any]], None]) -> None:
    """A hidden suite or a probe: load ``observe`` and the drivers here, run each test asked for, write what it
    recorded."""
    exit_now = os._exit
    sys.meta_path.insert(0, wire["SolutionFinder"](peer, os.path.join(config["sol_dir"], "solution.py")))

    observe = _load_module("observe", config["observe"], "observe.py")
    recorder, exception_name, code = observe.RECORDER, observe.exception_name, observe.CODE
    observe.__dict__["SEED"] = int(config.get("seed", 0))  # drawn inputs: observe.drawn
    code.held = lambda: len(peer.proxies)  # one proxy per object of the code's the answerer keeps for us
    drivers: dict[str, types.ModuleType] = {}
    import_errors: dict[str, str] = {}
    sys.modules["observe"] = observe
    try:
        for file_name, source in sorted(config["drivers"].items()):
            name = file_name[:-3]
            try:
                drivers[name] = _load_module(name, source, file_name)
            except BaseException as exc:
                import_errors[name] = exception_name(exc)
    finally:
        sys.modules.pop("observe", None)
    emit({"k": "imported", "errors": import_errors, "lost": peer.lost})
    if peer.lost:
        exit_now(0)

    def run_test(test_id: str) -> list[Any]:
        mod_name, _, rest = test_id.partition(".")
        cls_name, _, func_name = rest.rpartition(".")
        recorder.reset()
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
        except BaseException as exc:
            recorder.records.append(["ended-by", exception_name(exc)])
        records: list[Any] = recorder.reset()
        return records

    for index, nonce in _runs(os.read, config["names"], exit_now, code):
        observations = run_test(config["names"][index])
        lost = None if code.stopped else peer.lost  # stopped on purpose: what the test recorded stands
        try:
            emit({"k": "obs", "i": index, "nonce": nonce, "obs": observations, "lost": lost,
                  "stopped": code.stopped})
        except (TypeError, ValueError, RecursionError):
            emit({"k": "obs", "i": index, "nonce": nonce, "obs": [["unencodable"]], "lost": lost,
                  "stopped": code.stopped})
        if peer.lost or code.stopped:
            exit_now(0)  # the server starts a fresh pair for the next test


def _runs(read: Any, names: list[str], exit_now: Any, code: Any = None) -> Any:
    """``(index, nonce)`` per ``run`` line on the control fd (``code <pid>`` lines set ``code.pid``); the process
    exits when the server closes it, or on a line it does not know."""
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = read(CONTROL_FD, 4096)
            if not chunk:
                exit_now(0)
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        parts = line.decode().split()
        if len(parts) == 2 and parts[0] == "code" and parts[1].isdigit():
            if code is not None:
                code.pid = int(parts[1])
            continue
        if len(parts) != 3 or parts[0] != "run" or not parts[1].isdigit() or int(parts[1]) >= len(names):
            exit_now(3)
        yield int(parts[1]), parts[2]


class TestsAnswered:
    """The purple agent's own tests, run by ``runner.py`` in the code's process: this side asks and records
    what it answered. An answer is the code's word, never a record of ours; a malformed one is an error."""

    STATUSES = ("passed", "failed", "error")

    def __init__(self, peer: Any, message: Any, lost: type[BaseException]) -> None:
        self.peer = peer
        self.message = message
        self.lost = lost

    def imported(self) -> dict[str, Any]:
        """``{"errors": {module: why}, "tamper": [...]}`` as the code's process answered them."""
        try:
            answer = self.peer.ask(self.message("imported"))
        except self.lost:
            return {"errors": {}, "tamper": []}
        except BaseException as exc:
            why = f"the code's process raised {type(exc).__name__} when asked what it imported"
            return {"errors": {}, "tamper": [why]}
        errors, tamper = answer if type(answer) is list and len(answer) == 2 else (None, [None])
        if not (type(errors) is dict and all(type(k) is str and type(v) is str for k, v in errors.items())
                and _texts(tamper)):
            return {"errors": {}, "tamper": ["the code's process answered a malformed import record"]}
        return {"errors": {k: v[:500] for k, v in errors.items()}, "tamper": [str(t)[:300] for t in tamper]}

    def run(self, name: str) -> dict[str, Any]:
        """``{"status", "reason", "tamper"}`` of one test, as the code's process answered."""
        try:
            answer = self.peer.ask(self.message("test"), (name,))
        except self.lost:
            return {"status": "error", "reason": "the code's process was lost", "tamper": []}
        except BaseException as exc:
            return {"status": "error", "reason": f"the code's process raised {type(exc).__name__}", "tamper": []}
        status, reason, tamper = answer if type(answer) is list and len(answer) == 3 else (None, None, [None])
        if type(status) is not str or status not in self.STATUSES or type(reason) is not str or not _texts(tamper):
            return {"status": "error", "reason": "the code's process answered a malformed verdict", "tamper": []}
        return {"status": status, "reason": reason[:500], "tamper": [str(t)[:300] for t in tamper]}


def _texts(value: Any) -> bool:
    return type(value) is list and len(value) <= 1000 and all(type(v) is str for v in value)


PyCF_ONLY_AST = 0x400  # compile() gives the syntax tree (of the builtin ``_ast`` classes: ``ast`` is not loaded)
NOT_PRELOADED = frozenset({"solution", "observe"})


def _preload(sources: list[str]) -> None:
    """Before ``ready``: load every module ``sources`` import (at any depth), and print tracebacks without reading
    source files. From the code's import on, the server counts every open in the interpreter's library as the
    code's (``server.ImportWatch``): a module this process loaded then, while loading the drivers beside the
    answerer or formatting a driver thread's traceback (``traceback``, its imports, ``linecache`` reading
    ``threading.py``), would be recorded as loaded by the code."""
    for source in sources:
        for name in _imported_names(source):
            with contextlib.suppress(BaseException):
                __import__(name)
    threading.excepthook = _thread_died
    sys.excepthook = lambda kind, value, tb: _print_plain(value, "")


def _thread_died(args: Any) -> None:
    if args.exc_type is not SystemExit:  # as the default hook: a thread's SystemExit is silent
        _print_plain(args.exc_value, f"Exception in thread {args.thread}:\n")


def _imported_names(source: str) -> list[str]:
    """The modules ``source``'s import statements name (``from a import b``: ``a`` and ``a.b``), but ours."""
    try:
        tree = compile(source, "driver", "exec", PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return []
    names, stack = [], [tree]
    while stack:
        node = stack.pop()
        kind = type(node).__name__
        if kind == "Import":
            names += [alias.name for alias in node.names]
        elif kind == "ImportFrom" and node.module and not node.level:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for field in node._fields:
            value = getattr(node, field, None)
            stack += [v for v in (value if isinstance(value, list) else [value]) if hasattr(v, "_fields")]
    return [n for n in names if n.split(".")[0] not in NOT_PRELOADED]


def _print_plain(exc: BaseException | None, head: str) -> None:
    """``exc``'s traceback on stderr, each frame's file, line and function without its source line: reading the
    line would open the file, in the library for the interpreter's own frames (``_preload``)."""
    lines = [head + "Traceback (most recent call last):"]
    tb = exc.__traceback__ if exc is not None else None
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}')
        tb = tb.tb_next
    lines.append(f"{type(exc).__name__}: {exc}")
    with contextlib.suppress(OSError):
        os.write(2, ("\n".join(lines) + "\n").encode("utf-8", "replace"))


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


def _is_unittest_case(owner: Any) -> bool:
    return any(getattr(cls, "__name__", "") == "TestCase" for cls in getattr(owner, "__mro__", ()))
