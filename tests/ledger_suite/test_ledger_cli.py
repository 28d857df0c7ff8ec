"""`logomesh keys`, `verify ledger`, `verify bundle` and `export dboms` through the real CLI."""

from __future__ import annotations

import json
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_fixtures import fill, step_clock
from typer.testing import CliRunner

from ledger import Ledger
from ledger.canonical import canonicalize
from ledger.keys import SignerKey, parse_verifier_key
from ledger.merkle import leaf_hash
from ledger.schema import trigger_names
from logomesh.cli import app

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def filled(home: Path) -> Path:
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 5)
    return home


def test_keys_init_then_show(tmp_path: Path) -> None:
    home = tmp_path / "h"
    code, out, err = _run("keys", "init", "--home", str(home))
    assert code == 0 and "mode 0600" in err
    assert stat.S_IMODE((home / "keys" / "judge.key").stat().st_mode) == 0o600
    code, shown, _ = _run("keys", "show", "--home", str(home))
    assert code == 0 and shown == out
    name, key_id, _b64 = shown.strip().split("+", 2)
    assert name == "logomesh-judge" and len(key_id) == 8
    code, _, err = _run("keys", "init", "--home", str(home))
    assert code == 1 and "never overwritten" in err and "Traceback" not in err
    code, as_json, _ = _run("keys", "show", "--home", str(home), "--json")
    assert json.loads(as_json)["key_id"] == key_id


def test_keys_show_without_key(tmp_path: Path) -> None:
    code, _, err = _run("keys", "show", "--home", str(tmp_path))
    assert code == 1 and err.strip() == f"logomesh: error: no judge key in {tmp_path.resolve() / 'keys'}: " \
                                        "run 'logomesh keys init'"


def test_verify_ledger_ok_and_json(filled: Path) -> None:
    code, out, _ = _run("verify", "ledger", "--home", str(filled))
    assert code == 0 and out.startswith("ledger OK: 5 entries, 5 checkpoints")
    _, key, _ = _run("keys", "show", "--home", str(filled))
    fingerprint = parse_verifier_key(key).fingerprint
    assert out.splitlines()[-1] == f"written with judge key {fingerprint} ({key.strip()})"
    code, out, _ = _run("verify", "ledger", "--home", str(filled), "--json")
    assert code == 0 and json.loads(out)["ok"] is True and json.loads(out)["size"] == 5
    assert json.loads(out)["judge_key"] == {"fingerprint": fingerprint, "verifier_key": key.strip()}
    assert json.loads(_run("keys", "show", "--home", str(filled), "--json")[1])["fingerprint"] == fingerprint


def test_verify_ledger_fails_on_a_swapped_judge_pub(filled: Path) -> None:
    _, key, _ = _run("keys", "show", "--home", str(filled))
    impostor = SignerKey("logomesh-judge", b"\x0c" * 32).verifier
    (filled / "keys" / "judge.pub").write_text(impostor.encode() + "\n")
    code, out, _ = _run("verify", "ledger", "--home", str(filled))
    assert code == 3
    assert out.splitlines()[0].startswith(f"ledger: key-file: keys/judge.pub holds judge key {impostor.fingerprint}, "
                                          f"but the ledger is signed with {parse_verifier_key(key).fingerprint}")
    code, out, err = _run("keys", "show", "--home", str(filled))  # nor is the impostor handed to an auditor
    assert code == 1 and out == "" and "Traceback" not in err
    pub = filled.resolve() / "keys" / "judge.pub"
    assert err == (f"logomesh: error: {pub} holds judge key {impostor.fingerprint}, "
                   f"but the ledger signs with {parse_verifier_key(key).fingerprint}: the file was replaced; "
                   "run 'logomesh verify ledger' and restore it\n")


