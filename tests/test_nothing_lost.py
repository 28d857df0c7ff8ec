"""Issue 35 through the real CLI: what a battle needs is checked before it starts, only agents are battled,
refusals write nothing, `score` and `battle` agree, and counts read as English.

Each case asserts the exact exit code and the first line of output, and that a refusal left nothing behind.
"""

from __future__ import annotations

import contextlib
import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bad_inputs import cli, one_line

# -- point 2: everything a battle records is checked before it starts ----------------------------------------


@pytest.mark.parametrize(("home", "why"), [
    ("/proc/logomesh-home", "/proc is not writable (No such file or directory)"),
    ("/sys/logomesh-home", "/sys is not writable ("),
])
def test_a_home_under_proc_or_sys_is_refused_before_the_battle(home: str, why: str) -> None:
    proc = cli("battle", "run", "--task", "rate-limiter", "--mock", "good", "--home", home)
    line = one_line(proc, 1, f"cannot create the state folder {home}: {why}")
    assert line.endswith("choose a writable folder with --home or $LOGOMESH_HOME")
    assert "purple" not in proc.stderr.replace(line, "")  # no stage ran: the line above is all there is


@pytest.fixture
def tiny_folder(tmp_path: Path) -> Iterator[Path]:
    """A writable filesystem of 1 MiB (a tmpfs). Skips where mounting is refused."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True,
                             timeout=30, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, timeout=30, check=False)


def test_a_home_without_room_for_the_record_is_refused_before_the_battle(tiny_folder: Path) -> None:
    home = tiny_folder / "home"
    one_line(cli("battle", "run", "--task", "rate-limiter", "--mock", "good", "--home", str(home)), 1,
             f"the state folder {home} has 1.0 MiB free, less than the 64 MiB a battle's record needs")
    assert list(tiny_folder.iterdir()) == []


# -- point 4: only agents are battled ------------------------------------------------------------------------


class _HtmlEverywhere(http.server.BaseHTTPRequestHandler):
    """A web site: every GET is an HTML page (the 'card' too), POST is not allowed."""

    def do_GET(self) -> None:
        body = b"<!DOCTYPE html><html><body>welcome</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.send_error(405, "Method Not Allowed")

    def log_message(self, format: str, *args: object) -> None:
        return None


class _Files(http.server.SimpleHTTPRequestHandler):
    """``python -m http.server``: no agent card (404), POST unsupported (501)."""

    def log_message(self, format: str, *args: object) -> None:
        return None


@contextlib.contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.parametrize(("handler", "answer"), [
    (_Files, "HTTP 501 Unsupported method"),
    (_HtmlEverywhere, "HTTP 405 Method Not Allowed, an HTML page"),
])
def test_a_plain_web_server_is_not_battled(tmp_path: Path, handler: type[http.server.BaseHTTPRequestHandler],
                                           answer: str) -> None:
    home = tmp_path / "home"
    with _serving(handler) as url:
        battle = cli("battle", "run", "--task", "rate-limiter", "--purple", url, "--home", str(home))
        campaign = cli("campaign", "run", "--purple", f"site={url}", "--tasks", "rate-limiter", "--home", str(home))
    line = one_line(battle, 1, f"{url} is not an A2A agent: it publishes no agent card at "
                               "/.well-known/agent-card.json and answers a JSON-RPC call with ")
    assert answer in line and line.endswith("(for instance one started with 'logomesh purple serve --mock')")
    one_line(campaign, 1, f"the campaign cannot start (nothing was recorded): {url} is not an A2A agent")
    assert not home.exists()  # nothing recorded, not even an empty ledger
