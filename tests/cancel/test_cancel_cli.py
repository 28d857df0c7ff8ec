"""Ctrl-C on ``logomesh battle run``: a real CLI process gets SIGINT, stops its battle and records it cancelled.

What these add to test_cancel_library (which proves by events that each stage stops): Ctrl-C reaches the
battle's token, the process exits 130 without a traceback, the entry says cancelled in its stage, and no box
is left. The wait for the process to exit is only a hang guard (``HANG_GUARD_S``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cancel_helpers import HANG_GUARD_S, PURPLE_WAIT_S, REVIEW_WAIT_S, hanging_purple, held_review, make_home

from ledger import Ledger
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import start_in_thread


class Battle:
    """``logomesh battle run`` in a subprocess, its stderr read line by line as it comes."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "logomesh", "battle", "run", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines):
            if self.proc.poll() is not None:  # it may have written ``text`` just before ending: read it all
                self._reader.join(timeout=5)
                assert any(text in line for line in self.lines), f"the battle ended before {text!r}: {self.lines}"
                return
            assert time.monotonic() < deadline, f"no {text!r} on stderr: {self.lines}"
            time.sleep(0.05)

    def interrupt(self) -> int:
        """Send SIGINT; the exit code (a process still running after ``HANG_GUARD_S`` fails the test)."""
        self.ctrl_c()
        return self.exit_code()

    def ctrl_c(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def exit_code(self) -> int:
        """The exit code, once the process ends (one still running after ``HANG_GUARD_S`` fails the test)."""
        code = self.proc.wait(timeout=HANG_GUARD_S)
        self._reader.join(timeout=5)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def battle(*args: str, env: dict[str, str] | None = None) -> Iterator[Battle]:
    running = Battle(*args, env=env)
    try:
        yield running
    finally:
        running.close()


def _children_named(pid: int, name: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if ppid == str(pid) and os.path.basename(argv0) == name:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _assert_recorded_cancelled(home: Path, battle_id: str, stage: str, code: int, lines: list[str]) -> dict[str, str]:
    """The exit code, the one line and the entry all say: cancelled in ``stage``; the entry's attributes."""
    assert code == 130, lines
    assert not any("Traceback" in line for line in lines), lines
    assert f"logomesh: battle cancelled at stage {stage}; recorded as cancelled" in lines
    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    assert stored is not None
    assert (stored.result["status"], stored.result["stage"]) == ("cancelled", stage)
    return stored.attributes


def test_ctrl_c_while_the_purple_agent_is_answering(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with hanging_purple() as url, battle("--task", "rate-limiter", "--purple", url, "--battle-id", "cli-cancel",
                                         "--purple-timeout", str(PURPLE_WAIT_S), "--no-red",
                                         "--home", str(home)) as running:
        running.wait_for("stage: purple")
        time.sleep(0.3)  # the request is on the wire
        code = running.interrupt()  # only the abandoned request ends this battle within the hour
    _assert_recorded_cancelled(home, "cli-cancel", "purple", code, running.lines)


@pytest.mark.bwrap
@pytest.mark.slow  # full tier: the library and console cancels kill the box mid-search in the fast tier
def test_ctrl_c_during_the_red_search_kills_the_box(tmp_path: Path) -> None:
    """Also ``--sandbox auto`` with Docker unreachable: the battle runs in bubblewrap."""
    home = make_home(tmp_path)
    battle_id = "lru-cache:no-lock:cli-cancel"
    no_docker = {"DOCKER_HOST": f"unix://{tmp_path}/dead.sock"}
    with start_in_thread(mock_app_factory(MockResponses())) as purple, \
            battle("--task", "lru-cache", "--purple", purple.url, "--battle-id", battle_id, "--sandbox", "auto",
                   "--red-budget", "600", "--home", str(home), env=no_docker) as running:
        running.wait_for("stage: red")
        time.sleep(0.5)  # probes are running in the box
        boxes = _children_named(running.proc.pid, b"bwrap")
        assert boxes, "no bubblewrap box under the battle process"
        code = running.interrupt()
    attributes = _assert_recorded_cancelled(home, battle_id, "red", code, running.lines)
    assert attributes["sandbox_backend"] == "bwrap"
    assert not [pid for pid in boxes if _alive(pid)]


@pytest.mark.bwrap
def test_ctrl_c_while_scoring_exits_cleanly(tmp_path: Path) -> None:
    """Scoring is left to finish on its own thread; the process must still exit 130, not abort in the model.

    The Ctrl-C goes as scoring starts (a fresh process loads the encoder then). Scoring ends with the LLM
    review (``--llm-base-url``), which the test holds until the battle has said it is cancelled: however late
    the signal lands on a loaded machine, scoring cannot have finished first. Then the abandoned scoring
    thread gets its reply and ends, and the process with it.
    """
    home = make_home(tmp_path)
    battle_id = "rate-limiter:good:cli-cancel"
    with held_review() as review, start_in_thread(mock_app_factory(MockResponses())) as purple, \
            battle("--task", "rate-limiter", "--purple", purple.url, "--battle-id", battle_id, "--sandbox", "bwrap",
                   "--no-red", "--llm-base-url", review.url, "--llm-model", "held", "--llm-timeout",
                   str(REVIEW_WAIT_S), "--home", str(home)) as running:
        running.wait_for("stage: scoring")
        running.ctrl_c()
        running.wait_for("logomesh: battle cancelled at stage scoring")
        review.release.set()  # the scoring thread, abandoned, may finish: the interpreter waits for it
        code = running.exit_code()
    _assert_recorded_cancelled(home, battle_id, "scoring", code, running.lines)