def test_verify_ledger_reports_tamper_with_exit_3(filled: Path) -> None:
    db = sqlite3.connect(filled / "battles.db")
    for name in trigger_names():
        db.execute(f"DROP TRIGGER {name}")
    db.execute("UPDATE battles SET cis_score = 1.0 WHERE sequence = 3")
    db.commit()
    code, out, _ = _run("verify", "ledger", "--home", str(filled))
    assert code == 3
    assert "entry 3: column-edited: cis_score" in out and "ledger: trigger-removed" in out
    code, out, _ = _run("verify", "ledger", "--home", str(filled), "--json")
    assert code == 3 and {"sequence": 3, "kind": "column-edited"}.items() <= json.loads(out)["problems"][-1].items()
    code, parallel, _ = _run("verify", "ledger", "--home", str(filled), "--json", "--workers", "2")
    assert code == 3 and json.loads(parallel)["problems"] == json.loads(out)["problems"]
    code, _, err = _run("verify", "ledger", "--home", str(filled), "--workers", "0")
    assert code == 2 and err == "logomesh: error: --workers must be at least 1\n"


def test_verify_ledger_with_pubkey_and_saved_checkpoint(filled: Path, tmp_path: Path) -> None:
    _, key, _ = _run("keys", "show", "--home", str(filled))
    saved = tmp_path / "seen.txt"
    saved.write_text((filled / "checkpoints" / "latest").read_text())
    code, out, _ = _run("verify", "ledger", "--home", str(filled), "--pubkey", key.strip(), "--checkpoint", str(saved))
    assert code == 0 and "1 saved checkpoints" in out
    key_file = tmp_path / "judge.pub"
    key_file.write_text(key)
    assert _run("verify", "ledger", "--home", str(filled), "--pubkey", str(key_file))[0] == 0
    code, _, err = _run("verify", "ledger", "--home", str(filled), "--pubkey", "nonsense")
    assert code == 1 and "--pubkey" in err


def test_verify_ledger_without_ledger(tmp_path: Path) -> None:
    code, _, err = _run("verify", "ledger", "--home", str(tmp_path))
    assert code == 1 and "no ledger" in err


