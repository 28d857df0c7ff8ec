"""``logomesh keys init|show``: the judge's Ed25519 key."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from logomesh.commands.common import HomeOption, JsonOption, fail
from logomesh.home import resolve_home

app = typer.Typer(help="Create or show the judge key.", no_args_is_help=True)

NameOption = Annotated[str, typer.Option("--name", help="Key name shown in checkpoint signatures.")]


def _key_json(encoded: str) -> str:
    from ledger.keys import parse_verifier_key

    key = parse_verifier_key(encoded)
    return json.dumps({"name": key.name, "key_id": key.key_id_hex, "fingerprint": key.fingerprint,
                       "verifier_key": encoded, "ed25519_public_hex": key.public.hex()}, indent=2)


@app.command("init")
def init(home: HomeOption = None, name: NameOption = "logomesh-judge", as_json: JsonOption = False) -> None:
    """Create the judge key under --home/keys/ (mode 0600); never overwrites one."""
    from ledger import LedgerError
    from ledger.keys import create_key
    from ledger.store import KEYS_DIR

    keys_dir = resolve_home(home) / KEYS_DIR
    try:
        key = create_key(keys_dir, name)
    except LedgerError as exc:
        fail(str(exc))
    encoded = key.verifier.encode()
    print(_key_json(encoded) if as_json else encoded)
    typer.echo(f"created judge key {keys_dir / 'judge.key'} (mode 0600); give auditors the line above", err=True)


@app.command("show")
def show(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Print the public key in C2SP verifier-key format: name+hexkeyid+base64(0x01‖pubkey)."""
    from ledger import LedgerError
    from ledger.keys import VERIFIER_FILE, load_verifier, parse_verifier_key
    from ledger.store import KEYS_DIR, current_judge_key

    path = resolve_home(home, create=False)
    try:
        key = load_verifier(path / KEYS_DIR)
        recorded = current_judge_key(path)
    except LedgerError as exc:
        fail(str(exc))
    encoded = key.encode()
    if recorded is not None and recorded != encoded:  # a replaced judge.pub must not reach an auditor
        fail(f"{path / KEYS_DIR / VERIFIER_FILE} holds judge key {key.fingerprint}, but the ledger signs with "
             f"{parse_verifier_key(recorded).fingerprint}: the file was replaced; run 'logomesh verify ledger' "
             "and restore it")
    print(_key_json(encoded) if as_json else encoded)


@app.command("rotate")
def rotate(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Replace the judge key; the rotation is a ledger entry signed by the old key."""
    from ledger import Ledger, LedgerError
    from ledger.store import DB_FILE

    path = resolve_home(home, create=False)
    if not (path / DB_FILE).exists():
        fail(f"no ledger at {path / DB_FILE}: keys are rotated inside a ledger; check --home")
    try:
        with Ledger.open(path) as led:
            receipt = led.rotate_key()
            encoded = led.verifier.encode()
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps({"sequence": receipt.sequence, "verifier_key": encoded}, indent=2))
    else:
        print(encoded)
    typer.echo(f"rotated the judge key at entry {receipt.sequence}; the old private key is in "
               f"{path / 'keys' / 'retired'}: destroy it once you no longer need it", err=True)
