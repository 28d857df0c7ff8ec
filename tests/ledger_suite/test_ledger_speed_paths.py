"""The shortcuts the append and verify paths take give exactly what the general code gives.

Speed itself is measured by ``benchmarks/ledger_bench.py``, never here; these tests hold the shortcuts
to the bytes and reports of the plain paths (canonical JSON, the DSSE envelope, the DBOM file copy) and
check the scheduling that shares verification between this process and worker processes.
"""

from __future__ import annotations

import base64
import hashlib
import random
import sqlite3
import sys
import threading
from array import array
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import rfc8785
from ledger_fixtures import ATTRS, as_an_older_release_left_it, fill, make_inputs, make_result

from ledger import Ledger, LedgerError, files
from ledger import entry_checks as checks
from ledger.canonical import canonical_object, canonicalize, member_bytes, plain_string_bytes
from ledger.dbom import check_dbom, encode_vector, envelope_bytes, sign_entry, statement, statement_bytes
from ledger.keys import SignerKey
from ledger.verify import verify_ledger

KEY = SignerKey("logomesh-judge", bytes(range(32)))
AWKWARD = ["", "plain", 'a"b', "a\\b", "new\nline", "\x00", "\x1f", "\x7f", "é", "雪", "😀", "a/b+c=="]


@pytest.mark.parametrize("text", AWKWARD)
def test_a_plain_string_is_written_as_json_writes_it_and_others_are_left_to_json(text: str) -> None:
    fast = plain_string_bytes(text)
    if fast is not None:
        assert fast == rfc8785.dumps(text)
    plain = text.isascii() and not any(c in text for c in '"\\') and all(ord(c) >= 0x20 for c in text)
    assert (fast is not None) == plain


@pytest.mark.parametrize("text", AWKWARD)
def test_the_envelope_shortcut_gives_canonical_bytes_for_any_field(text: str) -> None:
    envelope = sign_entry({"battle_id": "b1", "result_sha256": "00" * 32, "result": {}, "schema": "x"},
                          KEY)["sigma_judge"]
    variants = [{**envelope, "payload": text}, {**envelope, "payloadType": text},
                {**envelope, "signatures": [{"keyid": text, "sig": "AA=="}]},
                {**envelope, "signatures": [{"keyid": "ab", "sig": text}]},
                {**envelope, "signatures": [*envelope["signatures"], {"keyid": "x", "sig": "y"}]},
                {**envelope, "extra": text}, {"payload": text}]
    for variant in variants:
        assert envelope_bytes(variant) == rfc8785.dumps(variant)


def test_remembered_flat_objects_never_mix_up_equal_looking_values() -> None:
    # 1 == True == 1.0 in Python, and a memo keyed on them would return one's bytes for another.
    for value in ({"n": 1}, {"n": True}, {"n": 1.0}, {"n": "1"}, {"n": 1}, {"n": 2**60}):
        try:
            expected: bytes | str = rfc8785.dumps(value)
        except rfc8785.CanonicalizationError:
            expected = "refused"
        try:
            got: bytes | str = member_bytes(value)
        except LedgerError:
            got = "refused"
        assert got == expected, value


def test_the_vector_memo_tells_minus_zero_from_zero() -> None:
    assert encode_vector([0.0, 1.5])["data"] != encode_vector([-0.0, 1.5])["data"]
    assert base64.b64decode(encode_vector([-0.0])["data"]) == b"\x00\x00\x00\x80"


def test_check_dbom_decodes_a_payload_that_is_not_the_expected_text(tmp_path: Path) -> None:
    document = sign_entry({"battle_id": "b1", "result_sha256": hashlib.sha256(b"{}").hexdigest(), "result": {},
                           "schema": "logomesh-dbom/2"}, KEY)
    assert check_dbom(document, [KEY.verifier]).problems == []
    envelope = document["sigma_judge"]
    # The same bytes in another base64 spelling is not the canonical text: decoded, it is still the statement.
    padded = {**envelope, "payload": envelope["payload"] + "\n"}
    assert [k for k, _ in check_dbom({**document, "sigma_judge": padded}, [KEY.verifier]).problems] == [
        "bad-signature", "malformed"]
    broken = {**envelope, "payload": "not base64!"}
    assert [k for k, _ in check_dbom({**document, "sigma_judge": broken}, [KEY.verifier]).problems] == [
        "bad-signature", "malformed"]


def test_read_up_to_reads_whole_short_files_and_stops_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    files.write_new(path, b"x" * 70_000)
    assert files.read_up_to(path, 10) == b"x" * 10
    assert files.read_up_to(path, 100_000) == b"x" * 70_000
    files.write_new(path, b"short")  # write_new truncates what was there
    assert path.read_bytes() == b"short"