def test_export_and_verify_bundles(filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    code, text, _ = _run("export", "dboms", "--home", str(filled), "--out", str(out), "--since", "2")
    assert code == 0 and "exported 3 bundles" in text
    index = json.loads((out / "index.json").read_text())
    assert [b["sequence"] for b in index["bundles"]] == [2, 3, 4] and index["tree_size"] == 5
    key = (out / "judge.pub").read_text().strip()
    for entry in index["bundles"]:
        code, text, _ = _run("verify", "bundle", str(out / entry["file"]), "--pubkey", key)
        assert code == 0 and text.startswith("bundle OK") and entry["result_sha256"] in text
    code, text, _ = _run("verify", "bundle", str(out / "bundles" / "b3.json"))
    assert code == 0 and "taken from the bundle" in text
    code, _, _ = _run("verify", "ledger", "--home", str(filled), "--checkpoint", str(out / "index.json"))
    assert code == 0
    secret = (filled / "keys" / "judge.key").read_text().strip().rsplit("+", 1)[1]
    assert not any(secret in p.read_text() for p in out.rglob("*") if p.is_file())  # the key never leaves


def test_tampered_bundle_fails(filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    _run("export", "dboms", "--home", str(filled), "--out", str(out))
    path = out / "bundles" / "b1.json"
    bundle = json.loads(path.read_text())
    bundle["dbom"]["result"]["cis_score"] = 1.0
    path.write_text(json.dumps(bundle))
    code, text, _ = _run("verify", "bundle", str(path), "--json")
    kinds = {p["kind"] for p in json.loads(text)["problems"]}
    assert code == 3 and {"result-edited", "entry-edited", "inclusion"} <= kinds


def test_bundle_checked_against_another_key_fails(filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    _run("export", "dboms", "--home", str(filled), "--out", str(out))
    other = tmp_path / "other"
    _, other_key, _ = _run("keys", "init", "--home", str(other))
    code, text, _ = _run("verify", "bundle", str(out / "bundles" / "b0.json"), "--pubkey", other_key.strip())
    assert code == 3 and "bad-signature" in text and "checkpoint-signature" in text


def test_verify_bundle_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    code, _, err = _run("verify", "bundle", str(bad))
    assert code == 1 and "not a bundle" in err
    code, _, err = _run("verify", "bundle", str(tmp_path / "missing.json"))
    assert code == 1 and "no bundle" in err


def test_export_without_ledger_and_bad_since(tmp_path: Path) -> None:
    assert "no ledger" in _run("export", "dboms", "--home", str(tmp_path), "--out", str(tmp_path / "o"))[2]
    code, _, err = _run("export", "dboms", "--home", str(tmp_path), "--out", str(tmp_path / "o"), "--since", "-1")
    assert code == 2 and "--since" in err  # a bad option value is a usage error


def _edit_row(home: Path, sequence: int, column: str, edit: Callable[[str], str]) -> None:
    """Change one column of one row behind the store's back, then put its triggers back as they were."""
    db = sqlite3.connect(home / "battles.db")
    triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    (value,) = db.execute(f"SELECT {column} FROM battles WHERE sequence = ?", (sequence,)).fetchone()
    db.execute(f"UPDATE battles SET {column} = ? WHERE sequence = ?", (edit(str(value)), sequence))
    for _, sql in triggers:
        db.execute(sql)
    db.commit()
    db.close()


def _flip(text: str, at: int) -> str:
    """One character of ``text`` changed to another printable one."""
    return text[:at] + ("1" if text[at] == "0" else "0") + text[at + 1:]


def _other_signature(text: str) -> str:
    """The entry with one character of its Ed25519 signature changed (still base64 of 64 bytes)."""
    document = json.loads(text)
    signature = document["sigma_judge"]["signatures"][0]
    signature["sig"] = _flip(signature["sig"], 5)
    return canonicalize(document).decode()


def _recompute_leaf(home: Path) -> None:
    """After entry 4's dbom changed, its leaf is recomputed so that only the signature can tell."""
    db = sqlite3.connect(home / "battles.db")
    triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    (data,) = db.execute("SELECT dbom FROM battles WHERE sequence = 4").fetchone()
    db.execute("UPDATE battles SET leaf_hash = ? WHERE sequence = 4", (leaf_hash(str(data).encode()).hex(),))
    for _, sql in triggers:
        db.execute(sql)
    db.commit()
    db.close()


@pytest.fixture
def eight(home: Path) -> Path:
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 8)
    return home


@pytest.mark.parametrize(("column", "edit", "first"), [
    ("raw_result", lambda t: _flip(t, t.index('"cis_score":') + 14),
     "entry 4: result-edited: raw_result does not hash to result_sha256"),
    ("dbom", lambda t: _flip(t, t.index('"result_sha256":"') + 20),
     "entry 4: entry-edited: the dbom column changed after it was signed"),
    ("cis_score", lambda t: "0.99",
     "entry 4: column-edited: cis_score is 0.99 but the signed entry says"),
    ("sigma_judge", _other_signature, "entry 4: bad-signature: sigma_judge does not verify with the judge key"),
    ("leaf_hash", lambda t: _flip(t, 10), "entry 4: leaf-mismatch: leaf_hash column is not SHA-256(0x00 ‖ dbom)"),
])
def test_verify_names_the_changed_entry_first(eight: Path, column: str, edit: Callable[[str], str],
                                              first: str) -> None:
    """Root cause first: whatever of entry 4 changed, the first line names entry 4, never a consequence."""
    if column == "sigma_judge":
        _edit_row(eight, 4, "dbom", edit)
        _recompute_leaf(eight)
    else:
        _edit_row(eight, 4, column, edit)
    code, out, err = _run("verify", "ledger", "--home", str(eight))
    assert code == 3 and "Traceback" not in out + err
    lines = out.splitlines()
    assert lines[0].startswith(first), lines[:3]
    assert not any(line.lstrip().startswith(("entry 0", "entry 1", "entry 2", "entry 3")) for line in lines), lines
