"""The one place the console reads the ledger library: rows, entry details, verification, export.

The screens see only the small typed records below, so a change in the ledger
library's API is absorbed here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger import Ledger, LedgerError, StoredBattle
from ledger.export import BUNDLE_DIR, INDEX_FILE, export_dboms
from ledger.verify import verify_ledger
from logomesh.battle.result import BattleResult, ResultError
from logomesh.findings import EVIDENCE_INPUT
from logomesh.plural import counted

ProgressCallback = Callable[[int, int], None]


class LedgerUnavailable(RuntimeError):
    """A ledger feature the console needs is missing or failed; ``str()`` says which."""


@dataclass(frozen=True)
class LedgerRow:
    sequence: int
    timestamp: str
    battle_id: str
    task_id: str
    purple: str
    cis: float | None  # None: no score to show (a cancelled battle, or none recorded)
    status: str

    @property
    def cis_text(self) -> str:
        return "—" if self.cis is None else f"{self.cis:.3f}"

    def cells(self) -> tuple[str, ...]:
        """Most telling first, so an 80-column table shows what matters without scrolling."""
        return (str(self.sequence), self.battle_id, self.cis_text, self.status, self.task_id, self.purple,
                self.timestamp)


def shown_cis(cis_score: float | None, status: str | None) -> float | None:
    """The CIS a row shows: none for a cancelled battle, which was never scored (its 0 is not a score)."""
    return None if status == "cancelled" else cis_score


@dataclass(frozen=True)
class SubmissionText:
    """What the purple agent answered, re-read from the response bytes the ledger stores."""

    source: str
    tests: str
    rationale: str


@dataclass(frozen=True)
class EntryDetail:
    row: LedgerRow
    dbom: dict[str, Any]
    signature: str
    inclusion: str
    input_hashes: dict[str, str] = field(default_factory=dict)
    result: BattleResult | None = None  # None: the entry holds no battle result (a key rotation's, say)
    submission: SubmissionText | None = None
    submission_problem: str = ""  # why ``submission`` is None
    evidence: dict[tuple[str, str], str] = field(default_factory=dict)  # per finding: ``evidence_for``


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    summary: str
    marks: dict[int, tuple[bool, str]]


def short_time(timestamp: str) -> str:
    """``2026-11-23T00:51:38.123456Z`` → ``2026-11-23 00:51:38``."""
    return timestamp[:19].replace("T", " ")


def _result_of(stored: StoredBattle) -> BattleResult | None:
    """The entry's result, parsed once; ``None`` when it is no battle result."""
    try:
        return BattleResult.from_json(stored.result)
    except ResultError:
        return None


def _purple_of(stored: StoredBattle | None) -> str:
    if stored is None:
        return "?"
    result = _result_of(stored)
    return (result.purple_agent if result is not None else "") or stored.attributes.get("purple_agent") or ""


def _submission_of(stored: StoredBattle) -> tuple[SubmissionText | None, str]:
    """The purple's code, tests and rationale, parsed from the stored response bytes the way ``replay`` does."""
    raw = stored.inputs.get("purple_response")
    if raw is None:
        return None, "no purple response is stored: the battle ended before the purple agent answered"
    from logomesh.battle.replay import ReplayError, stored_submission

    try:
        submission = stored_submission(raw, stored.attributes.get("purple_protocol", ""))
    except ReplayError as exc:
        return None, str(exc)
    return SubmissionText(submission.source, submission.tests, submission.rationale), ""


def _signature_status(led: Ledger, stored: StoredBattle) -> str:
    problems = led.signature_problems(stored)
    if not problems:
        return "valid: DSSE envelope signed by a trusted judge key, H(Δ) matches"
    return "INVALID: " + "; ".join(f"{kind}: {detail}" for kind, detail in problems)


def _inclusion_status(led: Ledger, stored: StoredBattle) -> str:
    inclusion = led.inclusion(stored)
    checkpoint = inclusion.checkpoint
    if checkpoint is None:
        return "no checkpoint yet"
    if not inclusion.covered:
        return f"not yet covered by the latest checkpoint (size {checkpoint.size})"
    verdict = "verified" if inclusion.verified else "FAILED"
    hashes = "\n".join(f"  {step.hex()}" for step in inclusion.proof)
    return (f"{verdict} against checkpoint size {checkpoint.size}, root {checkpoint.root.hex()[:16]}…, "
            f"{len(inclusion.proof)} proof hashes\n{hashes}").rstrip()


