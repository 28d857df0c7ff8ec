#!/usr/bin/env bash
# Lint, type-check and run the whole test suite in ./.venv (made by scripts/setup.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check logomesh ledger tui tests benchmarks || exit 1
.venv/bin/mypy || exit 1
.venv/bin/pytest "$@"
status=$?
if [ "$status" -eq 5 ]; then
    echo "test: pytest collected no tests; that is a failure here" >&2
    exit 1
fi
exit "$status"
