"""The generic MCTS on toy problems: no sandbox needed."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from logomesh.cancel import Cancelled, CancelToken
from logomesh.red.mcts import Action, Evaluation, Mcts, MctsConfig, Node, Path, walk


class Grid:
    """A tree of ``width`` actions per level, ``depth`` levels; one leaf pays 1, the rest pay noise."""

    def __init__(self, width: int = 5, depth: int = 3, winner: str = "a3/b1/c4",
                 priors: dict[str, float] | None = None, exhaust: bool = True,
                 broken: frozenset[str] = frozenset()) -> None:
        self.width, self.depth, self.winner = width, depth, winner
        self.priors = priors or {}
        self.exhaust = exhaust
        self.broken = broken
        self.evaluated: list[str] = []

    def actions(self, path: Path) -> Sequence[Action]:
        if len(path) >= self.depth:
            return []
        letter = "abc"[len(path)]
        return [Action(f"{letter}{i}", self.priors.get(f"{letter}{i}", 0.3)) for i in range(self.width)]

    def evaluate(self, path: Path, rng: random.Random) -> Evaluation:
        key = "/".join(a.id for a in path)
        self.evaluated.append(key)
        if key in self.broken:
            return Evaluation(1.0, harness_error=True)
        if key == self.winner:
            return Evaluation(1.0, exhausted=self.exhaust)
        return Evaluation(rng.random() * 0.1, exhausted=self.exhaust)


def shape(root: Node) -> list[tuple[int, int | None, str, int, float]]:
    return [(n.id, n.parent.id if n.parent else None, n.action.id if n.action else "", n.visits,
             round(n.value_sum, 9)) for n in walk(root)]


def test_same_seed_same_tree_and_other_seed_differs() -> None:
    runs = []
    for seed in (7, 7, 8):
        search = Mcts(Grid(), MctsConfig(max_iterations=40), seed=seed)
        search.run()
        runs.append(shape(search.root))
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_finds_the_winner_and_stops_when_exhausted() -> None:
    problem = Grid(width=3, depth=2, winner="a2/b1")
    result = Mcts(problem, MctsConfig(max_iterations=1000), seed=1).run()
    assert "a2/b1" in problem.evaluated
    assert result.stopped_because == "exhausted"
    assert sorted(problem.evaluated) == sorted({f"a{i}/b{j}" for i in range(3) for j in range(3)})
    assert result.best_value_history[-1] == 1.0


def test_priors_find_the_winner_sooner() -> None:
    def first_hit(priors: dict[str, float]) -> int:
        problem = Grid(width=6, depth=3, winner="a5/b4/c5", priors=priors)
        Mcts(problem, MctsConfig(max_iterations=400), seed=3).run()
        return problem.evaluated.index("a5/b4/c5")

    guided = first_hit({"a5": 0.9, "b4": 0.9, "c5": 0.9})
    blind = first_hit({})
    assert guided < blind
    assert guided <= 8


def test_revisits_non_exhausted_leaves() -> None:
    problem = Grid(width=2, depth=1, winner="a1", exhaust=False)
    Mcts(problem, MctsConfig(max_iterations=30), seed=0).run()
    assert problem.evaluated.count("a1") > problem.evaluated.count("a0") > 1


def test_progressive_widening_limits_children_early() -> None:
    search = Mcts(Grid(width=10, depth=2, exhaust=False), MctsConfig(max_iterations=2, mcts_branches=3), seed=0)
    search.run()
    assert len(search.root.children) <= 3
    search = Mcts(Grid(width=10, depth=2, exhaust=False), MctsConfig(max_iterations=200, mcts_branches=3), seed=0)
    search.run()
    assert len(search.root.children) == 10


def test_harness_errors_are_pruned_and_not_rewarded() -> None:
    problem = Grid(width=2, depth=1, winner="zz", broken=frozenset({"a0"}), exhaust=False)
    search = Mcts(problem, MctsConfig(max_iterations=20), seed=0)
    search.run()
    assert problem.evaluated.count("a0") == 1
    pruned = [n for n in walk(search.root) if n.pruned]
    assert [n.action.id for n in pruned if n.action] == ["a0"]
    assert pruned[0].value_sum == 0.0


def test_depth_is_capped_by_max_steps() -> None:
    search = Mcts(Grid(width=2, depth=3), MctsConfig(max_iterations=50, max_steps=2), seed=0)
    search.run()
    assert max(n.depth for n in walk(search.root)) == 2


def test_time_budget_stops_the_search() -> None:
    ticks = iter(range(1000))
    search = Mcts(Grid(width=9, depth=3, exhaust=False), MctsConfig(max_time_seconds=5), seed=0,
                  clock=lambda: float(next(ticks)))
    result = search.run()
    assert result.stopped_because == "time"
    assert result.iterations == 4


def test_ties_break_by_action_id() -> None:
    problem = Grid(width=4, depth=1, winner="none")
    Mcts(problem, MctsConfig(max_iterations=1), seed=0).run()
    assert problem.evaluated == ["a0"]


class CancelledMidDescent(Grid):
    """Cancels the search while it descends (asked for the actions below a first-level node): the moment a
    cancel lands between the check before an iteration and the probe that iteration would run."""

    def __init__(self, token: CancelToken) -> None:
        super().__init__(width=3, depth=3)
        self.token = token

    def actions(self, path: Path) -> Sequence[Action]:
        if len(path) == 1:
            self.token.cancel()
        return super().actions(path)


def test_a_cancelled_search_adds_no_node_and_runs_no_probe() -> None:
    token = CancelToken()
    added: list[tuple[int, bool]] = []

    class Noted:
        def node_added(self, node: Node) -> None:
            added.append((node.id, token.cancelled))

    problem = CancelledMidDescent(token)
    with pytest.raises(Cancelled):
        Mcts(problem, MctsConfig(max_iterations=50), seed=2, observer=Noted(), cancel=token).run()
    assert added == [(0, False), (1, False)]  # the root and the first-level node; nothing once cancelled
    assert problem.evaluated == []