def test_a_dbom_file_with_bytes_beyond_the_row_is_reported(ledger: Ledger) -> None:
    fill(ledger, 2)
    as_an_older_release_left_it(ledger.home)
    path = ledger.dbom_dir / "b1.json"
    path.write_bytes(path.read_bytes() + b" ")
    assert [(p.kind, p.sequence) for p in verify_ledger(ledger.home).problems] == [("dbom-file", 1)]


def test_a_sqlite_error_during_an_append_is_a_ledger_error_and_records_nothing(ledger: Ledger) -> None:
    fill(ledger, 1)
    db = sqlite3.connect(ledger.db_path)
    db.execute("CREATE TRIGGER no_nodes BEFORE INSERT ON nodes BEGIN SELECT RAISE(ABORT, 'no'); END")
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match="ledger refused the append: no"):
        ledger.append("b9", make_result("b9"), make_inputs(9), ATTRS)
    assert ledger.size() == 1 and [c.size for c in ledger.checkpoints()] == [1]


def _run_shared(
    folder: Path, tasks: list[int], pool_workers: int, hold: threading.Event | None = None,
    hold_after_taking: bool = False,
) -> tuple[list[int], dict[int, list[str]]]:
    """Tasks shared between this thread and a pool of threads standing in for worker processes."""
    ran: dict[int, list[str]] = {}
    lock = threading.Lock()

    def record(task: int, where: str) -> int:
        with lock:
            ran.setdefault(task, []).append(where)
        return task * 10

    def remote(job: tuple[checks.Claims, int, int]) -> int | None:
        claims, index, task = job
        if hold is not None and not hold_after_taking:
            hold.wait()
        if not claims.take(index):
            return None
        if hold is not None and hold_after_taking:
            hold.wait()
        return record(task, "worker")

    with ThreadPoolExecutor(pool_workers) as pool:
        claims = checks.Claims(folder)
        results = list(checks.shared(pool, remote, lambda task: record(task, "here"), tasks, claims))
        if hold is not None:
            hold.set()
    return results, ran


def test_shared_tasks_run_once_in_each_place_and_come_back_in_order(tmp_path: Path) -> None:
    tasks = list(range(40))
    results, ran = _run_shared(tmp_path, tasks, pool_workers=2)
    assert results == [t * 10 for t in tasks]
    # A task runs in one place, or (a worker had begun it and not finished) in both: never twice in one.
    assert all(sorted(set(where)) == sorted(where) for where in ran.values()) and sorted(ran) == tasks


def test_a_worker_that_took_a_task_and_stalls_does_not_hold_this_process(tmp_path: Path) -> None:
    hold = threading.Event()  # the worker takes tasks, then gets no CPU until the run is over
    results, ran = _run_shared(tmp_path, list(range(6)), pool_workers=1, hold=hold, hold_after_taking=True)
    assert results == [t * 10 for t in range(6)]
    assert all("here" in where for where in ran.values())


def test_this_process_does_every_task_when_the_workers_never_start(tmp_path: Path) -> None:
    hold = threading.Event()  # the workers are stuck (busy machine, slow start) until the run is over
    results, ran = _run_shared(tmp_path, list(range(6)), pool_workers=1, hold=hold)
    assert results == [t * 10 for t in range(6)]
    assert all(where == ["here"] for where in ran.values())


def test_a_claim_is_taken_once_across_processes_and_never_after_the_run(tmp_path: Path) -> None:
    claims = checks.Claims(tmp_path / "claims")
    (tmp_path / "claims").mkdir()
    assert claims.take(3) and not claims.take(3) and claims.take(4)
    (tmp_path / "claims" / "3").unlink()
    (tmp_path / "claims" / "4").unlink()
    (tmp_path / "claims").rmdir()
    assert not claims.take(5)  # the run is over: a worker starting late takes nothing


def test_a_chunk_checked_in_a_worker_gives_what_this_process_finds(ledger: Ledger) -> None:
    fill(ledger, 7)
    db = sqlite3.connect(ledger.db_path)
    db.execute("DROP TRIGGER battles_no_update")
    db.execute("UPDATE battles SET cis_score = 0.99 WHERE sequence = 2")
    db.commit()
    db.close()
    timeline = [(-1, [ledger.verifier.encode()])]
    task = (str(ledger.home), 0, 6, timeline)
    in_worker = checks._check_range(task)
    with ledger.connect() as conn:
        here = list(checks._sequential(ledger.home, conn, checks.KeyChain([], ledger.verifier, [ledger.verifier])))
    assert in_worker == here
    assert [(f.sequence, [k for k, _ in f.problems]) for f in in_worker if f.problems] == [(2, ["column-edited"])]


