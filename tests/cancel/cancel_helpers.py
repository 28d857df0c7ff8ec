"""What the cancel tests (and benchmarks/console_bench.py) share: agents that keep a battle busy in each stage.

* ``hanging_purple``: an HTTP server on loopback that reads the request and never answers;
* ``held_review``: an LLM endpoint for the scoring stage's review that answers only once the test lets it;
* ``purple_serving``: the real mock purple agent, answering battle ids from a folder of submissions
  (``TASK:VARIANT`` ids fall back to the task library's labelled submissions);
* ``BoxSpy``: wraps ``logomesh.sandbox.open_sandbox`` to note each real box a battle opens;
* ``Trigger``: an event sink that cancels the battle's token once a chosen event arrives.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ledger.keys import create_key
from logomesh.cancel import CancelToken
from logomesh.events import Event, MctsNodeAdded, StageStarted
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import start_in_thread
from logomesh.sandbox.base import Sandbox

HANG_GUARD_S = 120.0  # only catches a hang: a hanging agent would hold its battle 3600 s (PURPLE_WAIT_S); a
# cancel takes about a second, which benchmarks/console_bench.py measures. Elsewhere the tests prove the stop by
# events (no test result, finding or search node after the cancel; the box killed from outside), not the clock.
PURPLE_WAIT_S = 3600.0  # the purple timeout of a battle cancelled while the agent hangs: only the cancel ends it
REVIEW_WAIT_S = 3600.0  # the review timeout (--llm-timeout, its largest) of a battle whose review is held

SLEEPER = {  # its import never returns: the hidden suite waits on it until the box is killed
    "sourceCode": "import time\n\ntime.sleep(600)\n\n\nclass RateLimiter:\n    pass\n",
    "testCode": "",
    "rationale": "A rate limiter.",
}


def make_home(root: Path) -> Path:
    home = root / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"cancel-tests").digest())
    return home


@contextlib.contextmanager
def hanging_purple() -> Iterator[str]:
    """A purple agent that publishes its card (so the pre-flight passes) and never answers a task; yields
    its URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)
            threading.Thread(target=answer_cards, args=(conn,), daemon=True).start()

    def answer_cards(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            conn.settimeout(10)
            if conn.recv(4096).startswith(b"GET "):  # the card; a task (POST) is never answered
                card = json.dumps({"name": "hanging", "protocolVersion": "0.3.0"}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (len(card), card))
                conn.close()

    thread = threading.Thread(target=serve, daemon=True, name="hanging-purple")
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        listener.close()


class HeldReview:
    """What ``held_review`` yields: the endpoint's URL, and ``release`` to let its held requests be answered."""

    def __init__(self, url: str, release: threading.Event) -> None:
        self.url = url
        self.release = release


@contextlib.contextmanager
def held_review() -> Iterator[HeldReview]:
    """An OpenAI-compatible ``/chat/completions`` endpoint (``--llm-base-url``) that holds every request until
    ``release`` is set (at the latest when the block ends), then answers "no adjustment".

    Scoring asks the review last and cannot end without its reply (a timeout counts as one: give the battle
    ``REVIEW_WAIT_S``), so a battle reviewed here is still scoring until the test releases it.
    """
    release = threading.Event()
    reply = json.dumps({"choices": [{"message": {
        "content": json.dumps({"rationale": 0, "architecture": 0, "logic": 0})}}]}).encode()

    class Held(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            release.wait(HANG_GUARD_S)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: no access log on the test output
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Held)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="held-review")
    thread.start()
    try:
        yield HeldReview(f"http://127.0.0.1:{server.server_address[1]}/v1", release)
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def purple_serving(folder: Path, submissions: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The mock purple agent answering ``battle_id -> submission``; yields its URL."""
    folder.mkdir(parents=True, exist_ok=True)
    for battle_id, body in submissions.items():
        (folder / f"{battle_id}.json").write_text(json.dumps(body), encoding="utf-8")
    with start_in_thread(mock_app_factory(MockResponses(folder))) as server:
        yield server.url


class BoxSpy:
    """Stands in for ``logomesh.sandbox.open_sandbox``: opens the real box and notes it, for the checks."""

    def __init__(self, real: Callable[..., Sandbox]) -> None:
        self._real = real
        self.boxes: list[tuple[str, str]] = []  # (backend, container id or "")
        self.closed_from_outside: list[bool] = []  # per close: made by another thread than the one that opened it
        self.opened = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Sandbox:
        box = self._real(*args, **kwargs)
        self.boxes.append((box.backend, str(getattr(box, "container_id", ""))))
        opener, close = threading.get_ident(), box.close

        def noted_close() -> None:
            self.closed_from_outside.append(threading.get_ident() != opener)
            close()

        box.close = noted_close  # type: ignore[method-assign]  # on this one instance
        self.opened.set()
        return box

    def killed_from_outside(self) -> bool:
        """The first box was first closed by another thread while its battle waited on it: a cancel's kill."""
        return self.closed_from_outside[:1] == [True]


def box_gone(backend: str, container: str) -> bool:
    """Whether a box is gone: its container removed, or no bubblewrap process of ours alive."""
    if backend == "docker":
        found = subprocess.run(["docker", "ps", "-aq", "--no-trunc", "--filter", f"id={container}"],
                               capture_output=True, text=True, timeout=30)
        return container != "" and found.returncode == 0 and found.stdout.strip() == ""
    return not bwrap_children()


def bwrap_children() -> list[int]:
    """The bubblewrap processes this test process started that are still alive (not zombies)."""
    alive = []
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z" and os.path.basename(cmdline) == b"bwrap":
            alive.append(int(entry.name))
    return alive


class Trigger:
    """An event sink that keeps every event and cancels ``token`` once ``when`` matches one.

    With ``delay_s`` the cancel comes from another thread that long after the match (the battle is then
    busy inside the stage, as a user's cancel would find it); without, it is made inside the sink.
    ``after`` is an extra wait (an ``Event``) before the delay starts, such as "the box is open".
    """

    def __init__(self, token: CancelToken, when: Callable[[Event], bool], delay_s: float | None = None,
                 after: threading.Event | None = None) -> None:
        self.token = token
        self.when = when
        self.delay_s = delay_s
        self.after = after
        self.events: list[Event] = []
        self.cancelled_at: float | None = None
        self.cancelled_after: int | None = None  # events seen when the cancel was made
        self._fired = False

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if self._fired or not self.when(event):
            return
        self._fired = True
        if self.delay_s is None:
            self._cancel()
        else:
            threading.Thread(target=self._later, daemon=True).start()

    def _later(self) -> None:
        if self.after is not None:
            self.after.wait(120)
        time.sleep(self.delay_s or 0.0)
        self._cancel()

    def _cancel(self) -> None:
        self.cancelled_after = len(self.events)
        self.cancelled_at = time.monotonic()
        self.token.cancel()


def nodes_after_cancel(trigger: Trigger) -> int:
    """Search nodes added after the cancel: at most the one whose probe was in flight, if the search stopped."""
    assert trigger.cancelled_after is not None
    return sum(isinstance(e, MctsNodeAdded) for e in trigger.events[trigger.cancelled_after:])


class SearchAfterCancel:
    """Wraps a battle's event sink: counts the search nodes it adds once its token is cancelled.

    A search that stops adds at most the node whose probe was in flight; left alone, lru-cache's plays ~26."""

    def __init__(self) -> None:
        self.nodes = 0

    def wrap(self, token: CancelToken, emit: Callable[[Event], None]) -> Callable[[Event], None]:
        def noted(event: Event) -> None:
            if isinstance(event, MctsNodeAdded) and token.cancelled:
                self.nodes += 1
            emit(event)

        return noted


def stage_is(name: str) -> Callable[[Event], bool]:
    return lambda event: isinstance(event, StageStarted) and event.stage == name


def search_started(event: Event) -> bool:
    """The red agent's tree has a node below the root: a probe is about to run."""
    return isinstance(event, MctsNodeAdded) and event.node_id >= 1
