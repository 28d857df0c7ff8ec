"""`verify_ledger` against every kind of tamper the issue lists, on real SQLite files."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from ledger_fixtures import as_an_older_release_left_it, fill, step_clock

from ledger import Ledger, LedgerError
from ledger.canonical import canonical_sha256, canonicalize
from ledger.keys import SignerKey, create_key, load_verifier
from ledger.merkle import leaf_hash
from ledger.schema import trigger_names, trigger_sql
from ledger.verify import verify_ledger

pytestmark = pytest.mark.usefixtures("verify_workers")

SIZE = 8


@pytest.fixture
def filled(home: Path) -> Path:
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, SIZE)
    return home


def _tamper(home: Path, *sql: str, params: tuple[object, ...] = ()) -> None:
    """Do what an attacker with file access does: drop the triggers, then edit."""
    db = sqlite3.connect(home / "battles.db")
    for name in trigger_names():
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in sql:
        db.execute(statement, params if "?" in statement else ())
    db.commit()
    db.close()


def _restore_triggers(home: Path) -> None:
    db = sqlite3.connect(home / "battles.db")
    for sql in trigger_sql():
        db.execute(sql)
    db.commit()


def _problems(home: Path, **kwargs: object) -> set[tuple[str, int | None]]:
    report = verify_ledger(home, **kwargs)  # type: ignore[arg-type]
    assert not report.ok
    return {(p.kind, p.sequence) for p in report.problems}


def _row_dbom_text(home: Path, sequence: int) -> str:
    row = sqlite3.connect(home / "battles.db").execute(
        "SELECT dbom FROM battles WHERE sequence = ?", (sequence,)).fetchone()
    return str(row[0])


def _row_dbom(home: Path, sequence: int) -> dict[str, object]:
    row = sqlite3.connect(home / "battles.db").execute(
        "SELECT dbom FROM battles WHERE sequence = ?", (sequence,)).fetchone()
    return dict(json.loads(row[0]))


def test_clean_ledger_verifies(filled: Path) -> None:
    report = verify_ledger(filled)
    assert report.ok, report.problems
    assert report.size == SIZE and report.checkpoints == SIZE and report.blobs > 0
    with Ledger.open(filled) as led:
        assert report.root == led.checkpoints()[-1].root


def test_empty_ledger_verifies(home: Path) -> None:
    Ledger.open(home).close()
    assert verify_ledger(home).ok


def test_missing_ledger_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no ledger"):
        verify_ledger(tmp_path)


def test_removed_trigger_alone_is_reported(filled: Path) -> None:
    db = sqlite3.connect(filled / "battles.db")
    db.execute("DROP TRIGGER battles_no_update")
    db.commit()
    assert _problems(filled) == {("trigger-removed", None)}
    with pytest.raises(LedgerError, match="triggers"):
        Ledger.open(filled)


def test_no_op_triggers_under_the_same_names_are_reported(filled: Path) -> None:
    """Triggers that keep their names but no longer abort let rows be edited; their SQL gives them away."""
    db = sqlite3.connect(filled / "battles.db")
    for name in trigger_names():
        table_name, _, op = name.partition("_no_")
        db.execute(f"DROP TRIGGER {name}")
        db.execute(f"CREATE TRIGGER {name} BEFORE {op.upper()} ON {table_name} BEGIN SELECT 1; END")
    db.commit()
    db.close()
    report = verify_ledger(filled)
    altered = [p for p in report.problems if p.kind == "trigger-altered"]
    assert {p.kind for p in report.problems} == {"trigger-altered"} and len(altered) == len(trigger_names())
    assert "battles_no_update" in altered[0].line() and "SELECT 1" in altered[0].line()
    with pytest.raises(LedgerError, match="triggers"):
        Ledger.open(filled)


def test_trigger_sql_is_compared_with_whitespace_normalised(filled: Path) -> None:
    db = sqlite3.connect(filled / "battles.db")
    for name, sql in zip(trigger_names(), trigger_sql(), strict=True):
        db.execute(f"DROP TRIGGER {name}")
        db.execute(sql.replace(" BEGIN ", "\n  BEGIN\n    ").replace(" END", "\n  END"))
    db.commit()
    db.close()
    assert verify_ledger(filled).ok


def test_a_trigger_the_store_never_creates_is_reported(filled: Path) -> None:
    """An extra trigger could, for one, make every later append vanish without an error."""
    db = sqlite3.connect(filled / "battles.db")
    db.execute("CREATE TRIGGER battles_swallow BEFORE INSERT ON battles BEGIN SELECT RAISE(IGNORE); END")
    db.commit()
    db.close()
    problems = verify_ledger(filled).problems
    assert [p.kind for p in problems] == ["trigger-added"] and "battles_swallow" in problems[0].detail


def test_edited_score_column(filled: Path) -> None:
    _tamper(filled, "UPDATE battles SET cis_score = 0.99 WHERE sequence = 2")
    _restore_triggers(filled)
    assert _problems(filled) == {("column-edited", 2)}


def test_edited_result_with_recomputed_hash(filled: Path) -> None:
    raw = json.loads(sqlite3.connect(filled / "battles.db").execute(
        "SELECT raw_result FROM battles WHERE sequence = 5").fetchone()[0])
    raw["cis_score"] = 1.0
    forged = canonicalize(raw).decode()
    _tamper(filled, "UPDATE battles SET raw_result = ?, result_sha256 = ? WHERE sequence = 5",
            params=(forged, canonical_sha256(raw)))
    kinds = _problems(filled)
    assert ("result-edited", 5) in kinds and ("column-edited", 5) in kinds and ("trigger-removed", None) in kinds


def test_edited_signed_entry_with_recomputed_leaf(filled: Path) -> None:
    """The attacker edits the DBOM itself and recomputes every hash they can, but cannot sign."""
    doc = _row_dbom(filled, 3)
    result = dict(doc["result"])  # type: ignore[call-overload]
    result["cis_score"] = 1.0
    doc["result"] = result
    doc["result_sha256"] = canonical_sha256(result)
    data = canonicalize(doc)
    _tamper(filled, "UPDATE battles SET dbom = ?, leaf_hash = ?, raw_result = ?, result_sha256 = ?, cis_score = 1.0 "
                    "WHERE sequence = 3",
            params=(data.decode(), leaf_hash(data).hex(), canonicalize(result).decode(), canonical_sha256(result)))
    kinds = _problems(filled)
    assert ("entry-edited", 3) in kinds
    assert any(k == "node-mismatch" for k, _ in kinds)
    assert any(k == "checkpoint-mismatch" for k, _ in kinds)


def test_edited_input_blob(filled: Path) -> None:
    digest = _row_dbom(filled, 4)["inputs"]["purple_response"]["sha256"]  # type: ignore[index]
    _tamper(filled, "UPDATE blobs SET data = ? WHERE sha256 = ?", params=(b'{"sourceCode": "evil"}', digest))
    kinds = _problems(filled)
    assert ("blob-edited", 4) in kinds
    assert {k for k, _ in kinds} == {"blob-edited", "trigger-removed"}


def test_deleted_blob(filled: Path) -> None:
    digest = _row_dbom(filled, 6)["inputs"]["purple_request"]["sha256"]  # type: ignore[index]
    _tamper(filled, "DELETE FROM blobs WHERE sha256 = ?", params=(digest,))
    assert ("blob-missing", 6) in _problems(filled)


def test_deleted_entry(filled: Path) -> None:
    _tamper(filled, "DELETE FROM battles WHERE sequence = 3")
    kinds = _problems(filled)
    assert ("entry-deleted", 4) in kinds
    assert any(k == "checkpoint-mismatch" for k, _ in kinds)


def test_reordered_entries(filled: Path) -> None:
    _tamper(filled, "UPDATE battles SET sequence = -1 WHERE sequence = 1",
            "UPDATE battles SET sequence = 1 WHERE sequence = 2", "UPDATE battles SET sequence = 2 WHERE sequence = -1")
    kinds = _problems(filled)
    assert ("sequence-mismatch", 1) in kinds and ("sequence-mismatch", 2) in kinds
    assert ("leaf-mismatch", 1) not in kinds  # the rows moved whole; the tree is what breaks
    assert any(k == "checkpoint-mismatch" for k, _ in kinds)


def test_inserted_entry_signed_by_another_key(filled: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    create_key(other / "keys", seed=b"\x07" * 32)
    with Ledger.open(other, clock=step_clock()) as led:
        fill(led, SIZE + 1)
    row = sqlite3.connect(other / "battles.db").execute(
        f"SELECT * FROM battles WHERE sequence = {SIZE}").fetchone()
    _tamper(filled, "INSERT INTO battles VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", params=tuple(row))
    _restore_triggers(filled)
    kinds = _problems(filled)
    assert ("bad-signature", SIZE) in kinds and ("unsigned-entries", SIZE) in kinds


def test_truncated_log_is_caught_by_the_copies_outside(filled: Path) -> None:
    """Removing the newest entries, their nodes and checkpoints leaves a self-consistent database."""
    _tamper(filled, f"DELETE FROM battles WHERE sequence >= {SIZE - 2}",
            f"DELETE FROM checkpoints WHERE size > {SIZE - 2}",
            f"DELETE FROM nodes WHERE (idx + 1) * (1 << level) > {SIZE - 2}")
    _restore_triggers(filled)
    assert ("rollback", SIZE - 2) in _problems(filled)
    (filled / "checkpoints" / "history.jsonl").unlink()
    (filled / "checkpoints" / "latest").unlink()
    assert verify_ledger(filled).ok  # with every copy gone, only a saved checkpoint can tell


def test_truncated_older_ledger_leaves_dbom_files_behind(filled: Path) -> None:
    """A ledger an older release wrote has a DBOM file per entry: the removed entries' files are still there."""
    as_an_older_release_left_it(filled)
    _tamper(filled, f"DELETE FROM battles WHERE sequence >= {SIZE - 2}",
            f"DELETE FROM checkpoints WHERE size > {SIZE - 2}",
            f"DELETE FROM nodes WHERE (idx + 1) * (1 << level) > {SIZE - 2}")
    _restore_triggers(filled)
    problems = _problems(filled)
    assert ("rollback", SIZE - 2) in problems and ("dbom-file-orphan", None) in problems
    (filled / "checkpoints" / "history.jsonl").unlink()
    (filled / "checkpoints" / "latest").unlink()
    assert _problems(filled) == {("dbom-file-orphan", None)}
    for i in range(SIZE - 2, SIZE):
        (filled / "dboms" / f"b{i}.json").unlink()
    assert verify_ledger(filled).ok


