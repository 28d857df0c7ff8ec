"""Build the sandbox image: offline (debootstrap + ``docker import``) or online (Dockerfile).

Both builds are idempotent: an image already tagged ``logomesh-sandbox:<version>``
is left alone unless ``force`` is set. Every failure is an ``ImageBuildError``
whose message is one line naming the fix.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from logomesh import __version__

IMAGE_REPOSITORY = "logomesh-sandbox"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
SANDBOX_USER = "65534:65534"  # nobody:nogroup, present in Debian's base /etc/passwd
DOCKERFILE = Path(__file__).with_name("Dockerfile")

Log = Callable[[str], None]


class ImageBuildError(RuntimeError):
    """The image could not be built; the message is one line naming the fix."""


@dataclass(frozen=True)
class BuildResult:
    tag: str
    image_id: str
    built: bool  # False: the image already existed and was kept


def image_tag(version: str = __version__) -> str:
    return f"{IMAGE_REPOSITORY}:{version}"


def _run(argv: list[str], what: str, *, stdin: bytes | None = None, timeout: float = 900.0) -> str:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise ImageBuildError(f"{argv[0]} not found: apt-get install {_package_for(argv[0])}") from None
    except subprocess.TimeoutExpired:
        raise ImageBuildError(f"{what} took longer than {timeout:.0f} s; check the network to the mirror") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        last = tail[-1] if tail else f"exit status {done.returncode}"
        raise ImageBuildError(f"{what} failed: {last}")
    return done.stdout.decode(errors="replace").strip()


def _package_for(tool: str) -> str:
    return {"docker": "docker.io", "debootstrap": "debootstrap", "tar": "tar"}.get(tool, tool)


def _require(tool: str) -> None:
    if shutil.which(tool) is None:
        raise ImageBuildError(f"{tool} not found: apt-get install {_package_for(tool)}")


def existing_image_id(tag: str) -> str | None:
    """The id of ``tag`` if the local Docker engine has it, else None (also when Docker is down)."""
    if shutil.which("docker") is None:
        return None
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, timeout=30, check=False
    )
    return done.stdout.decode().strip() if done.returncode == 0 else None


def _check_engine() -> None:
    _require("docker")
    probe = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        raise ImageBuildError("Docker is not running: start it (e.g. `sudo systemctl start docker` or `dockerd &`)")


def build_offline(*, force: bool = False, log: Log | None = None, tag: str | None = None) -> BuildResult:
    """debootstrap a minimal Debian with python3 and ``docker import`` it."""
    tag = tag or image_tag()
    _check_engine()
    if not force and (found := existing_image_id(tag)):
        return BuildResult(tag, found, built=False)
    _require("debootstrap")
    with tempfile.TemporaryDirectory(prefix="logomesh-rootfs-") as tmp:
        root = Path(tmp) / "root"
        if log:
            log(f"debootstrap {DEBIAN_SUITE} (minbase + python3) into {root}")
        _run(
            ["debootstrap", "--variant=minbase", "--include=python3", DEBIAN_SUITE, str(root), DEBIAN_MIRROR],
            "debootstrap",
        )
        _trim_rootfs(root)
        if log:
            log(f"docker import as {tag}")
        tar = subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-c", "."], capture_output=True, check=False)
        if tar.returncode != 0:
            raise ImageBuildError(f"tar of the root filesystem failed: {tar.stderr.decode(errors='replace')[:200]}")
        image_id = _run(
            ["docker", "import", "--change", f"USER {SANDBOX_USER}", "--change", "WORKDIR /work",
             "--change", 'CMD ["python3"]', "-", tag],
            "docker import",
            stdin=tar.stdout,
        )
    return BuildResult(tag, image_id, built=True)


def _trim_rootfs(root: Path) -> None:
    """Drop caches the sandbox never needs and make the work mount point."""
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale"):
        target = root / sub
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True, exist_ok=True)
    (root / "work").mkdir(exist_ok=True)


def build_online(*, force: bool = False, log: Log | None = None, tag: str | None = None) -> BuildResult:
    """``docker build`` from the packaged Dockerfile (``FROM python:3.11-slim``); needs a registry."""
    tag = tag or image_tag()
    _check_engine()
    if not force and (found := existing_image_id(tag)):
        return BuildResult(tag, found, built=False)
    if log:
        log(f"docker build -t {tag} (needs Docker Hub; use --offline without it)")
    with tempfile.TemporaryDirectory(prefix="logomesh-build-") as tmp:
        shutil.copy(DOCKERFILE, Path(tmp) / "Dockerfile")
        _run(["docker", "build", "-q", "-t", tag, tmp], "docker build (try: logomesh sandbox build --offline)")
    found = existing_image_id(tag)
    if found is None:
        raise ImageBuildError(f"docker build reported success but {tag} is missing")
    return BuildResult(tag, found, built=True)
