"""Crash safety (SIGKILL mid-stream) and four processes appending at once, with real processes."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ledger import Ledger
from ledger.verify import verify_ledger

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from ledger import AppendRequest, Ledger

    home, prefix, count, batch = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with Ledger.open(home) as led:
        i = 0
        while i < count:
            reqs = [AppendRequest(f"{prefix}-{j}", {"battle_id": f"{prefix}-{j}", "status": "scored",
                                                     "cis_score": round(j / 1000, 3)},
                                  {"purple_response": f"{prefix} {j}".encode(), "task_spec": b"spec"},
                                  {"purple_agent": prefix})
                    for j in range(i, min(count, i + batch))]
            for receipt in led.append_many(reqs):
                print(receipt.battle_id, receipt.sequence, flush=True)
            i += batch
""")


def _spawn(home: Path, prefix: str, count: int, batch: int = 1) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", WRITER, str(home), prefix, str(count), str(batch)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


@pytest.mark.slow
def test_four_processes_appending_500_each_make_one_tree(tmp_path: Path) -> None:
    home = tmp_path / "home"  # no key yet: the writers race to create it too
    procs = [_spawn(home, f"p{n}", 500) for n in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    sequences = sorted(int(line.split()[1]) for out, _ in outputs for line in out.splitlines())
    assert sequences == list(range(2000))  # one total order, no sequence handed out twice
    report = verify_ledger(home)
    assert report.ok, report.problems[:5]
    assert report.size == 2000 and report.checkpoints == 2000
    with Ledger.open(home) as led:
        sizes = [c.size for c in led.checkpoints()]
    assert sizes == list(range(1, 2001))  # each checkpoint extends the one before: never a fork
    assert len(list((home / "keys").iterdir())) == 2


def _acknowledged_ids(text: str, prefix: str) -> set[str]:
    """Ids from whole receipt lines only: a line cut short by the kill is not a receipt we can read."""
    pattern = re.compile(rf"^({re.escape(prefix)}-\d+) \d+\n$")
    return {m.group(1) for line in text.splitlines(keepends=True) if (m := pattern.match(line))}


def _kill_midstream(home: Path, prefix: str, batch: int, rng: random.Random) -> set[str]:
    """Start a writer, let it acknowledge a few appends, SIGKILL it at a random moment; the acknowledged ids."""
    proc = _spawn(home, prefix, 10_000, batch)
    acknowledged: set[str] = set()
    target = rng.randrange(5, 25)
    assert proc.stdout is not None
    while len(acknowledged) < target:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "writer died"
        acknowledged.update(_acknowledged_ids(line, prefix))
    time.sleep(rng.uniform(0, 0.02))
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    acknowledged.update(_acknowledged_ids(out, prefix))
    assert proc.returncode == -signal.SIGKILL
    return acknowledged


def test_sigkill_midstream_loses_nothing_acknowledged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rng = random.Random(9162)
    acknowledged: set[str] = set()
    for round_no in range(4):
        acknowledged |= _kill_midstream(home, f"r{round_no}", batch=1 + 3 * (round_no % 2), rng=rng)
        report = verify_ledger(home)
        assert report.ok, report.problems[:5]
    with Ledger.open(home) as led:
        stored = {e.battle_id for e in led.entries()}
        assert acknowledged <= stored
        led.append("after-crash", {"battle_id": "after-crash", "status": "failed"}, {}, {})
    final = verify_ledger(home)
    assert final.ok and final.size == len(stored) + 1
    history = (home / "checkpoints" / "history.jsonl").read_text().splitlines()
    assert json.loads(history[-1])["size"] == final.size
