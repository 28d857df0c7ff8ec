"""``--sandbox auto`` with Docker unreachable: bubblewrap takes over, or one line says why neither works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.sandbox import SandboxUnavailable, open_sandbox

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.bwrap
def test_auto_falls_back_to_bubblewrap_when_docker_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/dead.sock")
    box = open_sandbox("auto")
    try:
        assert box.backend == "bwrap"
    finally:
        box.close()


def test_auto_with_neither_backend_is_one_line_naming_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/dead.sock")
    monkeypatch.setenv("LOGOMESH_ROOTFS", str(tmp_path / "no-roots"))
    with pytest.raises(SandboxUnavailable) as refused:
        open_sandbox("auto")
    message = str(refused.value)
    assert message.startswith("no sandbox works here (docker: ") and "; bwrap: " in message
    assert "\n" not in message


def test_a_battle_with_neither_backend_is_refused_before_it_starts(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/dead.sock", "LOGOMESH_ROOTFS": str(tmp_path / "none")}
    home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-m", "logomesh", "battle", "run", "--task", "rate-limiter", "--mock",
                           "good", "--home", str(home)], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logomesh: error: the battle cannot start: no sandbox works"), lines
    assert "sandbox doctor" in lines[0]
    assert not home.exists()  # nothing recorded, not even the state folder