def test_workers_and_one_process_give_the_same_report_over_many_chunks(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(ledger, 30)
    db = sqlite3.connect(ledger.db_path)
    db.execute("DROP TRIGGER battles_no_update")
    db.execute("UPDATE battles SET status = 'edited' WHERE sequence IN (1, 17, 29)")
    db.commit()
    db.close()
    monkeypatch.setattr(checks, "CHUNK", 2)
    one = verify_ledger(ledger.home, workers=1).as_dict()
    several = verify_ledger(ledger.home, workers=3).as_dict()
    for report in (one, several):
        report.pop("seconds")
    assert one == several
    assert [(p["sequence"], p["kind"]) for p in one["problems"] if p["sequence"] is not None][:3] == [
        (1, "column-edited"), (17, "column-edited"), (29, "column-edited")]


def test_appended_bytes_are_those_of_the_general_encoder(ledger: Ledger) -> None:
    vector = [0.1 * i - 1.0 for i in range(384)]
    attributes = {**ATTRS, "note": 'quote " and é'}
    receipt = ledger.append("b-x", make_result("b-x"), make_inputs(1), attributes, vector)
    stored = ledger.get("b-x")
    assert stored is not None
    data = receipt.leaf_data
    assert data == stored.leaf_data
    assert data == rfc8785.dumps(stored.dbom) == canonicalize(stored.dbom)
    assert hashlib.sha256(b"\x00" + data).hexdigest() == receipt.leaf_hash


def test_spare_cores_counts_idle_cores_and_trusts_no_short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks.os, "cpu_count", lambda: 2)
    assert checks.spare_cores(None, (0, 100), 3) == 3  # nothing to measure with: what was asked
    assert checks.spare_cores((0, 0), (5, 10), 3) == 3  # too short a window to tell
    assert checks.spare_cores((0, 0), (100, 200), 3) == 1  # one core idle of two
    assert checks.spare_cores((0, 0), (5, 200), 3) == 0  # both busy: verify checks alone
    assert checks.spare_cores((0, 0), (200, 200), 1) == 1  # never more than asked


def test_verify_with_no_spare_core_reports_what_one_process_does(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(ledger, 5)
    ledger.rotate_key(new_seed=b"\x42" * 32)
    fill(ledger, 5, start=5)
    db = sqlite3.connect(ledger.db_path)
    db.execute("DROP TRIGGER battles_no_update")
    db.execute("UPDATE battles SET cis_score = 0.99 WHERE sequence IN (1, 8)")
    db.commit()
    db.close()
    alone = verify_ledger(ledger.home)
    monkeypatch.setattr(checks, "CHUNK", 2)
    monkeypatch.setattr(checks, "spare_cores", lambda before, after, wanted: 0)
    busy = verify_ledger(ledger.home, workers=2)
    assert [(p.kind, p.sequence) for p in alone.problems] == [(p.kind, p.sequence) for p in busy.problems]
    assert [p.detail for p in alone.problems] == [p.detail for p in busy.problems]
    assert [r.as_dict() for r in alone.signers] == [r.as_dict() for r in busy.signers]
    assert ("column-edited", 8) in [(p.kind, p.sequence) for p in busy.problems]


@pytest.mark.parametrize("names", [["b", "a", "_"], AWKWARD, list(reversed(AWKWARD)), ["\ufb33", "\U0001f600", "a"],
                                   ["\U0001f600", "\ufb33", "a"]])
def test_an_object_composed_from_members_orders_its_names_as_rfc8785_does(names: list[str]) -> None:
    value = {name: [i, name] for i, name in enumerate(names)}
    assert canonical_object({name: member_bytes(item) for name, item in value.items()}) == rfc8785.dumps(value)


@pytest.mark.parametrize("battle_id", ["b1", "a\n", "a b", 'q"', "é", 7, None])
@pytest.mark.parametrize("digest", ["ab" * 32, "AB" * 32, "ab" * 31, None])
def test_the_signed_statement_of_any_entry_is_its_canonical_form(battle_id: object, digest: object) -> None:
    entry = {"battle_id": battle_id, "result_sha256": digest, "result": {"n": 1.0}}
    assert statement_bytes(entry, canonicalize(entry)) == rfc8785.dumps(statement(entry))


def test_the_vector_is_packed_as_array_packs_it_at_every_edge_of_float32() -> None:
    rng = random.Random(384)
    edges = [0.0, -0.0, 1e-45, 1e-40, 3.4028235e38, 3.40282356e38, -3.4028235e38, 5, True, 0.1]  # ...56e38 rounds down
    for _ in range(300):
        vector = [rng.choice([rng.uniform(-1, 1), rng.uniform(-3.4e38, 3.4e38), rng.choice(edges)]) for _ in range(16)]
        packed = array("f", vector)
        if sys.byteorder == "big":
            packed.byteswap()
        assert base64.b64decode(encode_vector(vector)["data"]) == packed.tobytes(), vector
    for bad in ([1e39], [3.4028236e38], [float("nan")], ["x"], [None]):  # ...36e38 rounds to infinity
        with pytest.raises(LedgerError):
            encode_vector(bad)
