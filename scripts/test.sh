#!/usr/bin/env bash
# Lint, type-check and run the tests in ./.venv (made by scripts/setup.sh).
#   bash scripts/test.sh           the fast tier: no test marked slow, two-backend suites on one backend
#   bash scripts/test.sh --full    everything, on both backends (what .ci/run runs)
# Other arguments go to pytest. Test files run in parallel (pytest-xdist, whole files per worker so a module's
# sandbox is opened once; LOGOMESH_TEST_WORKERS=N to choose); every run ends with its slowest durations.
set -uo pipefail
cd "$(dirname "$0")/.."
tier=fast
args=()
for arg in "$@"; do
    if [ "$arg" = "--full" ]; then tier=full; else args+=("$arg"); fi
done
# Both tiers wait on sandboxes more than they compute: two workers a core (measured on 2 cores: the fast tier
# 292 s against 423 s with one a core; the full tier 2,332 s against 2,503 s, each a clean-clone CI run).
workers="${LOGOMESH_TEST_WORKERS:-$(( $(nproc) * 2 ))}"
# Bytecode (and pytest's rewritten test modules) cached under .venv, never beside the sources, even where the
# environment says PYTHONDONTWRITEBYTECODE: every worker otherwise recompiles everything it imports (collection
# took 9.6 s a worker on 2 cores, 5.4 s from the cache).
export PYTHONDONTWRITEBYTECODE=
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$PWD/.venv/pycache}"
.venv/bin/ruff check logomesh ledger tui tests benchmarks || exit 1
.venv/bin/mypy || exit 1
started=$(date +%s)
# Files in collection order, the longest first (tests/tiers.py: heaviest_first), not xdist's by test count.
.venv/bin/pytest --tier "$tier" -n "$workers" --dist loadfile --no-loadscope-reorder --durations=25 --durations-min=1 \
    "${args[@]}"
status=$?
echo "test: the $tier tier took $(( $(date +%s) - started )) s (exit $status)" >&2
if [ "$status" -eq 5 ]; then
    echo "test: pytest collected no tests; that is a failure here" >&2
    exit 1
fi
exit "$status"
