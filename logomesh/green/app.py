"""The green agent's card and ASGI app."""

from __future__ import annotations

from a2a.types import AgentSkill
from starlette.applications import Starlette

from logomesh import __version__
from logomesh.green.executor import GreenExecutor, GreenSettings
from logomesh.purple.server import AppFactory, agent_card, build_app

ASSESSMENT_SKILL = AgentSkill(
    id="logomesh-contextual-debt-assessment",
    name="Contextual Debt assessment",
    description=(
        "Sends a coding task to the purple agent, runs its code in a sandbox, attacks it with a red agent, "
        "computes the Contextual Integrity Score and records the battle in a signed ledger. Request: "
        '{"participants": {"purple": URL}, "config": {"task_id": ID, "seed": N}} as JSON text or data.'
    ),
    tags=["logomesh", "assessment", "code", "green"],
    # a placeholder, not a task: the engine names none (the ids are in 'logomesh tasks list')
    examples=['{"participants": {"purple": "http://127.0.0.1:9009/"}, "config": {"task_id": "<task-id>", "seed": 0}}'],
)


def green_app_factory(settings: GreenSettings) -> AppFactory:
    executor = GreenExecutor(settings)

    def make(url: str) -> Starlette:
        card = agent_card("LogoMesh green agent", "Judges code written by AI coding agents (Contextual Debt).",
                          url, [ASSESSMENT_SKILL], version=__version__)
        return build_app(card, executor)

    return make
