"""A generic, deterministic Monte Carlo Tree Search.

Nothing here knows about attacks or sandboxes: a ``SearchProblem`` supplies
the actions under a path and evaluates terminal paths. The search is classic
MCTS -- UCB1 selection over revisitable nodes, expansion under progressive
widening, random rollouts, backpropagation -- with three additions the red
agent needs:

* static priors enter each node as ``prior_visits`` virtual visits worth
  ``prior`` each, so a promising action is tried first but loses its head
  start once real visits disagree;
* a terminal evaluation may declare itself *exhausted* (nothing more to learn
  by repeating it) or a *harness error*; such leaves, and subtrees made only of
  them, are pruned from selection, and the search stops when the root is
  exhausted;
* every random choice comes from a ``random.Random`` seeded by the search seed,
  the node's path and its visit count, and ties break by action id, so the
  same problem and seed give the same tree whatever the wall clock does;
  the red agent budgets the search in iterations (``max_iterations``) and
  keeps ``max_time_seconds`` only as a backstop, so a loaded machine does not
  cut it at a different leaf.

``cancel`` (a ``CancelToken``) is checked before every iteration and every node
added; once it is cancelled, ``Cancelled`` stops the search and propagates to the caller.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from logomesh.cancel import CancelToken


@dataclass(frozen=True)
class Action:
    """One edge of the tree. ``id`` is unique among siblings and orders ties."""

    id: str
    prior: float = 0.5  # in [0, 1]: the static guess of this action's value


@dataclass(frozen=True)
class Evaluation:
    """What evaluating a terminal path taught us."""

    value: float  # reward in [0, 1]
    exhausted: bool = False  # repeating this leaf cannot teach anything new
    harness_error: bool = False  # the probe itself broke: prune, never reward


Path = tuple[Action, ...]


class SearchProblem(Protocol):
    def actions(self, path: Path) -> Sequence[Action]:
        """The actions available after ``path``; empty means ``path`` is terminal."""
        ...

    def evaluate(self, path: Path, rng: random.Random) -> Evaluation:
        """Play the terminal ``path`` once."""
        ...


@dataclass(frozen=True)
class MctsConfig:
    max_steps: int = 10  # maximum depth of a path
    max_time_seconds: float = 60.0
    mcts_branches: int = 3  # children a node may have before its visits justify more
    exploration_weight: float = 1.414
    prior_visits: float = 2.0  # how many visits a prior is worth
    widening_alpha: float = 0.5  # allowed children = branches * visits ** alpha
    max_iterations: int | None = None
    rollout_sharpness: float = 4.0  # rollouts pick an action with probability ~ prior ** sharpness


@dataclass
class Node:
    id: int
    action: Action | None
    parent: Node | None
    depth: int
    visits: int = 0
    value_sum: float = 0.0
    children: list[Node] = field(default_factory=list)
    untried: list[Action] | None = None  # None until the node's actions were asked for
    terminal: bool = False
    exhausted: bool = False
    pruned: bool = False

    @property
    def path(self) -> Path:
        steps: list[Action] = []
        node: Node | None = self
        while node is not None and node.action is not None:
            steps.append(node.action)
            node = node.parent
        return tuple(reversed(steps))

    @property
    def prior(self) -> float:
        return self.action.prior if self.action is not None else 0.5

    @property
    def mean_value(self) -> float:
        return self.value_sum / self.visits if self.visits else 0.0


class SearchObserver(Protocol):
    def node_added(self, node: Node) -> None: ...

    def node_updated(self, node: Node) -> None: ...


class _NullObserver:
    def node_added(self, node: Node) -> None:
        return None

    def node_updated(self, node: Node) -> None:
        return None


@dataclass(frozen=True)
class SearchResult:
    root: Node
    iterations: int
    nodes: int
    best_value_history: tuple[float, ...]  # best leaf value seen after each iteration
    stopped_because: str  # "exhausted" | "time" | "iterations"


def path_seed(seed: int, path: Path, salt: int) -> int:
    """A stable 64-bit seed for a random choice made at ``path``."""
    text = f"{seed}|{'/'.join(a.id for a in path)}|{salt}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


class Mcts:
    def __init__(
        self,
        problem: SearchProblem,
        config: MctsConfig = MctsConfig(),
        *,
        seed: int = 0,
        observer: SearchObserver | None = None,
        clock: Callable[[], float] = time.monotonic,
        cancel: CancelToken = CancelToken.never(),
    ) -> None:
        self.problem = problem
        self.cancel = cancel
        self.config = config
        self.seed = seed
        self.observer: SearchObserver = observer or _NullObserver()
        self.clock = clock
        self.root = Node(id=0, action=None, parent=None, depth=0)
        self.node_count = 1
        self.observer.node_added(self.root)

    # -- the loop ------------------------------------------------------------------------------------
    def run(self) -> SearchResult:
        config = self.config
        deadline = self.clock() + config.max_time_seconds
        history: list[float] = []
        best = 0.0
        iterations = 0
        stopped = "exhausted"
        while True:
            self.cancel.check()
            self._refresh(self.root)
            if self.root.exhausted:
                stopped = "exhausted"
                break
            if config.max_iterations is not None and iterations >= config.max_iterations:
                stopped = "iterations"
                break
            if self.clock() >= deadline:
                stopped = "time"
                break
            value = self.iterate()
            iterations += 1
            best = max(best, value)
            history.append(best)
        return SearchResult(self.root, iterations, self.node_count, tuple(history), stopped)

    def iterate(self) -> float:
        """One selection, expansion, rollout and backpropagation; returns the leaf value."""
        node = self._select(self.root)
        if not node.terminal and not node.exhausted:
            child = self._expand(node)
            if child is not None:
                node = child
        leaf = self._rollout(node)
        rng = random.Random(path_seed(self.seed, leaf.path, leaf.visits))
        evaluation = self.problem.evaluate(leaf.path, rng)
        value = 0.0 if evaluation.harness_error else min(1.0, max(0.0, evaluation.value))
        if evaluation.harness_error:
            leaf.pruned = True
            leaf.exhausted = True
        elif evaluation.exhausted:
            leaf.exhausted = True
        self._backpropagate(leaf, value)
        return value

    # -- phases --------------------------------------------------------------------------------------
    def _actions(self, node: Node) -> list[Action]:
        if node.untried is None:
            if node.depth >= self.config.max_steps:
                actions: list[Action] = []
            else:
                actions = sorted(self.problem.actions(node.path), key=lambda a: (-a.prior, a.id))
            node.untried = actions
            node.terminal = not actions
        return node.untried

    def _allowed_children(self, node: Node) -> int:
        config = self.config
        widened: float = config.mcts_branches * math.pow(max(1, node.visits), config.widening_alpha)
        return max(config.mcts_branches, math.ceil(widened))

    def _can_expand(self, node: Node) -> bool:
        return bool(self._actions(node)) and len(node.children) < self._allowed_children(node)

    def _live(self, node: Node) -> list[Node]:
        return [c for c in node.children if not c.exhausted]

    def _select(self, node: Node) -> Node:
        """Descend by UCB1; an unexpanded action competes as a child with no real visits yet."""
        while True:
            untried = self._actions(node)
            if node.terminal:
                return node
            live = self._live(node)
            if not live:
                return node
            best = max(live, key=lambda c: (self.ucb(c, node), _neg_id(c)))
            if self._can_expand(node) and self._ucb_untried(untried[0], node) >= self.ucb(best, node):
                return node
            node = best

    def ucb(self, child: Node, parent: Node) -> float:
        config = self.config
        virtual = config.prior_visits
        mean = (child.value_sum + child.prior * virtual) / (child.visits + virtual)
        explore = config.exploration_weight * math.sqrt(math.log(parent.visits + 1) / (child.visits + virtual))
        return mean + explore

    def _ucb_untried(self, action: Action, parent: Node) -> float:
        config = self.config
        explore = config.exploration_weight * math.sqrt(math.log(parent.visits + 1) / config.prior_visits)
        return action.prior + explore

    def _expand(self, node: Node) -> Node | None:
        untried = self._actions(node)
        if not untried or len(node.children) >= self._allowed_children(node):
            return None
        return self._add_child(node, untried.pop(0))

    def _add_child(self, node: Node, action: Action) -> Node:
        self.cancel.check()  # an iteration adds a node a level as it descends: a cancelled search adds none
        child = Node(id=self.node_count, action=action, parent=node, depth=node.depth + 1)
        self.node_count += 1
        node.children.append(child)
        self.observer.node_added(child)
        return child

    def _rollout(self, node: Node) -> Node:
        """Descend at random (weighted by prior) to a terminal, materialising the path in the tree."""
        while True:
            untried = self._actions(node)
            if node.terminal:
                return node
            live = self._live(node)
            candidates: list[tuple[Node | None, Action]] = [(c, c.action) for c in live if c.action is not None]
            candidates += [(None, a) for a in untried]
            if not candidates:
                return node  # everything below is exhausted: evaluate as a dead end
            candidates.sort(key=lambda pair: pair[1].id)
            rng = random.Random(path_seed(self.seed, node.path, node.visits))
            weights = [0.001 + pair[1].prior ** self.config.rollout_sharpness for pair in candidates]
            chosen, action = rng.choices(candidates, weights=weights, k=1)[0]
            if chosen is None:
                untried.remove(action)
                chosen = self._add_child(node, action)
            node = chosen

    def _backpropagate(self, leaf: Node, value: float) -> None:
        node: Node | None = leaf
        while node is not None:
            node.visits += 1
            node.value_sum += value
            self._refresh(node)
            self.observer.node_updated(node)
            node = node.parent

    def _refresh(self, node: Node) -> None:
        """An inner node is exhausted once nothing is untried and every child is exhausted."""
        if node.exhausted or node.untried is None or node.untried:
            return
        if node.terminal:
            return
        if all(c.exhausted for c in node.children):
            node.exhausted = True


def _neg_id(node: Node) -> tuple[int, ...]:
    """Ties break toward the smaller action id: invert the id's code points for ``max``."""
    text = node.action.id if node.action is not None else ""
    return (*(-ord(ch) for ch in text), 0)


def walk(root: Node) -> list[Node]:
    """Every node, parents before children, children in creation order."""
    out: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out
