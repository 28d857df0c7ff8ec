"""Bad input through the real CLI: the exact exit code, one line on stderr, no traceback, nothing created.

A user's typos and broken environments (a file or an unwritable folder as --home, a missing home for a
read-only command, an export folder holding another ledger's bundles, a corrupted database, malformed
files) each get one line naming the problem and the fix.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiers import sampled

from ledger import Ledger
from logomesh.battle.record import failed_played
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import record_battle

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logomesh", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env={**os.environ, **(env or {})})


def one_line(proc: subprocess.CompletedProcess[str], code: int, needle: str) -> str:
    """The single stderr line of a refused command, after checking the exit code and that nothing else came."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logomesh: error: "), proc.stderr
    assert needle in lines[0], lines[0]
    return lines[0]


def _ledger(home: Path, count: int = 3) -> Path:
    for i in range(count):
        request = BattleRequest(task_id="rate-limiter", battle_id=f"b{i}", seed=i, home=home, mock_variant="good")
        record_battle(home, f"b{i}", failed_played(request, "engine", "recorded for the test"))
    return home


HOME_USERS = [
    ["battle", "run", "--task", "rate-limiter", "--mock", "good"],
    ["keys", "init"],
    ["console"],
    ["green", "serve", "--port", "1"],
    ["campaign", "run", "--mock", "good", "--tasks", "rate-limiter"],
]
READ_ONLY = [
    ["verify", "ledger"],
    ["export", "dboms", "--out", "OUT"],
    ["replay", "some-battle"],
    ["keys", "show"],
    ["keys", "rotate"],
    ["campaign", "report", "some-campaign"],
    ["verify", "report", "REPORT"],
]


def _named(commands: list[list[str]]) -> list[str]:
    return [" ".join(c[:2]) for c in commands]


