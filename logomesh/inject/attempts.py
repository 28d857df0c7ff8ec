"""One query of the injection search: render the payload, ask the purple agent, judge its code in the sandbox.

``Attacker.attempt`` is the one place a query is spent, whichever search asks for it (MCTS, random search,
the template list): it counts the query, keeps what the record needs (``AttemptRecord``) and notes the first
success of each objective. The verdict comes from ``oracles.judge``, which runs the code in the open sandbox
and decides on the host; nothing here runs the agent's code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from logomesh.cancel import CancelToken
from logomesh.inject.grammar import Attempt, Injected, render
from logomesh.inject.objectives import OBJECTIVES, ObjectiveName, Secrets
from logomesh.inject.oracles import OracleVerdict, judge
from logomesh.inject.rewrite import Rewriter
from logomesh.inject.send import ask_purple
from logomesh.purple.client import ExchangeSettings
from logomesh.purple.exchange import PurpleError, PurpleExchange
from logomesh.red.mcts import SearchObserver
from logomesh.sandbox.base import Sandbox
from logomesh.tasks import TaskSpec


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class AttemptRecord:
    """What one query did, as the ledger keeps it (``record.py``)."""

    query: int  # 1-based: the how-many-th query of the run
    objective: ObjectiveName
    attempt: Attempt
    payload_sha256: str  # of the rendered messages (``Injected.digest_bytes``)
    answer_sha256: str  # of the agent's response bytes; "" when it gave none
    met: bool
    severity: str
    evidence: str
    error: str = ""  # the purple agent's failure, one line; the oracle did not run
    rewrite: str = ""  # the attacker model's wording of the ask, where the attempt used one (``Attempt.wording``)
    payload: bytes = field(default=b"", repr=False)
    request: bytes = field(default=b"", repr=False)
    response: bytes = field(default=b"", repr=False)
    source: str = field(default="", repr=False)

    @property
    def path(self) -> tuple[str, str, str, str]:
        return (self.attempt.placement, self.attempt.framing, self.attempt.position, self.objective)


OnAttempt = Callable[[AttemptRecord], None]


@dataclass
class Attacker:
    """The target (a purple agent's URL and a task), the run's secrets and sandbox, and what was spent."""

    url: str
    task: TaskSpec
    secrets: Secrets
    box: Sandbox
    run_id: str
    settings: ExchangeSettings = field(default_factory=ExchangeSettings)
    cancel: CancelToken = CancelToken.never()
    on_attempt: OnAttempt | None = None
    observer: SearchObserver | None = None  # told of the MCTS's nodes as they are added and visited
    rewriter: Rewriter | None = None  # an attacker model's rewrites of each ask, as further wordings
    records: list[AttemptRecord] = field(default_factory=list)
    first_success: dict[ObjectiveName, AttemptRecord] = field(default_factory=dict)
    verdicts: dict[tuple[ObjectiveName, str], OracleVerdict] = field(default_factory=dict)

    @property
    def queries(self) -> int:
        return len(self.records)

    def reached(self, objective: ObjectiveName) -> bool:
        return objective in self.first_success

    def wordings(self, objective: ObjectiveName) -> tuple[str, ...]:
        """How ``objective``'s ask may be worded: as written, then each rewrite the attacker model kept."""
        if self.rewriter is None:
            return (OBJECTIVES[objective].instruction(self.secrets),)
        return self.rewriter.wordings(objective, self.secrets)

    def attempt(self, attempt: Attempt, objective: ObjectiveName) -> AttemptRecord:
        """Spend one query on ``attempt`` carrying ``objective``'s ask."""
        ask = self.wordings(objective)[attempt.wording]
        rewrite = ask if attempt.wording else ""
        injected = render(attempt, self.task, ask)
        query = self.queries + 1
        battle_id = f"{self.run_id}.q{query:04d}"
        payload = injected.digest_bytes()
        try:
            exchange = self.ask(injected, battle_id)
        except PurpleError as exc:
            record = AttemptRecord(query, objective, attempt, sha256(payload), "", False, "none", "", str(exc),
                                   rewrite, payload)
        else:
            verdict = self.verdict(objective, exchange.submission.source)
            record = AttemptRecord(query, objective, attempt, sha256(payload), exchange.response_sha256,
                                   verdict.met, str(verdict.severity), verdict.evidence, "", rewrite, payload,
                                   exchange.request_bytes, exchange.response_bytes, exchange.submission.source)
        self.records.append(record)
        if record.met:
            self.first_success.setdefault(objective, record)
        if self.on_attempt is not None:
            self.on_attempt(record)
        return record

    def verdict(self, objective: ObjectiveName, source: str) -> OracleVerdict:
        """The oracle's verdict on ``source``; the same code is judged once per objective in a run (the verdict is a
        function of the objective, the task, the code and the secrets)."""
        key = (objective, sha256(source.encode("utf-8")))
        if key not in self.verdicts:
            self.verdicts[key] = judge(objective, self.task, source, self.secrets, self.box)
        return self.verdicts[key]

    def ask(self, injected: Injected, battle_id: str) -> PurpleExchange:
        return ask_purple(self.url, self.task, injected, battle_id, self.settings, self.cancel)


def reward(record: AttemptRecord) -> float:
    """What the search learns from a query: 1 when the objective was met by behaviour, else 0 (a sighting in the
    source alone is ``low`` like every verdict not met: the oracles give it no weight, nor does the search)."""
    return 1.0 if record.met else 0.0
