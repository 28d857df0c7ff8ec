"""Build the sandbox: offline (debootstrap + ``docker import``) or online (Dockerfile).

Both builds leave two things that hold the same files: the Docker image
``logomesh-sandbox:<version>-py<PYTHON_VERSION>`` and its unpacked root
filesystem in the cache (``root_dir``), which the bubblewrap backend binds
read-only as its ``/``. So both backends run the same interpreter (CPython
``PYTHON_VERSION`` with pytest), whatever Python the host has. Both builds are
idempotent: what already exists is left alone unless ``force`` is set (a
missing root is exported from an existing image). Every failure is an
``ImageBuildError`` whose message is one line naming the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from logomesh import __version__

IMAGE_REPOSITORY = "logomesh-sandbox"
PYTHON_VERSION = "3.13"  # the sandbox's CPython, stated in the task prompt; Debian trixie ships 3.13
# The folders the box's interpreter imports from (standard library, lib-dynload, dist-packages: Debian's and the
# python image's layouts), as paths inside the box: the harness server records every module opened there
# (``harness/server.py``, ``ImportWatch``), and bubblewrap gives each box its own copy of their folders.
LIBRARY = (f"/usr/lib/python{PYTHON_VERSION}", "/usr/lib/python3", f"/usr/local/lib/python{PYTHON_VERSION}")
DEBIAN_SUITE = "trixie"
DEBIAN_PACKAGES = "python3,python3-pytest"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
SANDBOX_USER = "65534:65534"  # nobody:nogroup, present in Debian's base /etc/passwd
DOCKERFILE = Path(__file__).with_name("Dockerfile")

Log = Callable[[str], None]


class ImageBuildError(RuntimeError):
    """The image could not be built; the message is one line naming the fix."""


@dataclass(frozen=True)
class BuildResult:
    tag: str
    image_id: str  # "" for a root-only build
    built: bool  # False: the image (or, root-only, the root) already existed and was kept
    root: str  # the unpacked root filesystem bubblewrap binds


def image_tag(version: str = __version__) -> str:
    """The tag names the interpreter too, so an image with another Python is never taken for this one."""
    return f"{IMAGE_REPOSITORY}:{version}-py{PYTHON_VERSION}"


def root_dir(tag: str | None = None) -> Path:
    """Where the build keeps the unpacked root of ``tag``: ``<roots>/<tag>``.

    ``<roots>`` is ``$LOGOMESH_ROOTFS``, else ``$XDG_CACHE_HOME/logomesh/rootfs``, else
    ``~/.cache/logomesh/rootfs``; deliberately not under ``$LOGOMESH_CACHE``, which is pointed elsewhere
    to start the reference cache cold and must not take the interpreter away with it.
    """
    if os.environ.get("LOGOMESH_ROOTFS"):
        roots = Path(os.environ["LOGOMESH_ROOTFS"])
    else:
        roots = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "logomesh" / "rootfs"
    return roots / (tag or image_tag()).replace(":", "-").replace("/", "-")


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


def build_offline(
    *, force: bool = False, log: Log | None = None, tag: str | None = None, root_only: bool = False
) -> BuildResult:
    """debootstrap a minimal Debian with python3 and pytest into the cache and ``docker import`` it.

    ``root_only``: keep the root for bubblewrap and skip Docker (hosts without an engine).
    """
    tag = tag or image_tag()
    root = root_dir(tag)
    if root_only:
        if not force and root.is_dir():
            return BuildResult(tag, "", built=False, root=str(root))
    else:
        _check_engine()
        if not force and (found := existing_image_id(tag)):
            if not root.is_dir():
                _export_root(tag, root, log)
            return BuildResult(tag, found, built=False, root=str(root))
    _require("debootstrap")
    partial = _fresh_partial(root)
    try:
        if log:
            log(f"debootstrap {DEBIAN_SUITE} (minbase + {DEBIAN_PACKAGES}) into {partial}")
        _run(
            ["debootstrap", "--variant=minbase", f"--include={DEBIAN_PACKAGES}", DEBIAN_SUITE, str(partial),
             DEBIAN_MIRROR],
            "debootstrap",
        )
        _trim_rootfs(partial)
        image_id = "" if root_only else _import_root(partial, tag, log)
        _install_root(partial, root)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return BuildResult(tag, image_id, built=True, root=str(root))


def _fresh_partial(root: Path) -> Path:
    """An empty folder beside ``root`` to build in; renamed to ``root`` only when complete."""
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    return partial


def _install_root(partial: Path, root: Path) -> None:
    """Replace ``root`` by the completed ``partial`` (a sandbox opening meanwhile sees the old or the new)."""
    old = root.with_name(root.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if root.is_dir():
        os.rename(root, old)
    os.rename(partial, root)
    shutil.rmtree(old, ignore_errors=True)


def _import_root(root: Path, tag: str, log: Log | None) -> str:
    if log:
        log(f"docker import as {tag}")
    tar = subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-c", "."], capture_output=True, check=False)
    if tar.returncode != 0:
        raise ImageBuildError(f"tar of the root filesystem failed: {tar.stderr.decode(errors='replace')[:200]}")
    return _run(
        ["docker", "import", "--change", f"USER {SANDBOX_USER}", "--change", "WORKDIR /work",
         "--change", 'CMD ["python3"]', "-", tag],
        "docker import",
        stdin=tar.stdout,
    )


def _export_root(tag: str, root: Path, log: Log | None) -> None:
    """Unpack the image's files into ``root`` (``docker export``), so bubblewrap runs the image's interpreter."""
    if log:
        log(f"docker export {tag} into {root}")
    partial = _fresh_partial(root)
    partial.mkdir()
    container = _run(["docker", "create", tag], "docker create")
    try:
        with subprocess.Popen(["docker", "export", container], stdout=subprocess.PIPE) as export:
            untar = subprocess.run(
                ["tar", "-C", str(partial), "--numeric-owner", "-x"], stdin=export.stdout, capture_output=True,
                check=False, timeout=900,
            )
        if export.returncode != 0 or untar.returncode != 0:
            raise ImageBuildError(f"docker export of {tag} failed: {untar.stderr.decode(errors='replace')[:200]}")
        _trim_rootfs(partial)
        _install_root(partial, root)
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, timeout=60, check=False)
        shutil.rmtree(partial, ignore_errors=True)


def _trim_rootfs(root: Path) -> None:
    """Drop caches and the root's home skeleton, which the sandbox never needs, and make the work mount point."""
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale",
                "root"):
        target = root / sub
        if target.is_dir():
            mode = target.stat().st_mode & 0o7777
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True, exist_ok=True)
            target.chmod(mode)
    (root / "work").mkdir(exist_ok=True)


def build_online(*, force: bool = False, log: Log | None = None, tag: str | None = None) -> BuildResult:
    """``docker build`` from the packaged Dockerfile (``FROM python:3.13-slim``, pytest); needs a registry."""
    tag = tag or image_tag()
    _check_engine()
    if not force and (found := existing_image_id(tag)):
        if not root_dir(tag).is_dir():
            _export_root(tag, root_dir(tag), log)
        return BuildResult(tag, found, built=False, root=str(root_dir(tag)))
    if log:
        log(f"docker build -t {tag} (needs Docker Hub; use --offline without it)")
    with tempfile.TemporaryDirectory(prefix="logomesh-build-") as tmp:
        shutil.copy(DOCKERFILE, Path(tmp) / "Dockerfile")
        _run(["docker", "build", "-q", "-t", tag, tmp], "docker build (try: logomesh sandbox build --offline)")
    found = existing_image_id(tag)
    if found is None:
        raise ImageBuildError(f"docker build reported success but {tag} is missing")
    _export_root(tag, root_dir(tag), log)
    return BuildResult(tag, found, built=True, root=str(root_dir(tag)))