@pytest.mark.parametrize("command", sampled(HOME_USERS, _named(HOME_USERS), keep={"keys init"}))
def test_a_file_as_home_is_one_line_naming_the_fix(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    one_line(cli(*command, "--home", str(home)), 1, f"the state folder {home} is a file: choose a folder")
    assert home.read_text() == "not a folder"


def test_a_home_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    home = blocker / "home"
    line = one_line(cli("keys", "init", "--home", str(home)), 1, f"cannot create the state folder {home}")
    assert "choose a writable folder with --home or $LOGOMESH_HOME" in line
    line = one_line(cli("battle", "run", "--task", "rate-limiter", "--mock", "good", "--home", str(home)), 1,
                    f"cannot create the state folder {home} ({blocker} is a file)")  # said before the battle
    assert "choose a writable folder with --home or $LOGOMESH_HOME" in line


@pytest.mark.parametrize("command", sampled(READ_ONLY, _named(READ_ONLY), keep={"verify ledger", "export dboms"}))
def test_read_only_commands_on_a_missing_home_create_nothing(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "missing"
    report = tmp_path / "report.json"
    report.write_text("{}")
    args = [{"OUT": str(tmp_path / "out"), "REPORT": str(report)}.get(a, a) for a in command]
    proc = cli(*args, "--home", str(home))
    one_line(proc, 1, "")
    assert not home.exists() and not (tmp_path / "out").exists()


def test_campaign_list_on_a_missing_home_lists_nothing_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "missing"
    proc = cli("campaign", "list", "--home", str(home))
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    assert not home.exists()


def test_export_refuses_a_folder_holding_another_ledgers_bundles(tmp_path: Path) -> None:
    first, second, out = _ledger(tmp_path / "a"), _ledger(tmp_path / "b", 2), tmp_path / "export"
    done = cli("export", "dboms", "--home", str(first), "--out", str(out))
    assert done.returncode == 0, done.stderr
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with Ledger.open(second) as led:
        origin = led.origin
    line = one_line(cli("export", "dboms", "--home", str(second), "--out", str(out)), 1,
                    "holds bundles exported from another ledger")
    assert origin in line and "export into an empty folder" in line
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # untouched
    again = cli("export", "dboms", "--home", str(first), "--out", str(out))  # the same ledger may refresh it
    assert again.returncode == 0, again.stderr

    stray = tmp_path / "stray"
    (stray / "bundles").mkdir(parents=True)
    (stray / "bundles" / "x.json").write_text("{}")
    one_line(cli("export", "dboms", "--home", str(first), "--out", str(stray)), 1, "has no index.json")


def test_export_into_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    home = _ledger(tmp_path / "h")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    one_line(cli("export", "dboms", "--home", str(home), "--out", str(blocker)), 1, "is not a folder")
    one_line(cli("export", "dboms", "--home", str(home), "--out", str(blocker / "sub")), 1,
             "cannot write the export into")


def _flip_pages(db: Path) -> None:
    """Damage every b-tree page header after the first: what a bad disk or a careless editor leaves."""
    data = bytearray(db.read_bytes())
    for page in range(1, len(data) // 4096):
        data[page * 4096] ^= 0xFF
        data[page * 4096 + 3] ^= 0x5A
    db.write_bytes(bytes(data))


def test_a_corrupted_database_is_a_failed_verification_with_a_clear_first_line(tmp_path: Path) -> None:
    home = _ledger(tmp_path / "h")
    _flip_pages(home / "battles.db")
    proc = cli("verify", "ledger", "--home", str(home))
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("ledger: database-corrupt: ") and "restore battles.db from a backup" in first
    report = json.loads(cli("verify", "ledger", "--home", str(home), "--json").stdout)
    assert report["ok"] is False and "database-corrupt" in {p["kind"] for p in report["problems"]}


def test_verify_prints_the_root_cause_first_then_counts_the_rest(tmp_path: Path) -> None:
    home = _ledger(tmp_path / "h", 30)
    with sqlite3.connect(home / "battles.db") as db:
        triggers = list(db.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'"))
        for name, _ in triggers:
            db.execute(f'DROP TRIGGER "{name}"')
        db.execute("UPDATE battles SET raw_result = replace(raw_result, '\"seed\":7', '\"seed\":8') "
                   "WHERE sequence = 7")
    proc = cli("verify", "ledger", "--home", str(home))
    assert proc.returncode == 3
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("entry 7: result-edited: "), lines[:3]
    assert lines[1].startswith("root cause above; ") and "more problems" in lines[1]
    shown = [line for line in lines if line.startswith("  ")]
    assert len(shown) <= 11 and len(lines) < 16  # never a wall of cascaded lines


def test_malformed_and_foreign_files_are_one_line(tmp_path: Path) -> None:
    home = _ledger(tmp_path / "h")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    one_line(cli("verify", "bundle", str(garbage)), 1, "is not JSON")
    one_line(cli("verify", "bundle", str(tmp_path / "none.json")), 1, "no bundle at")
    one_line(cli("verify", "ledger", "--home", str(home), "--checkpoint", str(garbage)), 1,
             "JSON without a 'checkpoint' note")
    one_line(cli("verify", "ledger", "--home", str(home), "--pubkey", str(garbage)), 1, "--pubkey")
    foreign = tmp_path / "foreign"
    _ledger(foreign, 1)
    foreign_checkpoint = (foreign / "checkpoints" / "latest").read_text()
    saved = tmp_path / "foreign-checkpoint.txt"
    saved.write_text(foreign_checkpoint)
    proc = cli("verify", "ledger", "--home", str(home), "--checkpoint", str(saved))
    assert proc.returncode == 3 and "Traceback" not in proc.stderr  # another ledger's checkpoint fails
    shutil.rmtree(foreign)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A read-only filesystem (a tmpfs mounted ro): what root cannot write either. Skips where mounting is refused."""
    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True,
                             timeout=30, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, timeout=30, check=False)


def test_a_read_only_filesystem_is_one_line_for_home_and_export(tmp_path: Path, read_only_folder: Path) -> None:
    one_line(cli("battle", "run", "--task", "rate-limiter", "--mock", "good", "--home", str(read_only_folder)), 1,
             f"the state folder {read_only_folder} is not writable")
    one_line(cli("keys", "init", "--home", str(read_only_folder / "home")), 1,
             f"cannot create the state folder {read_only_folder / 'home'} (Read-only file system)")
    home = _ledger(tmp_path / "h", 1)
    one_line(cli("export", "dboms", "--home", str(home), "--out", str(read_only_folder / "out")), 1,
             "(Read-only file system): choose a writable --out")


BAD_UTF8 = "BAD_UTF8"


@pytest.mark.parametrize("command", [
    ["score", "--task", "rate-limiter", "--submission", BAD_UTF8],  # not UTF-8 text
    ["score", "--task", "rate-limiter", "--submission", BAD_UTF8, "--llm-base-url", "http://x/v1", "--llm-model",
     "m", "--llm-max-tokens", "0"],
    ["score", "--task", "rate-limiter", "--submission", BAD_UTF8, "--llm-base-url", "ftp://x", "--llm-model", "m"],
    ["purple", "serve", "--llm", "--base-url", "http://x/v1", "--model", "m", "--responses", "."],
    ["campaign", "report", "c", "--format", "xml"],
    ["campaign", "run", "--mock", "good", "--tasks-dir", "/no/such/folder"],
    ["battle", "run", "--task", "rate-limiter", "--mock", "good", "--tasks-dir", "/no/such/folder"],
    ["tasks", "list", "--tasks-dir", "/no/such/folder"],
    ["tasks", "check", "--sandbox", "vm"],
    ["tasks", "new", "Bad/Id"],
    ["replay", "some-battle", "--sandbox", "vm"],
    ["red", "attack", "--task", "rate-limiter", "--code", BAD_UTF8, "--budget", "nan"],
    ["red", "attack", "--task", "no-such-task", "--code", BAD_UTF8],
    ["export", "dboms", "--out", "OUT", "--since", "-1"],
    ["green", "serve", "--port", "70000"],
])
def test_each_usage_error_exits_exactly_2_in_one_line(tmp_path: Path, command: list[str]) -> None:
    """Exit 2 and nothing else: a change that turns one of these into exit 1 (an error) fails here."""
    from typer.testing import CliRunner

    from logomesh.cli import app

    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{}")
    args = [{BAD_UTF8: str(bad), "OUT": str(tmp_path / "out")}.get(a, a) for a in command]
    home = ["--home", str(tmp_path / "home")] if command[0] in ("campaign", "battle", "replay", "export") else []
    result = CliRunner().invoke(app, [*args, *home])
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logomesh: error: "), result.output
    assert not (tmp_path / "home").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("command", "needle"), [
    (["battle", "run", "--mock", "good"], "Missing option '--task'"),  # a required option missing
    (["battle", "run", "--task", "rate-limiter", "--mock", "good", "--seed", "abc"], "Invalid value for '--seed'"),
    (["no-such-command"], "No such command 'no-such-command'. (see 'logomesh --help')"),
    (["verify", "ledger", "--no-such-option"], "No such option: --no-such-option"),
])
def test_the_parsers_own_usage_errors_are_one_line_and_exit_exactly_2(command: list[str], needle: str) -> None:
    line = one_line(cli(*command), 2, needle)
    assert line.endswith("--help')")  # where the help is


def test_no_arguments_show_the_help_and_help_exits_0() -> None:
    bare, asked = cli(), cli("--help")
    assert bare.returncode == 2 and "Usage: logomesh" in bare.stdout + bare.stderr
    assert asked.returncode == 0 and "Usage: logomesh" in asked.stdout and "battle" in asked.stdout
