"""Boxes kept warm for a campaign worker (``sandbox/warm.py``): one fresh box per battle, the next opened while
the current one serves, none left open when the worker stops. Real boxes, both backends."""

from __future__ import annotations

import pytest

from logomesh.sandbox import Sandbox
from logomesh.sandbox.warm import fresh_box, keep_warm

KINDS = [pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)]


def hostname(box: Sandbox) -> str:
    run = box.run_script({}, "import socket\nprint(socket.gethostname())\n")
    assert run.exit_code == 0, run.stderr
    return run.stdout.strip()


def accepts_work(box: Sandbox) -> bool:
    try:
        return box.run_script({}, "print(1)\n").exit_code == 0
    except (OSError, ValueError):  # bubblewrap: the closed box's pipe
        return False


@pytest.mark.parametrize("kind", KINDS)
def test_a_warm_worker_gets_a_fresh_box_per_battle_opened_ahead_and_leaves_none_open(kind: str) -> None:
    with keep_warm(kind) as boxes:
        first = fresh_box(kind)
        ahead = boxes._next  # opening in its thread while the first box serves its battle
        assert ahead is not None
        second = fresh_box(kind)
        assert ahead.done() and ahead.result() is second  # the battle got the box opened ahead
        names = {hostname(first), hostname(second)}
        first.close()
        second.close()
        waiting = boxes._next
        assert waiting is not None
        left = waiting.result()
        assert accepts_work(left)  # up and waiting for a battle that never comes
    assert len(names) == 2  # two boxes, not one reused
    assert not accepts_work(left)  # closed with the worker
    outside = fresh_box(kind)  # no worker keeps boxes warm now: opened on demand, nothing opened ahead
    try:
        assert boxes._next is None and hostname(outside) not in names
    finally:
        outside.close()


def test_a_box_that_cannot_open_raises_as_opening_it_would() -> None:
    with keep_warm("no-such-kind") as boxes:
        assert boxes._next is None
        with pytest.raises(Exception, match="unknown sandbox"):
            fresh_box("no-such-kind")  # the warm path raises as opening it would
