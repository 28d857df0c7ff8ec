"""Issue 35 through the real CLI: what a battle needs is checked before it starts, only agents are battled,
refusals write nothing, `score` and `battle` agree, and counts read as English.

Each case asserts the exact exit code and the first line of output, and that a refusal left nothing behind.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_bad_inputs import _ledger, cli, one_line
from tiers import sampled

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


@pytest.mark.parametrize(("handler", "answer"), sampled(
    [(_Files, "HTTP 501 Unsupported method"), (_HtmlEverywhere, "HTTP 405 Method Not Allowed, an HTML page")],
    ["_Files-HTTP 501 Unsupported method", "_HtmlEverywhere-HTTP 405 Method Not Allowed, an HTML page"],
    keep={"_HtmlEverywhere-HTTP 405 Method Not Allowed, an HTML page"}, several=True))
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


# -- point 5: refusals write nothing ---------------------------------------------------------------------------


@pytest.mark.slow  # starts Ray's client twice, about 9 s; tests/campaign/test_ray_executor.py covers Ray in both tiers
def test_a_refused_ray_campaign_leaves_nothing_and_is_refused_the_same_way_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = ("campaign", "run", "--mock", "good", "--tasks", "rate-limiter", "--executor", "ray",
               "--ray-address", "127.0.0.1:1", "--home", str(home))
    first = one_line(cli(*command), 1, "the campaign cannot start (nothing was recorded): ")
    assert not home.exists()
    assert one_line(cli(*command), 1, "the campaign cannot start") == first  # not "already exists"
    assert not home.exists()


@contextlib.contextmanager
def _silent_port() -> Iterator[str]:
    """A port that takes connections (the kernel queues them) and never says a word."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/"


@pytest.mark.skipif(find_spec("ray") is None, reason="the Ray extra is not installed (pip install 'logomesh[ray]')")
@pytest.mark.parametrize(("server", "why"), [
    pytest.param(lambda: _serving(_Files), "its answer is not gRPC", id="web-server",
                 marks=pytest.mark.slow),  # starts Ray's client twice, about 11 s: the full tier's
    pytest.param(_silent_port, "it said nothing within 5 s", id="silent-port",
                 marks=pytest.mark.slow),  # waits 5 s for a greeting, twice: about 15 s
])
def test_a_ray_address_where_something_else_answers_is_refused_before_anything_is_written(
        tmp_path: Path, server: Callable[[], contextlib.AbstractContextManager[str]], why: str) -> None:
    home = tmp_path / "home"
    with server() as url:
        address = urlsplit(url).netloc
        command = ("campaign", "run", "--mock", "good", "--tasks", "rate-limiter", "--executor", "ray",
                   "--ray-address", address, "--home", str(home))
        first = one_line(cli(*command), 1, "the campaign cannot start (nothing was recorded): ")
        assert first == (f"logomesh: error: the campaign cannot start (nothing was recorded): {address} answers, "
                         f"but not as a Ray cluster ({why}): check --ray-address (the head node's HOST:PORT, "
                         "6379 by default)")
        assert not home.exists()
        assert one_line(cli(*command), 1, "the campaign cannot start") == first  # not "already exists"
        assert not home.exists()


def test_workers_beyond_the_limit_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one_line(cli("campaign", "run", "--mock", "good", "--tasks", "rate-limiter", "--workers", "100000",
                 "--home", str(home)), 2,
             "--workers 100000 is more than the limit of 256 battles at once: give a number from 1 to 256")
    assert not home.exists()


def test_export_refuses_a_non_empty_folder_that_is_not_an_export(tmp_path: Path) -> None:
    home = _ledger(tmp_path / "h", 1)
    out = tmp_path / "photos"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"jpeg")
    one_line(cli("export", "dboms", "--home", str(home), "--out", str(out)), 1,
             f"{out} is not empty and not an export (it holds 'holiday.jpg', no index.json): "
             "choose an empty or new --out")
    assert sorted(p.name for p in out.iterdir()) == ["holiday.jpg"]
    done = cli("export", "dboms", "--home", str(home), "--out", str(tmp_path / "new"))
    assert done.returncode == 0 and done.stdout.startswith("exported 1 bundle (tree size 1) to "), done.stdout
    again = cli("export", "dboms", "--home", str(home), "--out", str(tmp_path / "new"))  # its own export: refreshed
    assert again.returncode == 0, again.stderr


def test_score_refuses_a_module_without_the_entry_point_as_a_battle_does(tmp_path: Path) -> None:
    submission = tmp_path / "sub.json"
    submission.write_text(json.dumps({"sourceCode": "def limiter():\n    return 1\n", "testCode": "",
                                      "rationale": "r"}))
    one_line(cli("score", "--task", "rate-limiter", "--submission", str(submission)), 2,
             f"{submission}: not scored: sourceCode holds no module defining `RateLimiter` (a battle records "
             "this as a failure at stage purple): give the module that defines it")


def test_a_json_error_says_at_once(tmp_path: Path) -> None:
    submission = tmp_path / "sub.json"
    submission.write_text('{"sourceCode": "a\tb"}')
    line = one_line(cli("score", "--task", "rate-limiter", "--submission", str(submission)), 2,
                    "submission is not valid JSON: Invalid control character at line 1 column 18")
    assert "at at" not in line


def test_a_campaign_of_one_repeat_says_one_repeat(tmp_path: Path) -> None:
    from logomesh.campaign.plan import Agent, CampaignPlan, save_plan

    home = _ledger(tmp_path / "h", 1)
    save_plan(home, CampaignPlan(campaign_id="c-one", agents=(Agent("good", mock_variant="good"),),
                                 task_ids=("rate-limiter",), repeat=1, seed=1))
    shown = cli("campaign", "report", "c-one", "--home", str(home))
    assert shown.returncode == 0, shown.stderr
    assert "1 agent × 1 task × 1 repeat. " in shown.stdout and "1 repeats" not in shown.stdout, shown.stdout
