"""The image build and the ``sandbox`` commands: real Docker where marked, real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.sandbox import SandboxUnavailable
from logomesh.sandbox.image import ImageBuildError, build_offline, existing_image_id, image_tag, root_dir

CLI = [sys.executable, "-c", "from logomesh.cli import main; main()"]


def logomesh(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, env=env)


def env_without_docker_engine() -> dict[str, str]:
    return {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}


def test_docker_down_is_one_line_naming_the_fix() -> None:
    from logomesh.sandbox.docker import DockerSandbox

    saved = os.environ.get("DOCKER_HOST")
    os.environ["DOCKER_HOST"] = "unix:///nonexistent/docker.sock"
    try:
        with pytest.raises(SandboxUnavailable, match="Docker is not running") as info:
            DockerSandbox()
    finally:
        if saved is None:
            os.environ.pop("DOCKER_HOST")
        else:
            os.environ["DOCKER_HOST"] = saved
    assert "\n" not in str(info.value)


@pytest.mark.skipif(shutil.which("docker") is None, reason="needs the docker CLI")
def test_build_without_engine_fails_with_one_line() -> None:
    done = logomesh("sandbox", "build", "--offline", env=env_without_docker_engine())
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "logomesh: error: Docker is not running: start it (e.g. `sudo systemctl start docker` or `dockerd &`)"
    ]
    assert "Traceback" not in done.stderr


@pytest.mark.docker
def test_missing_image_names_the_build_command() -> None:
    from logomesh.sandbox.docker import DockerSandbox

    with pytest.raises(SandboxUnavailable, match=r"run: logomesh sandbox build --offline"):
        DockerSandbox(tag="logomesh-sandbox:no-such-version")


@pytest.mark.docker
def test_offline_build_is_idempotent() -> None:
    before = existing_image_id(image_tag())
    result = build_offline()
    assert (result.built, result.image_id, result.tag) == (False, before, image_tag())
    done = logomesh("sandbox", "build", "--offline", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"tag": image_tag(), "image_id": before, "built": False,
                                       "root": str(root_dir())}


def test_root_only_build_needs_no_docker_engine() -> None:
    if not root_dir().is_dir():
        pytest.skip("no sandbox root here (run: logomesh sandbox build --offline)")
    done = logomesh("sandbox", "build", "--offline", "--root-only", "--json", env=env_without_docker_engine())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"tag": image_tag(), "image_id": "", "built": False, "root": str(root_dir())}


def test_root_only_without_offline_is_a_usage_error() -> None:
    done = logomesh("sandbox", "build", "--root-only")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["logomesh: error: --root-only builds with debootstrap: add --offline"]


@pytest.mark.docker
@pytest.mark.bwrap
def test_a_missing_root_is_exported_from_the_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an online build (or a cleared cache) relies on: bubblewrap then runs the image's own files."""
    from logomesh.sandbox.bwrap import BwrapSandbox

    env = {**os.environ, "LOGOMESH_ROOTFS": str(tmp_path)}
    done = logomesh("sandbox", "build", "--offline", "--json", env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["built"] is False and result["image_id"] == existing_image_id(image_tag())
    exported = Path(result["root"])
    assert exported.is_relative_to(tmp_path) and (exported / "usr" / "bin" / "python3").exists()
    assert "work" in os.listdir(exported)
    with monkeypatch.context() as patched:
        patched.setenv("LOGOMESH_ROOTFS", str(tmp_path))
        with BwrapSandbox() as box:
            run = box.run_script({}, "import sys\nprint(sys.version)\n")
    with BwrapSandbox() as box:  # the root the offline build unpacked itself
        built = box.run_script({}, "import sys\nprint(sys.version)\n")
    assert run.exit_code == 0 and run.stdout == built.stdout


@pytest.mark.docker
def test_missing_debootstrap_is_named(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    assert docker is not None
    (tmp_path / "docker").symlink_to(docker)
    saved = os.environ["PATH"]
    os.environ["PATH"] = str(tmp_path)
    try:
        with pytest.raises(ImageBuildError, match=r"^debootstrap not found: apt-get install debootstrap$"):
            build_offline(tag="logomesh-sandbox:test-never-built")
    finally:
        os.environ["PATH"] = saved


@pytest.mark.docker
@pytest.mark.bwrap
def test_doctor_reports_both_backends() -> None:
    done = logomesh("sandbox", "doctor", "--json")
    assert done.returncode == 0, done.stderr
    reports = {r["backend"]: r for r in json.loads(done.stdout)}
    assert reports["docker"]["ok"] and reports["docker"]["detail"].startswith("sha256:")
    assert reports["bwrap"]["ok"] and reports["bwrap"]["detail"].startswith("bwrap:")


def test_doctor_without_docker_explains_it() -> None:
    done = logomesh("sandbox", "doctor", env=env_without_docker_engine())
    first = done.stdout.splitlines()[0]
    assert first.startswith("docker") and "Docker is not running" in first
