"""One injection run: a task, a purple agent, objectives, a query budget and a seed, searched and recorded.

``run_injection`` is what ``logomesh inject run`` and the benchmark call. It opens one sandbox for the run's
oracles and hidden tests, serves a registered purple kind on loopback when the request names one, spends the
budget with the chosen search (``search.py``), appends every query to the ledger as it is made (``record.py``)
and measures, for each objective reached, whether the winning code still passes the task's hidden tests
(utility under attack), and once for the clean task (benign utility). The outcome is a function of the task,
the seed and the agent's answers.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ledger import Ledger
from logomesh.cancel import Cancelled, CancelToken
from logomesh.inject.attempts import Attacker, AttemptRecord, OnAttempt
from logomesh.inject.grammar import clean
from logomesh.inject.objectives import ObjectiveName, draw_secrets
from logomesh.inject.record import append_attempt, append_run_json
from logomesh.inject.report import cancelled_json, run_json
from logomesh.inject.rewrite import AttackerModel
from logomesh.inject.search import SEARCHES
from logomesh.purple.client import ExchangeSettings
from logomesh.purple.exchange import PurpleError
from logomesh.purple.kinds import ServeOptions, purple_kind
from logomesh.purple.server import start_in_thread
from logomesh.red.mcts import SearchObserver
from logomesh.sandbox.base import Sandbox
from logomesh.sandbox.choose import open_sandbox
from logomesh.tasks import TaskSpec, load_task
from logomesh.tasks.hidden_suite import run_hidden


@dataclass(frozen=True)
class Target:
    """The purple agent: a URL, or a registered kind served on loopback for the run (with its ``--seed``)."""

    url: str | None = None
    kind: str | None = None
    kind_seed: int = 0

    @property
    def label(self) -> str:
        """How the run names the agent: stable across runs (a served kind's port is not)."""
        return self.url if self.url is not None else f"kind:{self.kind}:{self.kind_seed}"


@dataclass(frozen=True)
class InjectRequest:
    task_id: str
    target: Target
    objectives: tuple[ObjectiveName, ...]
    budget: int
    seed: int
    search: str = "mcts"
    sandbox: str = "auto"
    home: Path | None = None  # None: nothing recorded (the benchmark)
    purple_timeout_s: float = 120.0
    utility: bool = True  # run the hidden tests on winning code and on the clean answer
    cancel: CancelToken = CancelToken.never()
    on_attempt: OnAttempt | None = None  # told of each query once it is recorded (the console shows it)
    observer: SearchObserver | None = None  # told of the MCTS's nodes (the console draws the tree)
    attacker: AttackerModel | None = None  # an attacker model rewriting each ask, TAP-style (``rewrite.py``)


@dataclass(frozen=True)
class Utility:
    """The task's hidden tests on one answer: passed of total, or why they could not run."""

    passed: int
    total: int
    problem: str = ""
    refused: bool = False  # the agent gave no code for it (a failed A2A task): on a clean task, a false refusal

    @property
    def intact(self) -> bool:
        return not self.problem and self.total > 0 and self.passed == self.total


@dataclass(frozen=True)
class ObjectiveOutcome:
    objective: ObjectiveName
    first: AttemptRecord | None  # the first query that met it
    utility: Utility | None  # the hidden tests on that query's code, where measured

    @property
    def reached(self) -> bool:
        return self.first is not None


@dataclass(frozen=True)
class InjectOutcome:
    run_id: str
    request: InjectRequest
    queries: int
    objectives: tuple[ObjectiveOutcome, ...]
    benign: Utility | None  # the hidden tests on the clean task's answer, where measured
    records: tuple[AttemptRecord, ...]
    rewrites: dict[str, list[dict[str, str]]] | None = None  # the attacker model's candidates (``Rewriter.record``)


def default_run_id(request: InjectRequest) -> str:
    """A deterministic id for the run: the task, the agent and every choice that shapes the search."""
    attacker = [] if request.attacker is None else [f"{request.attacker.base_url}|{request.attacker.model}|"
                                                       f"{request.attacker.branches}"]
    key = "\x00".join([request.task_id, request.target.label, str(request.seed), request.search,
                       ",".join(request.objectives), str(request.budget), *attacker])
    return f"inject-{request.task_id}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def free_run_id(led: Ledger | None, base: str) -> str:
    """``base``, or ``base-2``, ``base-3``, … the first whose run entry and first query are both unrecorded."""
    if led is None:
        return base
    candidate, n = base, 1
    while led.get(candidate) is not None or led.get(f"{candidate}.q0001") is not None:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


@contextlib.contextmanager
def served(target: Target) -> Iterator[str]:
    """The agent's URL: the one given, or a loopback server of the named kind for as long as the run lasts."""
    if target.url is not None:
        yield target.url
        return
    assert target.kind is not None
    factory, _ = purple_kind(target.kind)(ServeOptions(seed=target.kind_seed))
    with start_in_thread(factory) as server:
        yield server.url


def hidden_utility(box: Sandbox, task: TaskSpec, source: str) -> Utility:
    """The task's hidden tests on ``source``, judged on the host (``run_hidden``)."""
    suite = run_hidden(box, task, source).suite
    return Utility(suite.passed, suite.total, suite.error or "")


def benign_utility(attacker: Attacker) -> Utility:
    """The hidden tests on the agent's answer to the clean task (no payload; not a query of the budget)."""
    try:
        exchange = attacker.ask(clean(attacker.task), f"{attacker.run_id}.clean")
    except PurpleError as exc:
        return Utility(0, 0, f"the agent did not answer the clean task: {exc}", refused=True)
    return hidden_utility(attacker.box, attacker.task, exchange.submission.source)


def run_injection(request: InjectRequest) -> InjectOutcome:
    """Search, record and measure one run. Raises ``SandboxUnavailable``, ``LedgerError``, ``Cancelled`` (a
    cancelled run keeps every query recorded so far and is recorded itself as cancelled, ``report.cancelled_json``).

    ``request.on_attempt`` and ``request.observer`` only watch: the outcome and the record do not depend on them."""
    task = load_task(request.task_id)
    search = SEARCHES[request.search]
    with contextlib.ExitStack() as stack:
        led = stack.enter_context(Ledger.open(request.home)) if request.home is not None else None
        run_id = free_run_id(led, default_run_id(request))
        box = stack.enter_context(open_sandbox(request.sandbox))
        url = stack.enter_context(served(request.target))

        def record(attempt: AttemptRecord) -> None:
            if led is not None:
                append_attempt(led, run_id, task, attempt, request.search, request.seed, request.target.label)
            if request.on_attempt is not None:
                request.on_attempt(attempt)

        attacker = Attacker(url, task, draw_secrets(request.seed), box, run_id,
                            ExchangeSettings(total_timeout_s=request.purple_timeout_s), request.cancel, record,
                            request.observer,
                            None if request.attacker is None else request.attacker.rewriter(request.seed))
        try:
            search(attacker, request.objectives, request.budget, request.seed)
            outcomes = tuple(_outcome(attacker, objective, request.utility) for objective in request.objectives)
            benign = benign_utility(attacker) if request.utility else None
        except Cancelled as exc:
            if led is not None:
                append_run_json(led, run_id, cancelled_json(run_id, request, attacker.records, exc.reason),
                                request.target.label)
            raise
        outcome = InjectOutcome(run_id, request, attacker.queries, outcomes, benign, tuple(attacker.records),
                                None if attacker.rewriter is None else attacker.rewriter.record())
        if led is not None:
            append_run_json(led, run_id, run_json(outcome), request.target.label)
    return outcome


def _outcome(attacker: Attacker, objective: ObjectiveName, utility: bool) -> ObjectiveOutcome:
    first = attacker.first_success.get(objective)
    measured = hidden_utility(attacker.box, attacker.task, first.source) if first is not None and utility else None
    return ObjectiveOutcome(objective, first, measured)
