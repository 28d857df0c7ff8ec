"""Pre-flight: everything a battle needs, checked before anything is recorded.

A battle that cannot start (a bad number or battle id, no sandbox that works, a purple agent that does not
answer or does not offer the protocol asked for) raises ``BattleSetupError`` here with one line naming the
fix, and is not recorded. Once a battle has started, a failure is recorded as before (``battle.play_battle``).
``run_battle`` runs them; a campaign runs ``check_environment`` once, before its first battle.
"""

from __future__ import annotations

import math

from logomesh.battle.request import BattleRequest, BattleSetupError


class EnvironmentProblem(BattleSetupError):
    """The arguments are fine but this machine or the agent is not ready (exit 1, not 2)."""


def seconds_problem(name: str, value: float) -> str | None:
    """Why ``value`` is not a finite, positive number of seconds, or ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return f"{name} must be a finite, positive number of seconds, not {value!r}"
    return None


def check_inputs(request: BattleRequest) -> None:
    """The request's own values: the battle id rule of the ledger, finite positive budgets."""
    from ledger import LedgerError
    from ledger.dbom import check_battle_id

    try:
        check_battle_id(request.battle_id)
    except LedgerError as exc:
        raise BattleSetupError(str(exc)) from None
    for name, value in (("red budget", request.red_budget_s), ("purple timeout", request.purple_timeout_s)):
        if problem := seconds_problem(name, value):
            raise BattleSetupError(problem)


def sandbox_problem(kind: str) -> str | None:
    """Open and close a sandbox of ``kind``: ``None`` if one works, else why not and the fix."""
    from logomesh.sandbox.base import SandboxBroken, SandboxUnavailable
    from logomesh.sandbox.choose import open_sandbox  # a probe, closed at once: not the battle's box

    try:
        open_sandbox(kind).close()
    except (SandboxUnavailable, SandboxBroken) as exc:
        return f"{exc} (see 'logomesh sandbox doctor')"
    return None


def check_environment(sandbox: str | None, purple_urls: tuple[str, ...] = (), protocol: str | None = None,
                      timeout_s: float = 10.0) -> None:
    """A sandbox of kind ``sandbox`` works (``None``: not checked here) and every purple agent answers with the
    protocol asked for."""
    from logomesh.purple.probe import agent_problem

    for url in purple_urls:  # the agents first: asking is cheaper than opening a sandbox
        if problem := agent_problem(url, protocol, timeout_s):
            raise EnvironmentProblem(problem)
    if sandbox is not None and (problem := sandbox_problem(sandbox)):
        raise EnvironmentProblem(problem)


