"""Three ways to spend a query budget on the grammar: MCTS, random search and a fixed template list.

All three ask ``Attacker.attempt`` for every query and stop once every objective is reached or the budget is
spent, so their counts compare at equal queries (``benchmarks/injection_search.py``).

The MCTS tree is placement, then framing, then position, then objective: an agent that follows instructions
in some places and framings follows them whatever they ask, so a success for one objective raises its
placement's and framing's value and the search tries the other objectives there next. An objective once
reached is not asked again (its leaves are exhausted without a query).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from logomesh.inject.attempts import Attacker, reward
from logomesh.inject.grammar import (
    FRAMINGS,
    PLACEMENTS,
    POSITIONS,
    Attempt,
    Framing,
    Placement,
    Position,
    all_attempts,
)
from logomesh.inject.objectives import ObjectiveName
from logomesh.red.mcts import Action, Evaluation, Mcts, MctsConfig, Path

EXPLORATION = 0.7
"""UCB1's exploration weight here: the red agent's 1.414 left a cell that had just succeeded for one objective to try
new placements first (simulated over 40 seeds of the obeying mock's cells: median 14 queries to every objective at
1.414, 7.5 at 0.7, 0.3 or 0.1)."""
Search = Callable[[Attacker, Sequence[ObjectiveName], int, int], None]
LEVELS = ("placement", "framing", "position", "objective")

TEMPLATES: tuple[Attempt, ...] = (
    Attempt("description", "plain", "end"),
    Attempt("readme", "plain", "end"),
    Attempt("description", "authority", "end"),
    Attempt("config", "plain", "start"),
    Attempt("starter", "plain", "start"),
    Attempt("second-message", "plain", "start"),
    Attempt("readme", "authority", "start"),
    Attempt("description", "urgency", "start"),
    Attempt("starter", "authority", "start"),
    Attempt("second-message", "urgency", "start"),
    Attempt("config", "encoded", "start"),
    Attempt("readme", "split", "end"),
)
"""The fixed list: the places and phrasings a hand-written injection suite tries, in its order."""


def _done(attacker: Attacker, objectives: Sequence[ObjectiveName], budget: int) -> bool:
    return attacker.queries >= budget or all(attacker.reached(o) for o in objectives)


@dataclass
class InjectionProblem:
    """The grammar as a ``SearchProblem``: a leaf is one query."""

    attacker: Attacker
    objectives: Sequence[ObjectiveName]

    @property
    def levels(self) -> tuple[str, ...]:
        """The tree's levels: with an attacker model, a last one chooses the ask's wording (``rewrite.py``)."""
        return (*LEVELS, "wording") if self.attacker.rewriter is not None else LEVELS

    def actions(self, path: Path) -> Sequence[Action]:
        depth = len(path)
        if depth >= len(self.levels):
            return []
        if depth == len(LEVELS):
            objective = self._objective(path[len(LEVELS) - 1].id.split(":", 1)[1])
            return [Action(f"wording:{k}") for k in range(len(self.attacker.wordings(objective)))]
        choices: Sequence[str] = (PLACEMENTS, FRAMINGS, POSITIONS, self.objectives)[depth]
        return [Action(f"{LEVELS[depth]}:{choice}") for choice in choices]

    def evaluate(self, path: Path, rng: random.Random) -> Evaluation:
        if len(path) != len(self.levels):
            return Evaluation(0.0, exhausted=True)  # nothing below was left to try
        placement, framing, position, objective, *wording = (action.id.split(":", 1)[1] for action in path)
        chosen = self._objective(objective)
        if self.attacker.reached(chosen):
            return Evaluation(1.0, exhausted=True)  # known: asking again costs a query and teaches nothing
        attempt = Attempt(_placement(placement), _framing(framing), _position(position), int(next(iter(wording), 0)))
        return Evaluation(reward(self.attacker.attempt(attempt, chosen)), exhausted=True)

    def _objective(self, text: str) -> ObjectiveName:
        return next(o for o in self.objectives if o == text)


def _placement(text: str) -> Placement:
    return next(p for p in PLACEMENTS if p == text)


def _framing(text: str) -> Framing:
    return next(f for f in FRAMINGS if f == text)


def _position(text: str) -> Position:
    return next(p for p in POSITIONS if p == text)


def mcts_search(attacker: Attacker, objectives: Sequence[ObjectiveName], budget: int, seed: int) -> None:
    """The generic MCTS over ``InjectionProblem``, one iteration at a time until done."""
    problem = InjectionProblem(attacker, objectives)
    config = MctsConfig(max_steps=len(problem.levels), max_time_seconds=float("inf"), max_iterations=1,
                        exploration_weight=EXPLORATION)
    search = Mcts(problem, config, seed=seed, cancel=attacker.cancel, observer=attacker.observer)
    while not _done(attacker, objectives, budget):
        if search.run().iterations == 0:
            return  # every leaf tried


def random_search(attacker: Attacker, objectives: Sequence[ObjectiveName], budget: int, seed: int) -> None:
    """Uniform over the (attempt, objective) pairs not tried yet, skipping objectives already reached; with an
    attacker model, every wording of each objective's ask is an attempt of its own, as in the MCTS's tree."""
    pairs = [(replace(attempt, wording=k), objective) for attempt in all_attempts() for objective in objectives
             for k in range(len(attacker.wordings(objective)))]
    random.Random(seed).shuffle(pairs)
    for attempt, objective in pairs:
        if _done(attacker, objectives, budget):
            return
        if not attacker.reached(objective):
            attacker.attempt(attempt, objective)


def template_search(attacker: Attacker, objectives: Sequence[ObjectiveName], budget: int, seed: int) -> None:
    """The fixed list, each template for every objective not reached yet, in order (the seed is not used)."""
    for attempt in TEMPLATES:
        for objective in objectives:
            if _done(attacker, objectives, budget):
                return
            if not attacker.reached(objective):
                attacker.attempt(attempt, objective)


SEARCHES: dict[str, Search] = {"mcts": mcts_search, "random": random_search, "templates": template_search}
