"""Key rotation: an entry signed by the old key, followed by verifiers; crash-safe key files."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest
from ledger_fixtures import fill, step_clock
from typer.testing import CliRunner

from ledger import Ledger
from ledger.keys import load_key, load_verifier, stage_next_key
from ledger.schema import trigger_names
from ledger.verify import verify_ledger
from logomesh.cli import app

pytestmark = pytest.mark.usefixtures("verify_workers")


def test_rotation_is_a_signed_entry_and_the_log_keeps_verifying(home: Path) -> None:
    original = load_verifier(home / "keys")
    with Ledger.open(home, clock=step_clock()) as led, Ledger.open(home, clock=step_clock()) as other:
        fill(led, 3)
        receipt = led.rotate_key(new_seed=b"\x42" * 32)
        assert receipt.sequence == 3
        new = led.verifier
        assert new != original and led.trusted_key_strings() == [original.encode(), new.encode()]
        rotation = led.get(receipt.battle_id)
        assert rotation is not None and rotation.result["new_key"] == new.encode()
        assert rotation.dbom["sigma_judge"]["signatures"][0]["keyid"] == original.key_id_hex
        other.append("after", {"battle_id": "after", "status": "scored"}, {}, {})  # opened before: follows
        fill(led, 2, start=10)
        after = led.get("after")
        assert after is not None and after.dbom["sigma_judge"]["signatures"][0]["keyid"] == new.key_id_hex
    assert load_verifier(home / "keys") == new
    retired = home / "keys" / "retired" / f"judge-{original.key_id_hex}.key"
    assert stat.S_IMODE(retired.stat().st_mode) == 0o600
    report = verify_ledger(home)
    assert report.ok and report.judge_key == new
    assert [(r.key, r.first, r.last) for r in report.signers] == [(original.encode(), 0, 3), (new.encode(), 4, 6)]
    assert verify_ledger(home, pubkeys=[original]).ok  # the auditor's pinned key vouches for the rotation
    pinned_new = verify_ledger(home, pubkeys=[new])
    assert {p.kind for p in pinned_new.problems} >= {"bad-signature", "untrusted-key"}


def test_judge_pub_put_back_to_the_retired_key_is_reported(home: Path) -> None:
    """After a rotation the published key must be the new one: the old one is a valid key, and still wrong."""
    original = load_verifier(home / "keys")
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 2)
        led.rotate_key(new_seed=b"\x42" * 32)
        new = led.verifier
    assert verify_ledger(home).judge_key == new  # rotated, and nothing signed by the new key yet
    (home / "keys" / "judge.pub").write_text(original.encode() + "\n")
    problems = verify_ledger(home, pubkeys=[original]).problems
    assert [p.kind for p in problems] == ["key-file"]
    assert original.fingerprint in problems[0].detail and new.fingerprint in problems[0].detail


def test_old_key_cannot_sign_after_rotation(home: Path) -> None:
    from ledger.keys import SignerKey

    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 2)
        old = led._key
        led.rotate_key()
        led._key = SignerKey(old.name, old.seed)  # a thief with the retired key keeps appending
        led._follow_rotation = lambda conn: None  # type: ignore[method-assign]
        led.append("forged", {"battle_id": "forged", "status": "scored"}, {}, {})
    kinds = {(p.kind, p.sequence) for p in verify_ledger(home).problems}
    assert ("bad-signature", 3) in kinds


def test_rotation_that_never_committed_is_discarded(home: Path) -> None:
    with Ledger.open(home) as led:
        fill(led, 1)
        before = led.verifier
    stage_next_key(home / "keys", "logomesh-judge", b"\x07" * 32)  # a crash right after staging
    with Ledger.open(home) as led:
        assert led.verifier == before
    assert not (home / "keys" / "judge.next.key").exists()
    assert load_key(home / "keys").verifier == before


def test_keys_rotate_command(home: Path) -> None:
    runner = CliRunner()
    with Ledger.open(home) as led:
        fill(led, 1)
    result = runner.invoke(app, ["keys", "rotate", "--home", str(home)])
    assert result.exit_code == 0 and "retired" in result.stderr
    shown = runner.invoke(app, ["keys", "show", "--home", str(home)])
    assert shown.stdout == result.stdout
    assert runner.invoke(app, ["verify", "ledger", "--home", str(home)]).exit_code == 0
    empty = runner.invoke(app, ["keys", "rotate", "--home", str(home / "nothing")])
    assert empty.exit_code == 1 and "no ledger" in empty.stderr


def test_bundles_after_rotation_verify_with_the_key_chain(home: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    original = load_verifier(home / "keys").encode()
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 2)
        led.rotate_key()
        fill(led, 1, start=5)
        new = led.verifier.encode()
    out = tmp_path / "export"
    assert runner.invoke(app, ["export", "dboms", "--home", str(home), "--out", str(out)]).exit_code == 0
    old_bundle = str(out / "bundles" / "b0.json")
    both = runner.invoke(app, ["verify", "bundle", old_bundle, "--pubkey", original, "--pubkey", new])
    assert both.exit_code == 0, both.stdout
    assert runner.invoke(app, ["verify", "bundle", old_bundle]).exit_code == 0
    only_new = runner.invoke(app, ["verify", "bundle", old_bundle, "--pubkey", new])
    assert only_new.exit_code == 3 and "bad-signature" in only_new.stdout


def test_worker_processes_give_the_same_report_as_one(home: Path) -> None:
    """Rotations, a forged entry after one, an edit and a deleted entry: the same problems in the same order."""
    from ledger.keys import SignerKey

    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 4)
        old = led._key
        led.rotate_key(new_seed=b"\x42" * 32)
        fill(led, 4, start=10)
        led.rotate_key(new_seed=b"\x43" * 32)
        fill(led, 3, start=20)
        led._key = SignerKey(old.name, old.seed)
        led._follow_rotation = lambda conn: None  # type: ignore[method-assign]
        led.append("forged", {"battle_id": "forged", "status": "scored"}, {}, {})
    db = sqlite3.connect(home / "battles.db")
    for name in trigger_names():
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    db.execute("UPDATE battles SET cis_score = 0.99 WHERE sequence = 2")
    db.execute("DELETE FROM battles WHERE sequence = 7")
    db.commit()
    db.close()
    one = verify_ledger(home, workers=1).as_dict()
    several = verify_ledger(home, workers=3).as_dict()
    one.pop("seconds"), several.pop("seconds")
    assert several == one
    kinds = {(p["kind"], p["sequence"]) for p in one["problems"]}
    assert {("column-edited", 2), ("entry-deleted", 8), ("bad-signature", 13)} <= kinds
