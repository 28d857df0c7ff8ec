"""The answerer: the process that imports the submission and answers calls. Stdlib only.

Runs INSIDE the sandbox, started by the server as ``python3 -I -S -u -c
<BOOT>`` (the same neutral lines as the driver) with a config on stdin: the
submission's folder, the ``wire`` source and the number of its end of the
control socket. It holds nothing of the judge: no result channel, no nonce,
no ``observe``, no driver, no audit hook, nothing the host reads. Whatever
the code does to this process (rewrite it, fork it, dup2 over every fd it
has, print records) it can only change its answers, which the driver, in a
process of its own, records as what the code answered.

For a hidden suite or a probe it imports ``solution`` first and alone; for
the purple agent's own tests it loads ``runner.py`` (given in the config),
which imports the tests and, through them, the code, and answers ``imported``
and ``test <name>`` with what the tests did. Then it serves the driver's main
connection in its main thread (so code that needs the main thread has it)
and every other connection the driver hands over in a thread of its own
(``wire.Peer``). When the driver goes away, so does this process.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any


def run(config: dict[str, Any]) -> None:
    wire: dict[str, Any] = {"__name__": "wire"}
    exec(compile(config["wire"], "wire", "exec", dont_inherit=True), wire)
    control = socket.socket(fileno=int(config["control"]))
    exit_now = os._exit
    actions: dict[str, Any] = {"import": _import, "reload": _reload}
    suite: Any = None
    if "runner" in config:  # the purple's own tests: they import the code themselves (runner.py)
        runner: dict[str, Any] = {"__name__": "runner"}
        exec(compile(config["runner"], "runner", "exec", dont_inherit=True), runner)
        suite = runner["prepare"](config)
        actions.update(imported=suite.imported, test=suite.test)
    else:
        sys.path.append(config["sol_dir"])  # last, so nothing the code writes shadows a module
        sys.dont_write_bytecode = True
        try:  # noqa: SIM105 - the driver's own import asks again and records how it fails
            __import__("solution")
        except BaseException:
            pass
    peer = wire["Peer"]("a", control, _anything, actions)
    first = peer.accept()
    if first is None or first[0] != b"main":
        exit_now(0)
    main_connection = first[1]

    def accept_more() -> None:
        while (handed := peer.accept()) is not None:
            peer.serve_in_thread(handed[1])
        exit_now(0)  # the driver is gone

    wire["spawn"](accept_more)
    if suite is None:
        peer.serve(main_connection)
    else:
        suite.serve(lambda: peer.serve(main_connection))
    exit_now(0)


def _anything(op: str, name: str) -> bool:
    return True  # the code's own objects: whatever the driver asks, the code answers


def _import() -> Any:
    return __import__("solution")


def _reload() -> Any:
    import importlib

    return importlib.reload(sys.modules["solution"])
