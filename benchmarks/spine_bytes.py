"""Byte identity of the battle spine: record every kind of battle's bytes, then compare two recordings.

Usage: python benchmarks/spine_bytes.py --out DIR [--against DIR] [--sandbox docker|bwrap] [--no-cli]

Plays battles of every ending with fixed seeds into a ledger whose judge key (a fixed seed) and clock
(one microsecond per entry from a fixed instant) are fixed, so two runs of the same code give the same
bytes. For each battle it writes the result (canonical JSON), the signed entry (the DBOM leaf bytes the
ledger stores) and its event stream (the home folder's path replaced; no ``SandboxOutput``, whose chunks
follow the thread schedule inside the box). Then the ledger's summary columns and what ``verify ledger``
says (``ledger.txt``), the replay of each scored battle, ``logomesh score --json`` of one submission with
the red agent on, and ``logomesh calibrate --json`` of one task without it (``sql-select``: none of its
submissions has a verdict that follows the machine's load, as ``fib-recursive``'s ``naive-exponential``
does). A refactoring that claims "no change of behaviour" records before, records after with
``--against`` the first folder, and must print ``identical`` on every line.

The battles: scored with the red agent on and off; failed at the purple stage (nobody listens at the
URL) and at the sandbox stage (no such sandbox); cancelled as the purple, sandbox, red and scoring
stages start, and in the middle of the hidden suite (at its first test result, which kills the box).
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ledger import Ledger  # noqa: E402
from ledger.canonical import canonicalize  # noqa: E402
from ledger.keys import create_key  # noqa: E402
from logomesh.battle.replay import replay_battle  # noqa: E402
from logomesh.battle.request import BattleRequest  # noqa: E402
from logomesh.battle.spine import play_battle, record_battle  # noqa: E402
from logomesh.cancel import CancelToken  # noqa: E402
from logomesh.events import Event, SandboxOutput, StageStarted, TestResult  # noqa: E402
from logomesh.tasks import load_task  # noqa: E402

JUDGE_SEED = bytes(range(32))
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
DEAD_URL = "http://127.0.0.1:9/"  # the discard port: nothing listens, the connection is refused


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    task: str
    seed: int
    mock: str | None = "good"
    url: str | None = None
    red: bool = False
    red_budget_s: float = 1.0
    sandbox: str = ""  # "" = the run's --sandbox
    cancel_at: Callable[[Event], bool] | None = None


def _stage(name: str) -> Callable[[Event], bool]:
    return lambda event: isinstance(event, StageStarted) and event.stage == name


def _first_hidden_result(event: Event) -> bool:
    return isinstance(event, TestResult) and event.suite == "hidden"


CASES = (
    Case("scored-red-on", "fib-recursive", 7, mock="no-negative-check", red=True, red_budget_s=1.0),
    Case("scored-red-off", "rate-limiter", 3, mock="good"),
    Case("scored-red-off-flawed", "sql-select", 5, mock="interpolated-values"),
    Case("failed-purple", "fib-recursive", 1, mock=None, url=DEAD_URL),
    Case("failed-sandbox", "fib-recursive", 2, sandbox="nonesuch"),
    Case("cancelled-purple", "fib-recursive", 4, cancel_at=_stage("purple")),
    Case("cancelled-sandbox", "fib-recursive", 4, cancel_at=_stage("sandbox")),
    Case("cancelled-hidden", "fib-recursive", 4, cancel_at=_first_hidden_result),
    Case("cancelled-red", "fib-recursive", 4, red=True, cancel_at=_stage("red")),
    Case("cancelled-scoring", "fib-recursive", 4, cancel_at=_stage("scoring")),
)


def _event_text(event: Event, home: Path) -> str:
    fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}  # type: ignore[arg-type]
    return f"{type(event).__name__} {fields!r}".replace(str(home), "<home>")


def _play(case: Case, home: Path, led: Ledger, sandbox: str) -> tuple[str, dict[str, Any], list[str]]:
    token = CancelToken()
    events: list[str] = []

    def emit(event: Event) -> None:
        if not isinstance(event, SandboxOutput):  # how threads' output is cut into chunks is the scheduler's
            events.append(_event_text(event, home))
        if case.cancel_at is not None and case.cancel_at(event):
            token.cancel()

    request = BattleRequest(task_id=case.task, battle_id=case.name, seed=case.seed, home=home, purple_url=case.url,
                            mock_variant=case.mock, sandbox=case.sandbox or sandbox, red=case.red,
                            red_budget_s=case.red_budget_s, cancel=token)
    outcome = record_battle(home, case.name, play_battle(request, load_task(case.task), emit), emit, ledger=led)
    stored = led.get(case.name)
    assert stored is not None
    return stored.leaf_data.decode("utf-8"), outcome.result.to_json(), events


def _cli(args: list[str]) -> str:
    done = subprocess.run([sys.executable, "-m", "logomesh", *args], cwd=ROOT, capture_output=True, check=False)
    return f"exit {done.returncode}\n{done.stdout.decode()}"


def record(out: Path, sandbox: str, cli: bool) -> None:
    home = out / "home"
    create_key(home / "keys", seed=JUDGE_SEED)
    ticks = iter(range(10**6))
    with Ledger.open(home, clock=lambda: EPOCH + timedelta(microseconds=next(ticks))) as led:
        for case in CASES:
            dbom, result, events = _play(case, home, led, sandbox)
            (out / f"{case.name}.dbom.json").write_text(dbom, encoding="utf-8")
            (out / f"{case.name}.result.json").write_bytes(canonicalize(result))
            (out / f"{case.name}.events.txt").write_text("\n".join(events) + "\n", encoding="utf-8")
            print(f"recorded {case.name}: {result['status']}", file=sys.stderr)
    for case in CASES:
        if case.name.startswith("scored"):
            report = replay_battle(home, case.name, case.sandbox or sandbox)
            (out / f"{case.name}.replay.json").write_bytes(
                canonicalize({"matches": report.matches, "differences": list(report.differences),
                              "replayed": report.replayed.to_json()}))
    ledger_view(out)
    if cli:
        submission = ROOT / "tasks" / "rate-limiter" / "submissions" / "no-lock.json"
        (out / "score.txt").write_text(_cli(["score", "--task", "rate-limiter", "--submission", str(submission),
                                             "--sandbox", sandbox, "--red-budget", "2", "--seed", "11", "--json"]))
        (out / "calibrate.txt").write_text(_cli(["calibrate", "--task", "sql-select", "--no-red",
                                                 "--sandbox", sandbox, "--json"]))


def ledger_view(out: Path) -> None:
    """The ledger's summary columns, row by row, and what ``verify ledger`` says of the whole (``ledger.txt``)."""
    import sqlite3

    from ledger.verify import verify_ledger

    home = out / "home"
    db = sqlite3.connect(home / "battles.db")
    rows = db.execute("SELECT sequence, battle_id, timestamp, task_id, status, cis_score, result_sha256, leaf_hash "
                      "FROM battles ORDER BY sequence").fetchall()
    db.close()
    report = verify_ledger(home)
    lines = [repr(row) for row in rows] + [f"verify: ok={report.ok} size={report.size} root={report.root.hex()}",
                                           *(f"problem: {p.kind} {p.sequence} {p.detail}" for p in report.problems)]
    (out / "ledger.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def compare(out: Path, against: Path) -> bool:
    names = sorted({p.name for p in out.glob("*.*")} | {p.name for p in against.glob("*.*")})
    same = True
    for name in names:
        left, right = out / name, against / name
        ok = left.is_file() and right.is_file() and left.read_bytes() == right.read_bytes()
        same &= ok
        print(f"{name:<40} {'identical' if ok else 'DIFFERS'}")
    print(f"{sum(1 for _ in names)} files: {'all identical' if same else 'some differ'}")
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="an empty or new folder for this run's bytes")
    parser.add_argument("--against", type=Path, help="a folder an earlier run wrote: compare with it")
    parser.add_argument("--sandbox", default="docker", choices=("docker", "bwrap"))
    parser.add_argument("--no-cli", action="store_true", help="skip 'logomesh score' and 'logomesh calibrate'")
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out} is not empty: give a new folder to --out", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    record(args.out, args.sandbox, not args.no_cli)
    if args.against is None:
        return 0
    return 0 if compare(args.out, args.against) else 1


if __name__ == "__main__":
    raise SystemExit(main())
