"""The harness's real wire (``harness/wire.py``) between two peers over a socketpair, for host-side tests."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from logomesh.sandbox.client import harness_source


def load_wire() -> dict[str, Any]:
    """``wire.py`` as the harness runs it: its own namespace, compiled from the shipped source."""
    namespace: dict[str, Any] = {"__name__": "wire"}
    exec(compile(harness_source("wire.py"), "wire", "exec", dont_inherit=True), namespace)
    return namespace


WIRE = load_wire()


@contextmanager
def wire_pair(imported: Callable[[], Any]) -> Iterator[tuple[Any, Any]]:
    """(the driver's peer, what the answerer's ``import`` action returns, as the driver sees it)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    answerer = WIRE["Peer"]("a", theirs, lambda op, name: True, {"import": imported})
    driver = WIRE["Peer"]("d", ours, lambda op, name: op == "call")

    def serve(peer: Any) -> None:
        while (handed := peer.accept()) is not None:
            peer.serve_in_thread(handed[1])

    for peer in (answerer, driver):
        threading.Thread(target=serve, args=(peer,), daemon=True).start()
    try:
        yield driver, driver.ask(WIRE["Message"]("import"))
    finally:
        ours.close()
        theirs.close()
