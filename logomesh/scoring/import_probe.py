"""Where a submission fails on import: the line of ``solution.py`` and the exception, found in the sandbox.

The hidden suite says only that the import failed and with which exception
type. When it did (and only then), one script in the same sandbox imports the
module and reports the innermost ``solution.py`` frame of the traceback. The
answer is diagnostic text for the result and the console: it is produced by a
process that ran the submission, so it never enters a score.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox, SuiteRun

MARK = "logomesh-import-probe:"
IMPORT_FAILED = "import failed"
_SCRIPT = f"""import json, sys, traceback
sys.path.insert(0, ".")
try:
    import solution
except BaseException as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith("solution.py")]
    line = frames[-1].lineno if frames else getattr(exc, "lineno", None)
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    print("\\n{MARK}" + json.dumps({{"line": line, "type": type(exc).__name__, "message": text}}), flush=True)
"""


def _report(stdout: str) -> dict[str, object] | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            try:
                data = json.loads(line[len(MARK):])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def import_failure(box: Sandbox, source: str, timeout_s: float = 10.0) -> str | None:
    """``line N: Type: message`` for a module that raises on import; the exit, or ``None`` if it imported."""
    run = box.run_script({"solution.py": source}, _SCRIPT, timeout_s)
    if run.timed_out:
        return f"the import did not finish within {timeout_s:g} s"
    report = _report(run.stdout)
    if report is not None:
        where = f"solution.py line {report['line']}" if isinstance(report.get("line"), int) else "solution.py"
        message = f": {report['message']}" if report.get("message") else ""
        return f"{where}: {report.get('type', 'Exception')}{message}"
    if run.exit_code not in (0, None) or run.signal is not None:
        ended = f"signal {run.signal}" if run.signal is not None else f"exit code {run.exit_code}"
        return f"the process ended during the import ({ended})"
    return None


def locate_import_failure(box: Sandbox, source: str, hidden: SuiteRun) -> SuiteRun:
    """``hidden`` with its import error saying where, when the hidden suite reported one; else ``hidden``."""
    if not (hidden.error or "").startswith(IMPORT_FAILED):
        return hidden
    where = import_failure(box, source)
    return replace(hidden, error=f"{IMPORT_FAILED} at {where}") if where else hidden
