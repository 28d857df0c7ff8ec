"""The append API the battle pipeline calls, on a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
import stat
from array import array
from pathlib import Path

import pytest
from ledger_fixtures import ATTRS, fill, make_inputs, make_result, step_clock

from ledger import DuplicateBattleError, Ledger, LedgerError
from ledger.canonical import canonical_sha256, canonicalize
from ledger.checkpoint import open_checkpoint
from ledger.merkle import inclusion_proof, leaf_hash, root_from, verify_inclusion


def test_open_creates_layout_and_private_key(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    with Ledger.open(home) as led:
        assert led.size() == 0
    assert (home / "battles.db").is_file()
    assert (home / "checkpoints").is_dir() and not (home / "dboms").exists()  # DBOMs live in their rows
    key = home / "keys" / "judge.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    db = sqlite3.connect(home / "battles.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert key.read_text().strip() not in b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file()
                                                   and p != key).decode(errors="replace")


def test_append_returns_receipt_and_stores_everything(ledger: Ledger) -> None:
    result = make_result("battle-1", score=0.8125)
    receipt = ledger.append("battle-1", result, make_inputs(1), ATTRS, [0.5, 0.25])
    assert receipt.sequence == 0 and receipt.tree_size == 1
    assert receipt.result_sha256 == canonical_sha256(result)
    assert receipt.db_path == ledger.home / "battles.db"
    on_disk = json.loads(receipt.leaf_data)
    assert canonicalize(on_disk) == canonicalize(ledger.get("battle-1").dbom)  # type: ignore[union-attr]
    assert leaf_hash(canonicalize(on_disk)).hex() == receipt.leaf_hash
    row = sqlite3.connect(receipt.db_path).execute(
        "SELECT raw_result, result_sha256, cis_score FROM battles WHERE battle_id = 'battle-1'").fetchone()
    assert row[0].encode() == canonicalize(result) and row[1] == receipt.result_sha256 and row[2] == 0.8125


def test_get_returns_inputs_for_replay(ledger: Ledger) -> None:
    ledger.append("b-x", make_result("b-x"), make_inputs(7) | {"purple_response": b""}, ATTRS)
    stored = ledger.get("b-x")
    assert stored is not None
    assert stored.inputs["purple_request"] == make_inputs(7)["purple_request"]
    assert stored.inputs["purple_response"] == b""
    assert stored.result_sha256 == canonical_sha256(stored.result)
    assert stored.attributes == ATTRS and stored.intent_vector is None
    assert ledger.get("missing") is None


def test_the_intent_vector_reads_back_at_float32_precision(ledger: Ledger) -> None:
    vector = [0.1 * i - 1.0 for i in range(384)]
    ledger.append("b-v", make_result("b-v"), make_inputs(1), ATTRS, vector)
    stored = ledger.get("b-v")
    assert stored is not None and stored.intent_vector is not None
    assert stored.dbom["schema"] == "logomesh-dbom/3" and stored.dbom["judge_key"] == ledger.verifier.fingerprint
    assert stored.intent_vector == array("f", vector).tolist()  # each value rounded once, to float32
    assert stored.intent_vector != vector


def test_entries_in_order_with_summary_fields(ledger: Ledger) -> None:
    fill(ledger, 3)
    ledger.append("failed-1", make_result("failed-1", score=0.0, status="failed"), {}, {})
    rows = list(ledger.entries())
    assert [r.sequence for r in rows] == [0, 1, 2, 3]
    assert rows[1].battle_id == "b1" and rows[1].cis_score == 0.01 and rows[1].task_id == "rate-limiter"
    assert rows[3].status == "failed"
    assert rows[0].timestamp == "2026-01-02T03:04:05.000000Z"
    assert [r.sequence for r in ledger.entries(since=2)] == [2, 3]


def test_every_append_signs_a_checkpoint_written_outside(ledger: Ledger) -> None:
    fill(ledger, 5)
    cps = ledger.checkpoints()
    assert [c.size for c in cps] == [1, 2, 3, 4, 5]
    latest = (ledger.checkpoint_dir / "latest").read_text()
    assert latest == cps[-1].note
    cp = open_checkpoint(latest, [ledger.verifier], origin=ledger.origin)
    with ledger.connect() as conn:
        assert cp.root == root_from(ledger.nodes(conn), 5)
        proof = inclusion_proof(2, 5, ledger.nodes(conn))
    dbom = ledger.get("b2").dbom  # type: ignore[union-attr]
    assert verify_inclusion(leaf_hash(canonicalize(dbom)), 2, 5, proof, cp.root)
    assert not verify_inclusion(leaf_hash(canonicalize(dbom)), 3, 5, proof, cp.root)
    history = (ledger.checkpoint_dir / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["size"] for line in history] == [1, 2, 3, 4, 5]


def test_duplicate_battle_is_refused_and_nothing_changes(ledger: Ledger) -> None:
    fill(ledger, 2)
    with pytest.raises(DuplicateBattleError, match="already in the ledger"):
        ledger.append("b1", make_result("b1"), {}, {})
    assert ledger.size() == 2 and len(ledger.checkpoints()) == 2
    ledger.append("b9", make_result("b9"), {}, {})
    assert ledger.size() == 3


@pytest.mark.parametrize("bad", ["../escape", "a/b", "", ".hidden", "x" * 129, "nul\x00", "back\\slash", "b1\n"])
def test_unsafe_battle_ids_are_refused(ledger: Ledger, bad: str) -> None:
    with pytest.raises(LedgerError, match="bad battle id"):
        ledger.append(bad, {"status": "failed"}, {}, {})
    assert ledger.size() == 0


def test_unrepresentable_result_is_refused(ledger: Ledger) -> None:
    with pytest.raises(LedgerError, match="RFC 8785"):
        ledger.append("nan", make_result("nan", score=float("nan")), {}, {})
    assert ledger.size() == 0


def test_result_for_another_battle_is_refused(ledger: Ledger) -> None:
    with pytest.raises(LedgerError, match="not 'b2'"):
        ledger.append("b2", make_result("b1"), {}, {})


def test_rows_cannot_be_updated_or_deleted(ledger: Ledger) -> None:
    fill(ledger, 2)
    db = sqlite3.connect(ledger.db_path)
    for sql in ("UPDATE battles SET cis_score = 1.0", "DELETE FROM battles", "DELETE FROM blobs",
                "UPDATE nodes SET hash = x'00'", "DELETE FROM checkpoints", "UPDATE meta SET value = ''"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(sql)


def test_same_inputs_and_clock_give_identical_ledgers(tmp_path: Path) -> None:
    from ledger.keys import create_key

    roots = []
    for name in ("one", "two"):
        home = tmp_path / name
        create_key(home / "keys", seed=bytes(32))
        with Ledger.open(home, clock=step_clock()) as led:
            fill(led, 4)
            roots.append((led.checkpoints()[-1].note, led.get("b2").leaf_data))  # type: ignore[union-attr]
    assert roots[0] == roots[1]


def test_batch_append_is_one_checkpoint(ledger: Ledger) -> None:
    from ledger import AppendRequest

    receipts = ledger.append_many([AppendRequest(f"m{i}", make_result(f"m{i}"), make_inputs(i), ATTRS)
                                   for i in range(10)])
    assert [r.sequence for r in receipts] == list(range(10))
    assert [c.size for c in ledger.checkpoints()] == [10]


def test_reopen_continues_the_same_tree(home: Path) -> None:
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 3)
        first = led.checkpoints()[-1]
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 2, start=3)
        assert led.size() == 5
        from ledger.merkle import MemoryTree, verify_consistency

        leaves = [bytes.fromhex(r[0]) for r in sqlite3.connect(led.db_path).execute(
            "SELECT leaf_hash FROM battles ORDER BY sequence")]
        tree = MemoryTree(leaves)
        from ledger.merkle import consistency_proof

        assert verify_consistency(3, 5, first.root, led.checkpoints()[-1].root, consistency_proof(3, 5, tree))


def test_lost_key_is_not_silently_replaced(home: Path) -> None:
    import shutil

    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 1)
    shutil.rmtree(home / "keys")
    with pytest.raises(LedgerError, match=r"is missing from .*restore"):
        Ledger.open(home)
    assert not (home / "keys" / "judge.key").exists()


def test_threads_sharing_one_ledger_get_one_order(ledger: Ledger) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(t: int) -> list[int]:
        return [ledger.append(f"t{t}-{i}", {"battle_id": f"t{t}-{i}", "status": "scored"}, {}, {}).sequence
                for i in range(15)]

    with ThreadPoolExecutor(4) as pool:
        sequences = sorted(s for seqs in pool.map(work, range(4)) for s in seqs)
    assert sequences == list(range(60))
    from ledger.verify import verify_ledger

    assert verify_ledger(ledger.home).ok


def test_ledger_imports_nothing_of_logomesh_or_ui() -> None:
    import subprocess
    import sys

    code = ("import sys, ledger, ledger.verify, ledger.export, ledger.bundle, ledger.keys; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('logomesh', 'tui', 'textual', 'rich')))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def _tagged(led: Ledger, count: int) -> None:
    """``count`` entries, every third tagged campaign ``c1``, the others ``c2``, one with no tag at all."""
    for i in range(count):
        attrs = {**ATTRS, "campaign_id": "c1" if i % 3 == 0 else "c2"} if i != 4 else ATTRS
        led.append(f"t{i}", make_result(f"t{i}"), make_inputs(i), attrs, None)


def test_documents_with_an_attribute_match_a_full_scan_and_use_an_index(ledger: Ledger, home: Path) -> None:
    from ledger.verify import verify_ledger

    _tagged(ledger, 12)
    scanned = [(s.sequence, d) for s, d in ledger.documents() if d["attributes"].get("campaign_id") == "c1"]
    found = [(s.sequence, d) for s, d in ledger.documents_with("campaign_id", "c1")]
    assert found == scanned and [seq for seq, _ in found] == [0, 3, 6, 9]
    assert list(ledger.documents_with("campaign_id", "nobody")) == []
    query = "SELECT sequence FROM battles WHERE json_extract(dbom, '$.attributes.campaign_id') = 'c1'"
    with sqlite3.connect(home / "battles.db") as db:
        plan = " ".join(str(r) for r in db.execute(f"EXPLAIN QUERY PLAN {query}"))
    assert "battles_attribute_campaign_id" in plan, plan
    later = ["u0", "u1"]
    for name in later:  # entries appended after the index exists are found too
        ledger.append(name, make_result(name), make_inputs(99), {**ATTRS, "campaign_id": "c1"}, None)
    assert [s.battle_id for s, _ in ledger.documents_with("campaign_id", "c1")][-2:] == later
    assert verify_ledger(home).ok


def test_documents_with_refuses_unsafe_names_and_scans_when_no_index_can_be_made(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tagged(ledger, 6)
    with pytest.raises(LedgerError, match="bad attribute name"):
        list(ledger.documents_with("x') --", "c1"))
    # A ledger on read-only media refuses CREATE INDEX (root here writes anyway, so the refusal is stood in for).
    monkeypatch.setattr(Ledger, "_ensure_index", lambda *args: False)
    assert [s.sequence for s, _ in ledger.documents_with("campaign_id", "c1")] == [0, 3]


def test_recorded_names_only_the_ids_the_ledger_holds(ledger: Ledger) -> None:
    fill(ledger, 3)
    wanted = [f"b{i}" for i in range(1200)] + ["b1", "nope"]  # more than one query's worth, a repeat, a stranger
    assert ledger.recorded(wanted) == {"b0", "b1", "b2"}
    assert ledger.recorded([]) == set()