def test_rollback_against_a_saved_checkpoint(filled: Path, tmp_path: Path) -> None:
    backup = tmp_path / "backup.db"
    shutil.copy(filled / "battles.db", backup)
    with Ledger.open(filled, clock=step_clock()) as led:
        fill(led, 3, start=SIZE)
        saved = led.checkpoints()[-1].note
    shutil.copy(backup, filled / "battles.db")
    for suffix in ("-wal", "-shm"):
        (filled / f"battles.db{suffix}").unlink(missing_ok=True)
    shutil.rmtree(filled / "checkpoints")
    assert verify_ledger(filled).ok
    assert _problems(filled, saved_checkpoints=[saved]) == {("rollback", SIZE)}


def test_forked_history(filled: Path, tmp_path: Path) -> None:
    """The same key signing two different logs of one size: a split view."""
    twin = tmp_path / "twin"
    shutil.copytree(filled / "keys", twin / "keys")
    with Ledger.open(twin, clock=step_clock()) as led:
        fill(led, SIZE - 1)
        led.append("different", {"battle_id": "different", "status": "failed"}, {}, {})
        forked = led.checkpoints()[-1].note
    kinds = {k for k, _ in _problems(filled, saved_checkpoints=[forked])}
    assert kinds == {"fork", "checkpoint-mismatch"}