class LedgerSource:
    """Reads the ledger under ``home``; every call opens and closes it."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def rows(self) -> list[LedgerRow]:
        with Ledger.open(self.home) as led:
            rows: list[LedgerRow] = []
            for entry in led.entries():
                try:
                    stored = led.get(entry.battle_id)
                except LedgerError:
                    stored = None
                rows.append(LedgerRow(
                    sequence=entry.sequence,
                    timestamp=short_time(entry.timestamp),
                    battle_id=entry.battle_id,
                    task_id=entry.task_id or "",
                    purple=_purple_of(stored),
                    cis=shown_cis(entry.cis_score, entry.status),
                    status=entry.status or "",
                ))
            return rows

    def battle_ids(self) -> list[str]:
        with Ledger.open(self.home) as led:
            return [entry.battle_id for entry in led.entries()]

    def detail(self, battle_id: str) -> EntryDetail:
        with Ledger.open(self.home) as led:
            stored = led.get(battle_id)
            if stored is None:
                raise LedgerUnavailable(f"no entry for battle {battle_id!r}")
            summary = led.entry(battle_id)
            assert summary is not None  # led.get found its row
            row = LedgerRow(stored.sequence, short_time(summary.timestamp), battle_id, summary.task_id or "",
                            _purple_of(stored), shown_cis(summary.cis_score, summary.status), summary.status or "")
            signature = _signature_status(led, stored)
            inclusion = _inclusion_status(led, stored)
        hashes = {name: str(info.get("sha256", "")) for name, info in dict(stored.dbom.get("inputs", {})).items()}
        submission, problem = _submission_of(stored)
        return EntryDetail(row=row, dbom=stored.dbom, signature=signature, inclusion=inclusion, input_hashes=hashes,
                           result=_result_of(stored), submission=submission, submission_problem=problem,
                           evidence=parse_evidence(stored.inputs.get(EVIDENCE_INPUT)))

    def verify(self, on_progress: ProgressCallback) -> VerifyReport:
        """Each entry's signature and inclusion (one progress step each), then ``ledger.verify.verify_ledger``.

        The library's full pass is the authority; its problems that name an entry mark that row,
        the others (checkpoints, triggers, keys) go in the summary.
        """
        ids = self.battle_ids()
        total = len(ids) + 1
        marks: dict[int, tuple[bool, str]] = {}
        with Ledger.open(self.home) as led:
            for done, battle_id in enumerate(ids, start=1):
                sequence, reason = _entry_problem(led, battle_id)
                if sequence is not None:
                    marks[sequence] = (reason == "", reason)
                on_progress(done, total)
        report = verify_ledger(self.home, workers=None)  # worker processes for a large ledger
        on_progress(total, total)
        ledger_wide: list[str] = []
        ordered = report.ordered()
        for problem in ordered:
            if problem.sequence is None:
                ledger_wide.append(f"{problem.kind}: {problem.detail}")
                continue
            _, earlier = marks.get(problem.sequence, (True, ""))
            reasons = [r for r in earlier.split("; ") if r]
            reason = f"{problem.kind}: {problem.detail}"
            if reason not in reasons:
                reasons.append(reason)
            marks[problem.sequence] = (False, "; ".join(reasons))
        failed = sum(not ok for ok, _ in marks.values())
        ok = report.ok and failed == 0
        if ok:
            summary = (f"verified: {report.size} entries, {report.checkpoints} checkpoints, "
                       f"root {report.root.hex()[:12]}…")
        else:
            cause = ordered[0].line() if ordered else next(
                f"entry {seq}: {why}" for seq, (fine, why) in sorted(marks.items()) if not fine)
            summary = (f"verification FAILED: {cause} ({counted(failed, 'bad entry', 'bad entries')}, "
                       f"{counted(len(ledger_wide), 'ledger problem')})")
        return VerifyReport(ok=ok, summary=summary, marks=marks)

    def export(self, sequences: Sequence[int], out: Path) -> Path:
        """A compliance folder for ``sequences``: what ``export dboms`` writes, limited to those entries."""
        wanted = set(sequences)
        if not wanted:
            raise LedgerUnavailable("no entries chosen for export")
        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / "export"
            export_dboms(self.home, staged, since=min(wanted))
            index = json.loads((staged / INDEX_FILE).read_text(encoding="utf-8"))
            index["bundles"] = [b for b in index["bundles"] if b["sequence"] in wanted]
            (out / BUNDLE_DIR).mkdir(parents=True, exist_ok=True)
            for bundle in index["bundles"]:
                shutil.copyfile(staged / bundle["file"], out / bundle["file"])
            for name in ("checkpoint.txt", "judge.pub"):
                shutil.copyfile(staged / name, out / name)
            (out / INDEX_FILE).write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        missing = wanted - {b["sequence"] for b in index["bundles"]}
        if missing:
            raise LedgerUnavailable(f"entries {sorted(missing)} are not covered by the latest checkpoint yet")
        return out


def _entry_problem(led: Ledger, battle_id: str) -> tuple[int | None, str]:
    """(sequence, "" or the reason) for one entry's signature and inclusion."""
    try:
        stored = led.get(battle_id)
    except LedgerError as exc:
        return _sequence_of(led, battle_id), str(exc)
    if stored is None:
        return None, ""
    reasons: list[str] = []
    problems = led.signature_problems(stored)
    reasons.extend(f"{kind}: {detail}" for kind, detail in problems)
    if _inclusion_status(led, stored).startswith("FAILED"):
        reasons.append("inclusion: the entry is not in the checkpointed tree")
    return stored.sequence, "; ".join(reasons)


def _sequence_of(led: Ledger, battle_id: str) -> int | None:
    summary = led.entry(battle_id)
    return None if summary is None else summary.sequence


def parse_evidence(raw: bytes | None) -> dict[tuple[str, str], str]:
    """``{(family, summary): evidence}`` from the stored bytes; missing or malformed bytes read as none."""
    if not raw:
        return {}
    try:
        items = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    found: dict[tuple[str, str], str] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and item.get("evidence"):
            found[(str(item.get("family", "")), str(item.get("summary", "")))] = str(item["evidence"])
    return found


def evidence_of(home: Path, battle_id: str) -> dict[tuple[str, str], str]:
    """The evidence of each finding of ``battle_id``, keyed by (family, summary); none for an unknown battle."""
    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    return parse_evidence(stored.inputs.get(EVIDENCE_INPUT) if stored is not None else None)


def evidence_for(evidence: Mapping[tuple[str, str], str], family: str, summary: str) -> str:
    """The evidence recorded for the result's finding of ``family`` with ``summary``, or ``""``."""
    return evidence.get((family, summary), "")
