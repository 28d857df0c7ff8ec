"""The answerer: the process that imports the code and answers calls. Stdlib only.

Runs INSIDE the sandbox, started by the server as ``python3 -I -S -u -c
<BOOT>`` (the same neutral lines as the driver) with a config on stdin: the
``wire``'s code (compiled once by the server) and the number of its end of the control socket. It holds
nothing of the judge: no result channel, no nonce, no ``observe``, no
driver, no audit hook, nothing the host reads. Whatever the code does to
this process (rewrite it, fork it, dup2 over every fd it has, print
records) it can only change its answers, which the asking side, in a process
of its own, records as what the code answered.

It plays one of three parts, by its config:

- **the code of a hidden suite or a probe** (``sol_dir``): it imports
  ``solution`` from that folder first and alone, then answers the driver.
- **the code of a run of the purple agent's own tests** (``source``): the
  code under test (the submission, the task's reference or one of its flawed
  variants) arrives as text and never exists as a file. The process makes
  itself non-dumpable and says ``ready`` on its control socket before it
  loads anything, so the tests' process, started only then, can neither read
  its memory nor trace it. It serves that process *guarded* (``wire.Peer``):
  public names only (``wire.public``), of the module only the task's
  ``interface`` (``Interface``), nothing but what the code defines
  (``wire.reachable``), no frames with an exception. So the tests learn what the code answers and
  nothing of the code itself: a test that would recognise the reference by
  its text or its bytecode (and so "catch" every variant) has nothing to read.
- **the purple agent's tests** (``runner``, and ``code``: its end of a control
  socket to the code's process): it loads ``runner.py``, whose tests import
  ``solution`` as proxies of that process (``wire.SolutionFinder``), and
  answers the driver's ``imported`` and ``test <name>`` with what the tests did.

Each serves the asking side's main connection in its main thread (so code
that needs the main thread has it) and every other connection handed over in
a thread of its own (``wire.Peer``). When the asking side goes away, so does
this process.
"""

from __future__ import annotations

import marshal
import os
import socket
import sys
import types
from collections.abc import Callable
from typing import Any


def run(config: dict[str, Any]) -> None:
    _settle(bool(config.get("ordinary")))
    wire: dict[str, Any] = {"__name__": "wire"}
    exec(marshal.loads(bytes.fromhex(config["wire"])), wire)  # compiled once by the server (server.compiled)
    control = socket.socket(fileno=int(config["control"]))
    exit_now = os._exit
    guarded = "source" in config
    suite: Any = None
    if guarded:
        if not wire["non_dumpable"]():
            exit_now(3)  # the tests' process could read the code: the server never starts it
        control.send(b"ready")
        interface = config.get("interface")
        actions = _from_source(str(config["source"]), None if interface is None else frozenset(interface),
                               wire["reachable"])
    elif "runner" in config:
        _import_through(wire, socket.socket(fileno=int(config["code"])))
        runner: dict[str, Any] = {"__name__": "runner"}
        exec(compile(config["runner"], "runner", "exec", dont_inherit=True), runner)
        suite = runner["prepare"](config)
        actions = {"imported": suite.imported, "test": suite.test}
    else:
        actions = _from_folder(str(config["sol_dir"]))
    peer = wire["Peer"]("a", control, wire["public"] if guarded else _anything, actions, guarded)
    first = peer.accept()
    if first is None or first[0] != b"main":
        exit_now(0)
    main_connection = first[1]

    def accept_more() -> None:
        while (handed := peer.accept()) is not None:
            peer.serve_in_thread(handed[1])
        exit_now(0)  # the asking side is gone

    wire["spawn"](accept_more)
    if suite is None:
        peer.serve(main_connection)
    else:
        suite.serve(lambda: peer.serve(main_connection))
    exit_now(0)


def _settle(ordinary: bool) -> None:
    """Before any code runs in an ordinary setting: stdin at ``/dev/null``, not the pipe the config came on. It
    imports nothing: a module loaded here for the judge would be a mark of the judge's ordinary setting."""
    if not ordinary:
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def _anything(op: str, name: str) -> bool:
    return True  # the code's own objects: whatever the driver asks, the code answers


def _from_folder(sol_dir: str) -> dict[str, Callable[[], Any]]:
    """Import ``solution`` from ``sol_dir`` now; ``import`` and ``reload`` answer it."""
    sys.path.append(sol_dir)  # last, so nothing the code writes shadows a module
    sys.dont_write_bytecode = True
    try:  # noqa: SIM105 - the driver's own import asks again and records how it fails
        __import__("solution")
    except BaseException:
        pass

    def reload() -> Any:
        import importlib

        return importlib.reload(sys.modules["solution"])

    return {"import": lambda: __import__("solution"), "reload": reload}


class Interface:
    """The code's module as the purple's tests see it: the task's interface (``names``; without one, the public
    names), read and written through to the module, and nothing else. Iterating it gives the names a test's
    ``from solution import *`` takes: those the module has, whose values the tests may reach (``reachable``)."""

    __slots__ = ("_module", "_names", "_reachable")

    def __init__(self, module: types.ModuleType, names: frozenset[str] | None,
                 reachable: Callable[[Any], bool]) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_reachable", reachable)

    def _checked(self, name: str) -> str:
        if self._names is not None and name not in self._names:
            raise AttributeError(f"module 'solution' has no attribute {name!r} in the task's interface")
        return name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, self._checked(name))

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._module, self._checked(name), value)

    def __delattr__(self, name: str) -> None:
        delattr(self._module, self._checked(name))

    def __iter__(self) -> Any:
        module = vars(self._module)
        names = self._names if self._names is not None else module.get("__all__", module)
        return iter(sorted(n for n in names if type(n) is str and not n.startswith("_") and n in module
                           and self._reachable(module[n])))


def _from_source(source: str, interface: frozenset[str] | None,
                 reachable: Callable[[Any], bool]) -> dict[str, Callable[[], Any]]:
    """``solution`` made from ``source`` when first asked for (a failed import raises again when asked again,
    as Python's own import does); ``reload`` runs it again in the same module. What crosses is the module seen
    through the ``interface`` (``Interface``)."""

    def seen(module: types.ModuleType) -> Any:
        return Interface(module, interface, reachable)

    def run_in(module: types.ModuleType) -> types.ModuleType:
        sys.modules["solution"] = module
        try:
            exec(compile(source, "solution.py", "exec", dont_inherit=True), module.__dict__)
        except BaseException:
            sys.modules.pop("solution", None)
            raise
        return module

    def load() -> types.ModuleType:
        module = sys.modules.get("solution")
        if module is not None:
            return module
        module = types.ModuleType("solution")
        module.__file__ = "solution.py"  # no such file: frames of the code still say where they are
        return run_in(module)

    def reload() -> types.ModuleType:
        module = sys.modules.get("solution")
        return load() if module is None else run_in(module)

    return {"import": lambda: seen(load()), "reload": lambda: seen(reload())}


def _import_through(wire: dict[str, Any], code_control: socket.socket) -> None:
    """``import solution`` in this process gives proxies of the code's process (``wire.SolutionFinder``); the
    code's calls back into the tests' objects are served in threads of their own."""
    code = wire["Peer"]("d", code_control, _anything)
    try:  # a lost code process makes every test's import fail, which says so
        code.hand_over(b"main")
    except wire["Lost"]:
        pass

    def serve_callbacks() -> None:
        while (handed := code.accept()) is not None:
            code.serve_in_thread(handed[1])

    wire["spawn"](serve_callbacks)
    sys.meta_path.insert(0, wire["SolutionFinder"](code, "solution.py"))