def test_resigned_with_another_key_needs_the_auditors_key(filled: Path, tmp_path: Path) -> None:
    original = load_verifier(filled / "keys")
    forged = tmp_path / "forged"
    create_key(forged / "keys", seed=b"\x09" * 32)
    with Ledger.open(forged, clock=step_clock()) as led:
        fill(led, SIZE)
    for name in ("battles.db", "keys", "checkpoints"):
        target = filled / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
        src = forged / name
        shutil.copytree(src, target) if src.is_dir() else shutil.copy(src, target)
    assert verify_ledger(filled).ok  # self-consistent: the reason auditors pin the key
    kinds = {k for k, _ in _problems(filled, pubkeys=[original])}
    assert {"bad-signature", "checkpoint-signature", "untrusted-key"} <= kinds


def test_replaced_judge_pub_is_reported_with_both_fingerprints(filled: Path) -> None:
    """judge.pub is what 'logomesh keys show' gives auditors: another valid key there must not pass."""
    original = load_verifier(filled / "keys")
    impostor = SignerKey("logomesh-judge", b"\x0b" * 32).verifier
    (filled / "keys" / "judge.pub").write_text(impostor.encode() + "\n")
    report = verify_ledger(filled)
    assert [(p.kind, p.sequence) for p in report.problems] == [("key-file", None)]
    detail = report.problems[0].detail
    assert f"holds judge key {impostor.fingerprint}" in detail and f"signed with {original.fingerprint}" in detail
    assert report.judge_key == original
    assert report.as_dict()["judge_key"]["fingerprint"] == original.fingerprint
    (filled / "keys" / "judge.pub").write_text("logomesh-judge+00000000+AAAA\n")
    assert [p.kind for p in verify_ledger(filled).problems] == ["key-file"]


