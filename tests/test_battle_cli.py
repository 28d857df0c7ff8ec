"""The battle command end to end: real CLI process, real Docker sandbox, real SQLite ledger."""

from __future__ import annotations

import http.server
import json
import re
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiers import sampled

from ledger import Ledger
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import start_in_thread


def logomesh(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "logomesh", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _assert_one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("logomesh: error:")]
    assert len(error_lines) == 1, proc.stderr
    assert needle in error_lines[0]


def _assert_usage_error(proc: subprocess.CompletedProcess[str], needle: str, home: Path) -> None:
    """Exit 2, one line naming the problem, and nothing written: not even the state folder."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("logomesh: error:")]
    assert len(error_lines) == 1 and needle in error_lines[0], proc.stderr
    assert not home.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rows(home: Path) -> list[dict[str, object]]:
    with sqlite3.connect(home / "battles.db") as db:
        return [json.loads(raw) for (raw,) in db.execute("SELECT raw_result FROM battles ORDER BY rowid")]


USAGE_ERRORS = [
    (["--task", "no-such-task", "--mock", "good"], "unknown task 'no-such-task'"),
    (["--task", "no-such-task", "--purple", "http://127.0.0.1:9"], "unknown task 'no-such-task'"),
    (["--task", "rate-limiter", "--mock", "nope"], "has no submission 'nope'"),
    (["--task", "rate-limiter", "--purple", "ftp://x"], "must start with http:// or https://"),
    (["--task", "rate-limiter", "--purple", "localhost:19103"],
     "--purple 'localhost:19103' has no scheme: write http://localhost:19103"),
    (["--task", "rate-limiter", "--purple", "http://:9009"], "names no host"),
    (["--task", "rate-limiter"], "name exactly one purple agent"),
    (["--task", "rate-limiter", "--mock", "good", "--purple", "http://127.0.0.1:9"], "exactly one purple agent"),
    (["--task", "rate-limiter", "--mock", "good", "--stream"], "--stream goes with --purple"),
    (["--task", "rate-limiter", "--mock", "good", "--sandbox", "host"], "--sandbox must be one of auto, docker"),
    (["--task", "rate-limiter", "--mock", "good", "--purple-timeout", "0"],
     "--purple-timeout must be a finite, positive number"),
    (["--task", "rate-limiter", "--mock", "good", "--purple-timeout", "inf"],
     "--purple-timeout must be a finite, positive number of seconds, not inf"),
    (["--task", "rate-limiter", "--mock", "good", "--red-budget", "nan"],
     "--red-budget must be a finite, positive number of seconds, not nan"),
    (["--task", "rate-limiter", "--mock", "good", "--red-budget", "-inf"], "--red-budget must be a finite"),
    (["--task", "rate-limiter", "--mock", "good", "--battle-id", "x" * 300], "--battle-id: bad battle id"),
    (["--task", "rate-limiter", "--mock", "good", "--battle-id", "x" * 150], "use 1-128 letters"),
    (["--task", "rate-limiter", "--mock", "good", "--battle-id", "a/b"], "--battle-id: bad battle id"),
    (["--task", "rate-limiter", "--mock", "good", "--protocol", "2.0"], "--protocol must be 0.3 or 1.0"),
    (["--task", "rate-limiter", "--mock", "good", "--llm-model", "m"], "give both --llm-base-url and --llm-model"),
    (["--task", "rate-limiter", "--mock", "good", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m",
      "--llm-timeout", "0"], "--llm-timeout must be in (0, 3600]"),
]
USAGE_IDS = [f"args{i}-{needle}" for i, (_, needle) in enumerate(USAGE_ERRORS)]  # the ids pytest gave them


# One of each kind in the fast tier: an unknown task, a bad URL, not one purple agent, a bad number.
@pytest.mark.parametrize(("args", "needle"),
                         sampled(USAGE_ERRORS, USAGE_IDS, keep=[USAGE_IDS[i] for i in (0, 3, 6, 12)], several=True))
def test_usage_errors_exit_2_and_write_nothing(tmp_path: Path, args: list[str], needle: str) -> None:
    proc = logomesh("battle", "run", *args, home=tmp_path / "home")
    _assert_usage_error(proc, needle, tmp_path / "home")


def test_a_battle_id_already_recorded_is_a_usage_error(tmp_path: Path) -> None:
    from logomesh.battle.record import failed_played
    from logomesh.battle.request import BattleRequest
    from logomesh.battle.spine import record_battle

    request = BattleRequest(task_id="rate-limiter", battle_id="b1", seed=0, home=tmp_path, mock_variant="good")
    record_battle(tmp_path, "b1", failed_played(request, "engine", "recorded earlier"))
    again = logomesh("battle", "run", "--task", "rate-limiter", "--mock", "good", "--battle-id", "b1", home=tmp_path)
    assert again.returncode == 2 and "already in the ledger" in again.stderr, again.stderr
    assert len(_rows(tmp_path)) == 1


def _assert_refused_before_start(proc: subprocess.CompletedProcess[str], needle: str, home: Path) -> None:
    """Exit 1, one line saying the battle cannot start and why, and nothing recorded: not even the state folder."""
    _assert_one_line_error(proc, "the battle cannot start")
    assert needle in proc.stderr, proc.stderr
    assert not home.exists()


def test_unreachable_purple_is_refused_and_not_recorded(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    proc = logomesh("battle", "run", "--task", "rate-limiter", "--purple", url, "--no-red",
                    home=tmp_path / "home")
    _assert_refused_before_start(proc, f"the purple agent at {url} does not answer", tmp_path / "home")


class _CardHandler(http.server.BaseHTTPRequestHandler):
    """An agent whose card offers A2A 0.3 only (and which answers nothing else)."""

    def do_GET(self) -> None:
        body = json.dumps({"name": "old", "protocolVersion": "0.3.0", "url": "http://127.0.0.1:1/"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


def test_a_protocol_the_card_does_not_offer_is_refused_naming_the_offered_one(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CardHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        proc = logomesh("battle", "run", "--task", "rate-limiter", "--purple", url, "--protocol", "1.0",
                        "--no-red", home=tmp_path / "home")
    finally:
        server.shutdown()
        server.server_close()
    _assert_refused_before_start(proc, "offers A2A protocol 0.3 on its card, not 1.0: pass --protocol 0.3",
                                 tmp_path / "home")


@pytest.fixture
def silent_agent() -> Iterator[str]:
    """An HTTP address that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    listener.close()


