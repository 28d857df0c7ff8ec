"""The standalone bundle verifier printed in docs/audit.md works on real exports, and fails on tampered ones."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ledger_fixtures import fill, step_clock

from ledger import Ledger
from ledger.export import export_dboms
from ledger.keys import SignerKey, parse_verifier_key

DOC = Path(__file__).resolve().parents[2] / "docs" / "audit.md"


@pytest.fixture
def script(tmp_path: Path) -> Path:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    (code,) = [b for b in blocks if b.startswith('"""Verify a LogoMesh compliance bundle')]
    path = tmp_path / "verify_bundle.py"
    path.write_text(code)
    return path


@pytest.fixture
def exported(home: Path, tmp_path: Path) -> tuple[Path, str]:
    with Ledger.open(home, clock=step_clock()) as led:
        fill(led, 6)
        key = led.verifier.encode()
    out = tmp_path / "out"
    export_dboms(home, out)
    return out, key


def _run(script: Path, bundle: Path, key: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), str(bundle), key], capture_output=True, text=True, timeout=60)


def test_doc_script_accepts_every_exported_bundle(script: Path, exported: tuple[Path, str]) -> None:
    out, key = exported
    for i in range(6):
        done = _run(script, out / "bundles" / f"b{i}.json", key)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith(f"OK: battle b{i}") and f"entry {i} of 6" in done.stdout
        assert done.stdout.rstrip().endswith(f"signed with {parse_verifier_key(key).fingerprint}")


@pytest.mark.parametrize("tamper, why", [
    (lambda b: b["dbom"]["result"].update(cis_score=1.0), "differs from the signed statement"),
    (lambda b: b["dbom"].update(timestamp="2030-01-01T00:00:00.000000Z"), "differs from the signed statement"),
    (lambda b: b["inclusion_proof"]["hashes"].reverse(), "inclusion proof"),
    (lambda b: b.update(checkpoint=b["checkpoint"].replace("\n6\n", "\n7\n")), "checkpoint is not signed"),
])
def test_doc_script_rejects_tampering(script: Path, exported: tuple[Path, str], tamper: object, why: str) -> None:
    out, key = exported
    path = out / "bundles" / "b3.json"
    bundle = json.loads(path.read_text())
    tamper(bundle)  # type: ignore[operator]
    path.write_text(json.dumps(bundle))
    done = _run(script, path, key)
    assert done.returncode == 1 and why in done.stdout


def test_doc_script_rejects_another_key(script: Path, exported: tuple[Path, str]) -> None:
    out, _ = exported
    other = SignerKey("logomesh-judge", b"\x03" * 32).verifier.encode()
    done = _run(script, out / "bundles" / "b1.json", other)
    assert done.returncode == 1 and "not signed by this key" in done.stdout