def test_the_report_names_the_key_every_entry_was_signed_with(filled: Path) -> None:
    report = verify_ledger(filled)
    key = load_verifier(filled / "keys")
    assert report.ok and report.judge_key == key
    assert [r.as_dict() for r in report.signers] == [
        {"fingerprint": key.fingerprint, "verifier_key": key.encode(), "first": 0, "last": SIZE - 1, "entries": SIZE}]
    assert all(json.loads(_row_dbom_text(filled, i))["judge_key"] == key.fingerprint for i in range(SIZE))


def test_entries_written_before_schema_3_still_verify(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ledger begun by the previous release (schema /2, no judge_key) verifies, and goes on under /3."""
    import ledger.dbom

    with monkeypatch.context() as old_release:
        old_release.setattr(ledger.dbom, "SCHEMA", "logomesh-dbom/2")
        with Ledger.open(home, clock=step_clock()) as led:
            fill(led, 3)
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 2, start=3)
    schemas = [json.loads(_row_dbom_text(home, i)).get("schema") for i in range(5)]
    assert schemas == ["logomesh-dbom/2"] * 3 + ["logomesh-dbom/3"] * 2
    assert "judge_key" not in json.loads(_row_dbom_text(home, 0))
    report = verify_ledger(home)
    assert report.ok, report.problems
    assert [(r.first, r.last) for r in report.signers] == [(0, 4)]


def test_edited_dbom_file_outside_the_database(filled: Path) -> None:
    as_an_older_release_left_it(filled)
    path = filled / "dboms" / "b1.json"
    doc = json.loads(path.read_text())
    doc["result"]["cis_score"] = 1.0
    path.write_text(json.dumps(doc))
    assert _problems(filled) == {("dbom-file", 1)}


def test_deleted_dbom_file_is_reported(filled: Path) -> None:
    as_an_older_release_left_it(filled)
    (filled / "dboms" / "b2.json").unlink()
    problems = verify_ledger(filled).problems
    assert [(p.kind, p.sequence) for p in problems] == [("dbom-file-missing", 2)]
    assert "dboms/b2.json" in problems[0].detail


def test_deleted_dbom_folder_is_one_problem(filled: Path) -> None:
    as_an_older_release_left_it(filled)
    shutil.rmtree(filled / "dboms")
    problems = verify_ledger(filled).problems
    assert [p.kind for p in problems] == ["dbom-file-missing"] and f"{SIZE} entries" in problems[0].detail


def test_dbom_file_matching_no_entry_is_reported(filled: Path) -> None:
    as_an_older_release_left_it(filled)
    shutil.copy(filled / "dboms" / "b1.json", filled / "dboms" / "planted.json")
    (filled / "dboms" / ".b3.json.123.tmp").write_bytes(b"{")  # what a crash inside write_atomic leaves
    problems = verify_ledger(filled).problems
    assert [(p.kind, p.sequence) for p in problems] == [("dbom-file-orphan", None)]
    assert "dboms/planted.json" in problems[0].detail


def test_file_an_interrupted_append_did_not_write_yet_is_not_a_deletion(filled: Path) -> None:
    as_an_older_release_left_it(filled)
    """A crash after the commit leaves the newest entries without files until the next open writes them."""
    history = filled / "checkpoints" / "history.jsonl"
    history.write_text("".join(history.read_text().splitlines(keepends=True)[:-1]))  # the crash came first
    (filled / "checkpoints" / "latest").unlink()
    (filled / "dboms" / f"b{SIZE - 1}.json").unlink()
    assert verify_ledger(filled).ok
    Ledger.open(filled).close()
    assert (filled / "dboms" / f"b{SIZE - 1}.json").exists() and verify_ledger(filled).ok


def test_forged_checkpoint_signature(filled: Path) -> None:
    latest = filled / "checkpoints" / "latest"
    latest.write_text(latest.read_text().replace(f"\n{SIZE}\n", f"\n{SIZE + 1}\n"))
    assert ("checkpoint-signature", None) in _problems(filled)


def test_an_unreadable_database_is_a_failed_verification_and_opening_it_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "battles.db").write_text("garbage")
    report = verify_ledger(tmp_path)  # the ledger's own file, damaged: verification fails, it does not crash
    assert not report.ok and [p.kind for p in report.problems] == ["database-corrupt"]
    assert "file is not a database" in report.problems[0].detail
    with pytest.raises(LedgerError, match="cannot be opened as a ledger"):
        Ledger.open(tmp_path)


def test_foreign_database_is_not_a_ledger(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "battles.db").execute("CREATE TABLE other (a)")
    with pytest.raises(LedgerError, match="not a LogoMesh ledger"):
        verify_ledger(tmp_path)


def test_dropped_table(filled: Path) -> None:
    _tamper(filled, "DROP TABLE checkpoints")
    assert ("table-missing", None) in _problems(filled)


def test_each_tamper_case_runs_in_the_mode_it_names(filled: Path, verify_workers: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture that runs this module twice really sends the second run through worker processes."""
    import ledger.entry_checks

    calls: list[int] = []
    parallel = ledger.entry_checks._parallel

    def counted(*args: object) -> object:
        calls.append(1)
        return parallel(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ledger.entry_checks, "_parallel", counted)
    assert verify_ledger(filled).ok
    assert len(calls) == (1 if verify_workers == "worker processes" else 0)


def test_appends_create_no_dbom_file(filled: Path) -> None:
    """The row holds the DBOM; the checkpoint copies outside already commit to it: no file per entry."""
    assert not (filled / "dboms").exists()
    db = sqlite3.connect(filled / "battles.db")
    assert db.execute("SELECT value FROM meta WHERE key = 'dbom_files_until'").fetchone() == ("0",)
    assert verify_ledger(filled).ok


def test_a_ledger_an_older_release_wrote_keeps_its_files_checked(filled: Path) -> None:
    """Opening it records how many entries have a file; those stay checked, later entries have none."""
    as_an_older_release_left_it(filled)
    with Ledger.open(filled, clock=step_clock()) as led:
        fill(led, 2, start=SIZE)
    db = sqlite3.connect(filled / "battles.db")
    assert db.execute("SELECT value FROM meta WHERE key = 'dbom_files_until'").fetchone() == (str(SIZE),)
    assert sorted(p.name for p in (filled / "dboms").iterdir()) == sorted(f"b{i}.json" for i in range(SIZE))
    assert verify_ledger(filled).ok
    newer = filled / "dboms" / f"b{SIZE + 1}.json"
    newer.write_text(_row_dbom_text(filled, SIZE + 1))  # a copy someone made: checked, not required
    assert verify_ledger(filled).ok
    newer.write_text(_row_dbom_text(filled, SIZE + 1).replace("scored", "failed"))
    assert _problems(filled) == {("dbom-file", SIZE + 1)}
    newer.unlink()
    (filled / "dboms" / "b1.json").unlink()
    assert _problems(filled) == {("dbom-file-missing", 1)}