def test_an_agent_that_never_answers_its_card_is_refused_within_the_purple_timeout(
    tmp_path: Path, silent_agent: str
) -> None:
    proc = logomesh("battle", "run", "--task", "rate-limiter", "--purple", silent_agent, "--purple-timeout", "1.5",
                    "--no-red", home=tmp_path / "home")
    _assert_refused_before_start(proc, "no complete answer within 1.5 s", tmp_path / "home")


@pytest.mark.docker
@pytest.mark.parametrize(("protocol", "method"),
                         sampled([("1.0", b'"SendStreamingMessage"'), ("0.3", b'"message/stream"')],
                                 ['1.0-"SendStreamingMessage"', '0.3-"message/stream"'],
                                 keep={'1.0-"SendStreamingMessage"'}, several=True))
def test_stream_asks_the_purple_agent_over_sse(tmp_path: Path, protocol: str, method: bytes) -> None:
    with start_in_thread(mock_app_factory(MockResponses())) as purple:
        proc = logomesh("battle", "run", "--task", "rate-limiter", "--purple", purple.url, "--battle-id",
                        "rate-limiter:good:stream", "--stream", "--protocol", protocol, "--no-red", "--json",
                        home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "scored"
    with Ledger.open(tmp_path) as led:
        stored = led.get("rate-limiter:good:stream")
    assert stored is not None and method in stored.inputs["purple_request"]


@pytest.mark.docker
@pytest.mark.slow  # full tier: CI battles the README task too; the fast tier keeps the timed battle
def test_good_and_flawed_battles_run_in_docker_and_land_in_the_ledger(tmp_path: Path) -> None:
    good = logomesh(
        "battle",
        "run",
        "--task",
        "rate-limiter",
        "--mock",
        "good",
        "--seed",
        "7",
        "--red-budget",
        "5",
        "--json",
        home=tmp_path,
    )
    assert good.returncode == 0, good.stderr
    result = json.loads(good.stdout)
    assert result["status"] == "scored"
    hidden = result["tests"]["hidden"]
    assert hidden["total"] >= 12 and hidden["passed"] == hidden["total"]
    assert result["testing_score"] == pytest.approx(0.85)
    assert 0.0 < result["cis_score"] <= 1.0
    assert "stage: sandbox" in good.stderr and "recorded as entry #" in good.stderr
    stages = result.pop("stage_seconds")  # beside the result, never in the signed bytes (checked below)
    assert set(stages) == {"start-up", "purple", "sandbox", "red", "scoring", "ledger"}
    assert all(seconds >= 0 for seconds in stages.values()) and stages["sandbox"] > 0

    flawed = logomesh(
        "battle",
        "run",
        "--task",
        "rate-limiter",
        "--mock",
        "fixed-window",
        "--seed",
        "7",
        "--no-red",
        "--json",
        home=tmp_path,
    )
    assert flawed.returncode == 0, flawed.stderr
    worse = json.loads(flawed.stdout)
    assert worse["tests"]["hidden"]["failed"] >= 1
    assert worse["testing_score"] < result["testing_score"]
    assert worse["cis_score"] < result["cis_score"]

    rows = _rows(tmp_path)
    assert [r["battle_id"] for r in rows] == [result["battle_id"], worse["battle_id"]]
    assert rows[0] == result  # what --json printed, less its stage timings, is what the ledger holds


@pytest.mark.docker
def test_a_battle_ends_by_saying_where_its_time_went(tmp_path: Path) -> None:
    done = logomesh("battle", "run", "--task", "rate-limiter", "--mock", "good", "--no-red", home=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("CIS ") and lines[1].startswith("recorded: entry #0")
    named = re.fullmatch(r"stages: start-up ([\d.]+) s · purple ([\d.]+) s · sandbox ([\d.]+) s · "
                         r"scoring ([\d.]+) s · ledger ([\d.]+) s · total ([\d.]+) s", lines[2])
    assert named is not None, lines[2]
    *parts, total = (float(value) for value in named.groups())
    assert total == pytest.approx(sum(parts), abs=0.03)  # each part rounded to 0.01 s
