"""``logomesh verify ledger|bundle``: offline verification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import EXIT_VERIFY_FAILED, HomeOption, JsonOption, fail
from logomesh.home import resolve_home
from logomesh.plural import counted

if TYPE_CHECKING:
    from ledger.keys import VerifierKey
    from ledger.verify import VerifyReport

app = typer.Typer(help="Verify the ledger, an exported bundle or a campaign report.", no_args_is_help=True)

PubkeyOption = Annotated[
    list[str] | None,
    typer.Option("--pubkey", help="A judge verifier key (name+keyid+base64) or a file holding one; repeatable."),
]


def load_pubkeys(values: list[str] | None) -> list[VerifierKey]:
    return [load_pubkey(v) for v in values or []]


def load_pubkey(value: str) -> VerifierKey:
    """A verifier key from the option's text or from the file it names; fails with one line."""
    from ledger import LedgerError
    from ledger.keys import parse_verifier_key

    text = value
    if "+" not in value or Path(value).is_file():
        path = Path(value)
        if not path.is_file():
            fail(f"--pubkey {value!r} is neither a verifier key nor a file: pass the output of 'logomesh keys show'")
        text = path.read_text(encoding="utf-8")
    try:
        return parse_verifier_key(text)
    except LedgerError as exc:
        fail(f"--pubkey: {exc}")


def read_saved_checkpoint(path: Path) -> str:
    """A checkpoint note from a note file, or from the ``checkpoint`` field of an exported index or bundle."""
    if not path.is_file():
        fail(f"--checkpoint {path}: no such file")
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        try:
            note = json.loads(text).get("checkpoint")
        except (ValueError, AttributeError):
            note = None
        if not isinstance(note, str):
            fail(f"--checkpoint {path}: JSON without a 'checkpoint' note")
        return note
    return text


@app.command("ledger")
def ledger(
    home: HomeOption = None,
    checkpoint: Annotated[
        list[Path] | None,
        typer.Option("--checkpoint", help="A checkpoint saved earlier (note, export index or bundle); repeatable."),
    ] = None,
    pubkey: PubkeyOption = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Processes checking entries (default: 1 below 10,000 entries, "
                                              "else the usable cores up to 4); the report is the same."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Recompute every hash, signature, proof and checkpoint of the ledger; exit 3 on any problem."""
    from ledger import LedgerError
    from ledger.verify import verify_ledger

    if workers is not None and workers < 1:
        fail("--workers must be at least 1", 2)
    keys = load_pubkeys(pubkey)
    saved = [read_saved_checkpoint(p) for p in checkpoint or []]
    try:
        report = verify_ledger(resolve_home(home, create=False), pubkeys=keys or None, saved_checkpoints=saved,
                               workers=workers)
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        _print_problems(report)
        rate = report.size / report.seconds if report.seconds > 0 else 0.0
        status = "OK" if report.ok else f"FAILED ({counted(len(report.problems), 'problem')})"
        print(f"ledger {status}: {report.size} entries, {report.checkpoints} checkpoints, {report.blobs} blobs, "
              f"root {report.root.hex()}, {len(saved)} saved checkpoints, {report.seconds:.2f}s ({rate:.0f} entries/s)"
              + ("" if keys else "; key taken from the ledger itself, pass --pubkey to pin it"))
        print(_judge_key_line(report))
    if not report.ok:
        raise typer.Exit(EXIT_VERIFY_FAILED)


SHOWN_CONSEQUENCES = 10


def _print_problems(report: VerifyReport) -> None:
    """The root cause first (the first failing entry and why, else the first problem found), then at most
    ``SHOWN_CONSEQUENCES`` of the others and a count of the rest by kind; ``--json`` lists every one."""
    if not report.problems:
        return
    root, *rest = report.ordered()
    print(f"{root.line()}")
    if not rest:
        return
    print(f"root cause above; {counted(len(rest), 'more problem')}, which may follow from it:")
    for problem in rest[:SHOWN_CONSEQUENCES]:
        print(f"  {problem.line()}")
    hidden = rest[SHOWN_CONSEQUENCES:]
    if hidden:
        kinds: dict[str, int] = {}
        for problem in hidden:
            kinds[problem.kind] = kinds.get(problem.kind, 0) + 1
        tally = ", ".join(f"{kind} x{n}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        print(f"  ... and {len(hidden)} more ({tally}): --json lists every one")


def _judge_key_line(report: VerifyReport) -> str:
    """Which key the ledger is written with, and which keys signed which entries when that is not one key."""
    if report.judge_key is None:
        return "judge key: none found (no --pubkey, no key in the ledger or its keys/ folder)"
    line = f"written with judge key {report.judge_key.fingerprint} ({report.judge_key.encode()})"
    runs = report.signers
    if len(runs) > 1 or (runs and runs[0].key != report.judge_key.encode()):
        line += "; signed by " + ", ".join(
            f"{r.fingerprint} (entries {r.first}-{r.last})" for r in runs)
    return line


@app.command("bundle")
def bundle(
    file: Annotated[Path, typer.Argument(help="A bundle written by 'logomesh export dboms'.")],
    pubkey: PubkeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Verify one exported compliance bundle offline: signature, H(Δ), inclusion proof, checkpoint."""
    from ledger import LedgerError
    from ledger.bundle import verify_bundle
    from ledger.export import read_bundle

    keys = load_pubkeys(pubkey)
    try:
        check = verify_bundle(read_bundle(file), keys)
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(check.as_dict(), indent=2))
    else:
        for kind, detail in check.problems:
            print(f"entry {check.sequence}: {kind}: {detail}")
        status = "OK" if check.ok else f"FAILED ({counted(len(check.problems), 'problem')})"
        print(f"bundle {status}: battle {check.battle_id}, entry {check.sequence} of {check.tree_size}, "
              f"H(Δ) {check.result_sha256}, key {check.key}"
              + (" (taken from the bundle: pass --pubkey to pin it)" if check.key_from_bundle else ""))
    if not check.ok:
        raise typer.Exit(EXIT_VERIFY_FAILED)


@app.command("report")
def report(
    file: Annotated[Path, typer.Argument(help="A report written by 'logomesh campaign report ID --format json|html'.")],
    home: HomeOption = None,
    pubkey: PubkeyOption = None,
) -> None:
    """Recompute every number of a campaign report from the signed entries under its checkpoint; exit 3 on a change."""
    from ledger import LedgerError
    from logomesh.campaign.plan import PlanError
    from logomesh.campaign.verify_report import ReportFileError, read_report, verify_report

    keys = load_pubkeys(pubkey)
    try:
        check = verify_report(resolve_home(home, create=False), read_report(file), keys)
    except (ReportFileError, PlanError, LedgerError) as exc:
        fail(str(exc))
    for problem in check.problems:
        print(problem)
    status = "OK" if check.ok else f"FAILED ({counted(len(check.problems), 'problem')})"
    print(f"report {status}: campaign {check.campaign_id}, {check.entries} entries proven under checkpoint "
          f"{check.tree_size} root {check.root[:16]}…" + ("; every number recomputed from them" if check.ok else ""))
    if not check.ok:
        raise typer.Exit(EXIT_VERIFY_FAILED)
