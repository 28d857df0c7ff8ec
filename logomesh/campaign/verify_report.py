"""``verify report``: check that a campaign report is what the signed ledger says, number by number.

Given a JSON report (or an HTML report, which embeds its JSON) and the ledger
home it was made from:

1. the report's checkpoint note must verify against the judge keys, and name
   the tree size and root the report states;
2. the ledger's tree of that size must have that root;
3. every entry of the campaign below that size gets an RFC 9162 inclusion proof
   against the root, and the DBOM checks (signature, H(Δ)); each must be a
   battle of the campaign's plan (the plan file is not signed: an edited plan
   that drops a battle is caught here);
4. the report is recomputed from exactly those entries and compared with the
   file, field by field;
5. for an HTML report, the page is rendered again from the recomputed report
   and what it shows compared with the file's page (``verify_page``): the
   numbers a person reads, not only the embedded JSON.

Any problem is listed; the caller exits 3 when there is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger import Ledger, LedgerError
from ledger.canonical import canonicalize
from ledger.checkpoint import CheckpointError, open_checkpoint
from ledger.dbom import dbom_problems
from ledger.keys import VerifierKey
from ledger.merkle import inclusion_proof, leaf_hash, root_from, verify_inclusion
from logomesh.campaign.html_report import EMBED_ID, render_html
from logomesh.campaign.plan import load_plan
from logomesh.campaign.provenance import Checkpoint, report_at
from logomesh.campaign.report_json import REPORT_FORMAT, report_json
from logomesh.campaign.verify_page import page_difference

_EMBED = re.compile(r'<script type="application/json" id="' + EMBED_ID + r'">(.*?)</script>', re.S)
MAX_LISTED = 20


class ReportFileError(ValueError):
    """The file is not a report this command can read; the message names the fix."""


@dataclass
class ReportCheck:
    campaign_id: str
    tree_size: int
    root: str
    entries: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class ReportFile:
    """A report as read: its JSON and, for an HTML report, the page it shows."""

    body: dict[str, Any]
    page: str | None = None


def read_report(path: Path) -> ReportFile:
    """The report's JSON from a JSON file, or from the block an HTML report embeds (with the page)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportFileError(f"cannot read {path}: {exc}") from None
    page = text if text.lstrip().startswith("<") else None
    if page is not None:
        found = _EMBED.search(text)
        if found is None:
            raise ReportFileError(f"{path} is HTML without an embedded report: write it with 'logomesh campaign "
                                  "report ID --format html'")
        text = found.group(1)
    try:
        body = json.loads(text)
    except ValueError:
        raise ReportFileError(f"{path} is not JSON: pass a report written with --format json or html") from None
    if not isinstance(body, dict) or body.get("format") != REPORT_FORMAT:
        got = body.get("format") if isinstance(body, dict) else None
        stated = "no format" if got is None else f"format {got!r}"
        raise ReportFileError(f"{path} is not a campaign report in format {REPORT_FORMAT} ({stated}): "
                              "write it again with 'logomesh campaign report ID --format json'")
    return ReportFile(body, page)


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Every place ``theirs`` (the file) differs from ``ours`` (recomputed), as ``path: file X, ledger Y``."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out: list[str] = []
        for key in sorted(set(ours) | set(theirs), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in theirs:
                out.append(f"{where}: missing from the report")
            elif key not in ours:
                out.append(f"{where}: in the report, not in the recomputed report")
            else:
                out += differences(ours[key], theirs[key], where)
        return out
    if isinstance(ours, list) and isinstance(theirs, list):
        out = [f"{path}: the report lists {len(theirs)} items, the ledger gives {len(ours)}"] \
            if len(ours) != len(theirs) else []
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    if type(ours) is not type(theirs) and not (isinstance(ours, int | float) and isinstance(theirs, int | float)
                                                and not isinstance(ours, bool) and not isinstance(theirs, bool)):
        return [f"{path}: report {json.dumps(theirs)}, ledger {json.dumps(ours)}"]
    return [] if ours == theirs else [f"{path}: report {json.dumps(theirs)}, ledger {json.dumps(ours)}"]


def _stated_checkpoint(body: dict[str, Any]) -> tuple[int, str, str, str | None]:
    provenance = body.get("provenance")
    checkpoint = provenance.get("checkpoint") if isinstance(provenance, dict) else None
    if not isinstance(checkpoint, dict):
        raise ReportFileError("the report names no checkpoint: it was made without a ledger")
    size, root, note = checkpoint.get("tree_size"), checkpoint.get("root"), checkpoint.get("note")
    if not isinstance(size, int) or not isinstance(root, str) or not isinstance(note, str):
        raise ReportFileError("the report's checkpoint lacks tree_size, root or note")
    if size < 0 or not re.fullmatch(r"[0-9a-f]{64}", root):
        raise ReportFileError("the report's checkpoint needs a tree_size of 0 or more and a 64-digit hex root")
    stamp = checkpoint.get("timestamp")
    return size, root, note, stamp if isinstance(stamp, str) else None


def _prove_entries(led: Ledger, campaign_id: str, size: int, root: bytes, keys: Sequence[VerifierKey],
                   check: ReportCheck) -> dict[str, int]:
    """Prove every entry of the campaign under the checkpoint; returns their battle ids and sequences."""
    proven: dict[str, int] = {}
    with led.connect() as conn:
        nodes = led.nodes(conn, size)
        for summary, document in led.documents_with("campaign_id", campaign_id):
            if summary.sequence >= size:
                continue
            check.entries += 1
            proven[summary.battle_id] = summary.sequence
            proof = inclusion_proof(summary.sequence, size, nodes)
            if not verify_inclusion(leaf_hash(canonicalize(document)), summary.sequence, size, proof, root):
                check.problems.append(f"entry {summary.sequence} ({summary.battle_id}): its inclusion proof does not "
                                      "lead to the checkpoint's root: the entry was changed")
            for kind, detail in dbom_problems(document, keys):
                check.problems.append(f"entry {summary.sequence} ({summary.battle_id}): {kind}: {detail}")
    return proven


def verify_report(home: Path, report: ReportFile, pubkeys: Sequence[VerifierKey] = ()) -> ReportCheck:
    """Check ``report`` against the ledger under ``home``; raises ReportFileError / LedgerError on unusable input."""
    body = report.body
    campaign_id = body.get("campaign_id")
    if not isinstance(campaign_id, str):
        raise ReportFileError("the report names no campaign_id")
    size, root_hex, note, stamp = _stated_checkpoint(body)
    plan = load_plan(home, campaign_id)
    check = ReportCheck(campaign_id, size, root_hex)
    with Ledger.open(home) as led:
        keys = list(pubkeys) or led.trusted_keys()
        try:
            signed = open_checkpoint(note, keys, origin=led.origin)
        except CheckpointError as exc:
            check.problems.append(f"checkpoint: {exc}")
        else:
            if (signed.size, signed.root.hex()) != (size, root_hex):
                check.problems.append(f"checkpoint: the signed note is for size {signed.size} root "
                                      f"{signed.root.hex()}, the report states size {size} root {root_hex}")
        if size > led.size():
            raise LedgerError(f"the report's checkpoint has {size} entries, the ledger under {home} only "
                              f"{led.size()}: check --home")
        with led.connect() as conn:
            actual = root_from(led.nodes(conn, size), size).hex()
        if actual != root_hex:
            check.problems.append(f"ledger: the tree of size {size} has root {actual}, not the report's {root_hex}")
        stored = {(c.size, c.root.hex()): c.timestamp for c in led.checkpoints()}
        timestamp = stored.get((size, root_hex), stamp or "")
        proven = _prove_entries(led, campaign_id, size, bytes.fromhex(root_hex), keys, check)
    rebuilt = report_at(home, plan, Checkpoint(size, root_hex, note, timestamp))
    recomputed = report_json(rebuilt)
    counted = {str(b["battle_id"]) for b in recomputed["battles"]}
    for battle_id, sequence in sorted(proven.items(), key=lambda item: item[1]):
        if battle_id not in counted:
            check.problems.append(f"entry {sequence} ({battle_id}) is a battle of campaign {campaign_id} under the "
                                  "checkpoint that the campaign's plan leaves out: the plan was changed")
    found = differences(recomputed, body)
    check.problems += found[:MAX_LISTED]
    if len(found) > MAX_LISTED:
        check.problems.append(f"… and {len(found) - MAX_LISTED} more differences")
    if report.page is not None:
        shown = page_difference(render_html(rebuilt), report.page)
        if shown is not None:
            check.problems.append(shown)
    return check
